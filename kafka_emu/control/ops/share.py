"""Share groups' delivery state: what each share-partition has in flight, and locks run out now.

``share_partitions`` shows every share-partition of a group (start and end offsets, each
in-flight record's state, delivery count, holder and lock deadline); ``expire_share_locks`` lets
the acquisition locks of a group (or of one member) run out at once, as if their
``share.record.lock.duration.ms`` had passed: the records go back to AVAILABLE, or to ARCHIVED
at the delivery count limit, and waiting ShareFetches are woken. A group with no share-partition
is 404.
"""

from __future__ import annotations

from typing import TypedDict

import attrs

from ..operations import ControlError, operation


class InFlightRecord(TypedDict):
    offset: int
    state: str  # AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED
    delivery_count: int
    member_id: str | None  # the holder while ACQUIRED
    lock_deadline_ms: int | None  # when the acquisition lock runs out, while ACQUIRED


class SharePartitionView(TypedDict):
    topic: str | None  # None: the topic was deleted
    topic_id: str
    partition: int
    start_offset: int  # -1 until the first fetch fixes it (share.auto.offset.reset)
    end_offset: int
    in_flight: list[InFlightRecord]


class LocksExpired(TypedDict):
    released: int  # records made AVAILABLE again
    archived: int  # records archived at the delivery count limit


@attrs.frozen(kw_only=True)
class ShareGroupParams:
    group_id: str


@attrs.frozen(kw_only=True)
class ExpireLocksParams:
    group_id: str
    member_id: str | None = None  # only this member's locks; all of the group's if absent


def _delivery(broker, group_id: str):
    share = broker.__dict__.get("share_fetching")
    partitions = share.delivery.of_group(group_id) if share is not None else {}
    if not partitions:
        raise ControlError(f"share group {group_id!r} has no share-partition", 404)
    return share, partitions


@operation("GET", "/share-groups/{group_id}/partitions", ShareGroupParams)
def share_partitions(broker, params: ShareGroupParams) -> list[SharePartitionView]:
    """Every share-partition of the group: start/end offsets and each in-flight record's state,
    delivery count, holder and lock deadline."""
    _, partitions = _delivery(broker, params.group_id)
    out = []
    for (_, topic_id, index), sp in sorted(partitions.items(), key=lambda kv: (str(kv[0][1]),
                                                                               kv[0][2])):
        info = broker.topics.lookup_id(topic_id)
        records = []
        for offset in sorted(sp.records):
            rec = sp.records[offset]
            records.append({"offset": offset, "state": rec.state.name,
                            "delivery_count": rec.delivery_count,
                            "member_id": rec.member_id or None,
                            "lock_deadline_ms": sp.lock_deadline(offset)})
        out.append({"topic": info.name if info is not None else None, "topic_id": str(topic_id),
                    "partition": index, "start_offset": sp.start_offset,
                    "end_offset": sp.end_offset, "in_flight": records})
    return out


@operation("POST", "/share-groups/{group_id}/expire-locks", ExpireLocksParams)
def expire_share_locks(broker, params: ExpireLocksParams) -> LocksExpired:
    """Let the group's acquisition locks (one member's, if named) run out now: their records
    become AVAILABLE again, or ARCHIVED at the delivery count limit."""
    share, _ = _delivery(broker, params.group_id)
    events = share.delivery.expire_locks_now(params.group_id, params.member_id)
    share.publish(events)
    count = {"lock_expired": 0, "archive": 0}
    for _, e in events:
        if e.kind in count:
            count[e.kind] += e.last_offset - e.first_offset + 1
    return {"released": count["lock_expired"], "archived": count["archive"]}
