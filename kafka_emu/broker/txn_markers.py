"""Completing a transaction: the transaction coordinator's ``WriteMarkers`` carried out.

Kafka's coordinator hands the markers to its TransactionMarkerChannelManager, which sends
WriteTxnMarkers to every partition leader; each writes a COMMIT/ABORT control batch, and for a
``__consumer_offsets`` partition the group coordinator also completes (commit) or drops (abort)
the producer's pending transactional offsets. Once every partition has answered, the
coordinator writes CompleteCommit/CompleteAbort. Here all of it is one synchronous step on the
shared state: a marker per partition through the partition log, the group completion through
the group coordinator, then ``markers_written``.

A partition that no longer exists (its topic deleted) is skipped, as Kafka's marker channel
drops markers for unknown partitions; a marker the log refuses (a newer epoch already there,
a fenced coordinator) is skipped as Kafka's WriteTxnMarkers completion handler does.

The two calls into the log and the group side are in ``_append_marker`` and
``_complete_group_offsets`` only (see notes/wave3/interfaces.md).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from ..errors import KafkaError

log = logging.getLogger(__name__)


def write_all(broker, markers: Iterable[Any], now_ms: int) -> None:
    for one in markers:
        write_markers(broker, one, now_ms)


def write_markers(broker, markers: Any, now_ms: int) -> None:
    """Carry out one ``WriteMarkers`` (None: nothing to do) and complete the transaction."""
    if markers is None:
        return
    for topic, partition in markers.partitions:
        _append_marker(broker, topic, partition, markers, now_ms)
    for group_id in markers.groups:
        _complete_group_offsets(broker, group_id, markers, now_ms)
    md = broker.transactions.get(markers.transactional_id)
    started = md.start_ms if md is not None else -1
    broker.transactions.markers_written(markers.transactional_id, now_ms)
    broker.timers_changed.set()
    emit = broker.observation.emit
    if emit is not None:  # built only while somebody listens (broker/events.py)
        from .events import TransactionEnded
        emit(TransactionEnded(
            at_ms=now_ms, transactional_id=markers.transactional_id,
            producer_id=markers.producer_id, producer_epoch=markers.producer_epoch,
            committed=markers.committed, cause=markers.cause, partitions=markers.partitions,
            groups=markers.groups,
            duration_ms=now_ms - started if started >= 0 and markers.partitions else -1))


def _append_marker(broker, topic: str, partition: int, markers: Any, now_ms: int) -> None:
    catalogue = broker.topics.catalogue
    found = catalogue.get(topic)
    if found is None or not 0 <= partition < len(found.partitions):
        return
    part = found.partition(partition)
    append = getattr(part, "append_marker", None)
    if append is None:  # a log without transactions (TXN-B's side not there yet)
        return
    try:
        append(producer_id=markers.producer_id, producer_epoch=markers.producer_epoch,
               coordinator_epoch=markers.coordinator_epoch, commit=markers.committed,
               now_ms=now_ms, transaction_version=markers.transaction_version)
    except KafkaError as exc:
        log.info("marker for %s-%d of %s not written: %s", topic, partition,
                 markers.transactional_id, exc.code.name)
    broker.topics.notify_append()


def _complete_group_offsets(broker, group_id: str, markers: Any, now_ms: int) -> None:
    """The group side of the marker: the producer's pending offsets in the group become
    visible (commit) or are dropped (abort)."""
    try:
        from ..coordinator import CompleteTxnOffsets  # type: ignore[attr-defined]
    except ImportError:  # TXN-B's command not there yet: no pending offsets exist either
        return
    broker.route(broker.coordinator.handle(CompleteTxnOffsets(
        request_id=-1, group_id=group_id, producer_id=markers.producer_id,
        producer_epoch=markers.producer_epoch, committed=markers.committed), now_ms))
