"""TxnOffsetCommit and the end of a transaction on the group side (KIP-98, KIP-447).

Theory of operation
-------------------
A transactional producer commits the offsets it consumed inside its transaction with
TxnOffsetCommit, sent to the group coordinator. Kafka writes them to ``__consumer_offsets`` as
transactional records of that producer; until the transaction's marker reaches that partition
they are *pending*: kept apart per producer id (``OffsetStore.pending``), invisible to
OffsetFetch, and a fetch with ``require_stable`` (v7+) gets UNSTABLE_OFFSET_COMMIT for any
partition that has some (``OffsetStore.has_pending``). ``CompleteTxnOffsets`` is the marker: on
commit the producer's pending offsets in the group become its committed offsets (observed as
OffsetsCommitted, as any commit), unless the committed offset was written after them (a plain
commit since, or another producer's later transactional offset committed first: Kafka keeps
the newer ``__consumer_offsets`` record); a delete of the partition drops them; on abort they
are dropped.

Validation, as Kafka's OffsetMetadataManager.validateTransactionalOffsetCommit:

* an unknown group: a negative generation creates a "simple" classic group, else
  ILLEGAL_GENERATION;
* a classic group (ClassicGroup.validateOffsetCommit with isTransactional): Dead is
  COORDINATOR_NOT_AVAILABLE; a negative generation in an Empty group passes; with a generation,
  member id or instance id (v3+) the member must exist (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID)
  and the generation match (ILLEGAL_GENERATION) -- KIP-447's zombie fencing. Unlike OffsetCommit,
  no member fields in a non-empty group is accepted (v0-2 carry none) and CompletingRebalance is
  not REBALANCE_IN_PROGRESS;
* a consumer (KIP-848) group (ConsumerGroup.validateOffsetCommit, consumer/commit_fence.py): a
  negative epoch passes while it has no members, and so does a commit without any member fields;
  else the member must exist (UNKNOWN_MEMBER_ID) and the generation must be its member epoch, or
  an older one for partitions it was assigned at that epoch or before and still holds (KIP-1251,
  Kafka 4.3); a refusal, STALE_MEMBER_EPOCH in Kafka's check, is answered ILLEGAL_GENERATION.

Before that the producer: an epoch older than the latest one written for that producer id is
INVALID_PRODUCER_EPOCH (in Kafka, the ``__consumer_offsets`` partition's producer state refuses
the append). Metadata over ``offset.metadata.max.bytes`` is OFFSET_METADATA_TOO_LARGE per
partition. KIP-890 verification (is the group in the producer's transaction?) is the broker's
job, before the command is submitted (broker/handlers/txn_offset_commit.py).
"""

from __future__ import annotations

from typing import Hashable

import attrs

from kafka_emu.errors import ErrorCode

from .commands import CommitOffset
from .consumer.commit_fence import validate_commit
from .core import Core
from .events import OffsetsCommitted
from .offsets import _java_length
from .offsets_store import StoredOffset
from .results import OffsetCommitResult, OperatorResult, PartitionError
from .state import GroupState

API = "TxnOffsetCommit"
COMPLETE = "CompleteTxnOffsets"


@attrs.frozen(kw_only=True)
class TxnOffsetCommit:
    request_id: Hashable
    group_id: str
    producer_id: int
    producer_epoch: int
    offsets: tuple[CommitOffset, ...]
    generation_id: int = -1  # v3+ (KIP-447); older versions send none
    member_id: str = ""
    group_instance_id: str | None = None


@attrs.frozen(kw_only=True)
class CompleteTxnOffsets:
    """The transaction's marker reached the group's offsets: make ``producer_id``'s pending
    offsets in ``group_id`` committed (``committed``) or drop them. Unknown group, or nothing
    pending: nothing happens (Kafka's replayEndTransactionMarker ignores it)."""

    request_id: Hashable
    group_id: str
    producer_id: int
    committed: bool
    producer_epoch: int = -1  # the marker's epoch (TV2 bumps it): later commits need at least it


