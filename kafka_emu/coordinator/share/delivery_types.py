"""The values of share-group delivery (KIP-932): record states and acknowledge types by their
Kafka ids, a group's delivery config, what the broker tells about a log batch, acquired runs,
acknowledgement batches, the events of every change, and one in-flight record. The state
machine that uses them is partition_state.py."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import NamedTuple

import attrs

from ...errors import ErrorCode


class RecordState(enum.IntEnum):
    """Kafka's RecordState ids (as in the share-group state topic)."""
    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AckType(enum.IntEnum):
    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4  # ShareFetch / ShareAcknowledge v2 (KIP-1222): keep the lock, restart its clock


FINISHED = (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


@attrs.frozen(kw_only=True)
class DeliveryConfig:
    """The effective share configs of one group (broker defaults overridden by group configs)."""
    record_lock_duration_ms: int = 30_000  # group.share.record.lock.duration.ms
    delivery_count_limit: int = 5  # group.share.delivery.count.limit
    max_record_locks: int = 2000  # group.share.partition.max.record.locks
    auto_offset_reset: str = "latest"  # share.auto.offset.reset: latest | earliest
    isolation_level: str = "read_uncommitted"  # share.isolation.level


class LogBatch(NamedTuple):
    """What the broker tells about one stored batch: its offsets, and whether it is never
    delivered (a control batch, or an aborted transaction's batch under read_committed)."""
    base_offset: int
    last_offset: int
    skip: bool = False


class Acquired(NamedTuple):
    """One AcquiredRecords entry of a ShareFetch response."""
    first_offset: int
    last_offset: int
    delivery_count: int


class AckBatch(NamedTuple):
    """One AcknowledgementBatch: ``types`` has one type for all offsets, or one per offset."""
    first_offset: int
    last_offset: int
    types: tuple[int, ...]


@attrs.frozen(kw_only=True)
class DeliveryEvent:
    """acquire / acknowledge / release / lock_expired / archive, for a run of offsets."""
    kind: str
    member_id: str
    first_offset: int
    last_offset: int
    delivery_count: int = 0
    ack_type: int | None = None


class InFlight:
    __slots__ = ("state", "delivery_count", "member_id", "lock", "batch")

    def __init__(self, state: RecordState, delivery_count: int = 0, member_id: str = "",
                 lock: int = 0, *, batch: int = -1) -> None:
        self.state = state
        self.delivery_count = delivery_count
        self.member_id = member_id
        self.lock = lock  # id of the acquisition lock holding it; 0: none
        self.batch = batch  # the first offset of its in-flight batch (Kafka's cachedState key)

    def __repr__(self) -> str:
        return (f"InFlight({self.state.name}, delivery_count={self.delivery_count}, "
                f"member_id={self.member_id!r})")


class AckError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def _runs(events: Iterable[tuple[str, str, int, int, int | None]]) -> list[DeliveryEvent]:
    """Merge per-offset (kind, member, offset, count, ack) facts into runs of offsets."""
    out: list[DeliveryEvent] = []
    key = None
    first = last = 0
    for kind, member, offset, count, ack in events:
        k = (kind, member, count, ack)
        if k == key and offset == last + 1:
            last = offset
            continue
        if key is not None:
            out.append(DeliveryEvent(kind=key[0], member_id=key[1], first_offset=first,
                                     last_offset=last, delivery_count=key[2], ack_type=key[3]))
        key, first, last = k, offset, offset
    if key is not None:
        out.append(DeliveryEvent(kind=key[0], member_id=key[1], first_offset=first,
                                 last_offset=last, delivery_count=key[2], ack_type=key[3]))
    return out


def _sorted_runs(facts) -> list[DeliveryEvent]:
    return _runs(sorted(facts, key=lambda f: (f[0], f[1], f[2])))