def handle_txn_commit(core: Core, cmd: TxnOffsetCommit) -> None:
    error = _validate(core, cmd)
    if error is not None:
        return core.reply(cmd.request_id, API, cmd.group_id, OffsetCommitResult(partitions=tuple(
            PartitionError(topic=o.topic, partition=o.partition, error=error)
            for o in cmd.offsets)))
    store = core.offsets
    store.producer_epochs[cmd.producer_id] = cmd.producer_epoch
    now = core.now
    max_metadata = core.config.offset_metadata_max_bytes
    results = []
    for o in cmd.offsets:
        if o.metadata is not None and _java_length(o.metadata) > max_metadata:
            results.append(PartitionError(topic=o.topic, partition=o.partition,
                                          error=ErrorCode.OFFSET_METADATA_TOO_LARGE))
            continue
        store.put_pending(cmd.producer_id, cmd.group_id, o.topic, o.partition, StoredOffset(
            offset=o.offset, leader_epoch=o.leader_epoch,
            metadata=o.metadata if o.metadata is not None else "", commit_timestamp_ms=now))
        results.append(PartitionError(topic=o.topic, partition=o.partition, error=ErrorCode.NONE))
    core.reply(cmd.request_id, API, cmd.group_id, OffsetCommitResult(partitions=tuple(results)))


def _validate(core: Core, cmd: TxnOffsetCommit) -> ErrorCode | None:
    current = core.offsets.producer_epochs.get(cmd.producer_id)
    if current is not None and cmd.producer_epoch < current:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    consumer_group = core.consumer_groups.get(cmd.group_id)
    if consumer_group is not None:
        max_metadata = core.config.offset_metadata_max_bytes
        return validate_commit(
            consumer_group, member_id=cmd.member_id, instance_id=cmd.group_instance_id,
            epoch=cmd.generation_id, transactional=True,
            partitions=[(o.topic, o.partition) for o in cmd.offsets
                        if o.metadata is None or _java_length(o.metadata) <= max_metadata])
    group = core.groups.get(cmd.group_id)
    if group is None:
        if cmd.generation_id < 0:
            core.create_group(cmd.group_id)  # a simple group, as for OffsetCommit
            return None
        return ErrorCode.ILLEGAL_GENERATION
    if group.state is GroupState.DEAD:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if cmd.generation_id < 0 and group.state is GroupState.EMPTY:
        return None
    if cmd.generation_id >= 0 or cmd.member_id != "" or cmd.group_instance_id is not None:
        error = group.validate_member(cmd.member_id, cmd.group_instance_id)
        if error is not None:
            return error
        if cmd.generation_id != group.generation:
            return ErrorCode.ILLEGAL_GENERATION
    return None


def handle_complete(core: Core, cmd: CompleteTxnOffsets) -> None:
    store = core.offsets
    if cmd.producer_epoch >= 0:
        known = store.producer_epochs.get(cmd.producer_id, -1)
        store.producer_epochs[cmd.producer_id] = max(known, cmd.producer_epoch)
    pending = store.take_pending(cmd.producer_id, cmd.group_id)
    group_id = cmd.group_id
    exists = group_id in core.groups or group_id in core.consumer_groups
    written = []
    if cmd.committed and exists:
        for (topic, partition), entry in pending.items():
            if store.wins(group_id, topic, partition, entry):  # else a newer one stays
                store.commit_pending(group_id, topic, partition, entry)
                written.append((topic, partition, entry.value.offset))
    if written and core.observing:  # aborted ones were never visible: nothing to observe
        core.emit(OffsetsCommitted(at_ms=core.now, group_id=group_id, member_id="",
                                   generation_id=-1, offsets=tuple(written)))
    core.reply(cmd.request_id, COMPLETE, group_id, OperatorResult(
        error=ErrorCode.NONE,
        detail=f"{len(written) if cmd.committed else len(pending)} pending offsets "
               f"{'committed' if cmd.committed else 'dropped'}"))


def unstable(core: Core, group_id: str, topic: str, partition: int) -> bool:
    """OffsetFetch with require_stable: does this partition have pending transactional
    offsets (answered UNSTABLE_OFFSET_COMMIT)?"""
    return core.offsets.has_pending(group_id, topic, partition)
