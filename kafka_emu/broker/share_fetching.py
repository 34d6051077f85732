"""The broker side of share-group delivery: the log read for a share-partition, the wake-up of
waiting ShareFetches, and the events of the pure ShareDelivery (coordinator/share/delivery.py).

Theory of operation. ``Broker.share_delivery`` (made on first use) is a ``ShareDelivery`` whose
group configs come from the group's share settings (group configs over the broker's
group.share.* defaults). A ShareFetch reads each share-partition's log from its next fetch
offset up to the high watermark (the last stable offset under read_committed), describes the
batches as ``LogBatch`` (control batches and aborted transactions' batches are never delivered)
and acquires from them; the response carries only the stored batches holding acquired records.

A ShareFetch with nothing to acquire waits (max_wait_ms, wall time, as Fetch) until a Produce
appends or records become available again: a release, a lock expiry, a member leaving. Those
set ``ShareFetching.released``. Lock expiry runs on the broker's timer task, so advancing the
emulator's clock expires locks at once.
"""

from __future__ import annotations

from typing import Any

import trio

from ..coordinator.share.delivery import ShareDelivery
from ..coordinator.share.partition_state import DeliveryConfig, LogBatch
from ..log.batch import parse_header


def _config_lookup(broker: Any):
    def config_for(group_id: str) -> DeliveryConfig:
        s = broker.resource_configs.share_settings(group_id)
        return DeliveryConfig(
            record_lock_duration_ms=s.record_lock_duration_ms,
            delivery_count_limit=s.delivery_count_limit,
            max_record_locks=s.partition_max_record_locks,
            auto_offset_reset="earliest" if s.auto_offset_reset == "earliest" else "latest",
            isolation_level=s.isolation_level)
    return config_for


def _defaults(config: Any) -> DeliveryConfig:
    share = config.coordinator.share  # group.share.* (coordinator/share/config.py)
    return DeliveryConfig(record_lock_duration_ms=share.record_lock_duration_ms,
                          delivery_count_limit=share.delivery_count_limit,
                          max_record_locks=share.partition_max_record_locks)


class ShareFetching:
    """Per broker: the ShareDelivery, and the event ShareFetches wait on for released records."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        config = broker.config
        self.delivery = ShareDelivery(
            defaults=_defaults(config),
            max_sessions=config.coordinator.share.max_share_sessions,
            config_for=_config_lookup(broker))
        self.released = trio.Event()
        # share members fenced or left and share groups deleted, kept by the coordinator for us
        broker.coordinator.track_share_departures()

    def drain_departures(self) -> None:
        """Forget deleted groups' share-partitions. A member leaving or fenced by the group
        coordinator changes nothing here: in Kafka the coordinator never reaches the share
        sessions, which end with the client's final epoch or its connection (ShareSessionCache,
        whose end of a session is what notifies ShareGroupListener.onMemberLeave and releases
        the records). librdkafka's close sends its leave heartbeat before its final
        acknowledgements, and those must still find the session."""
        coordinator = self.broker.__dict__.get("coordinator")
        if coordinator is None:
            return
        for group_id, member_id, _ in coordinator.take_share_departures():
            if member_id is None:
                self.delivery.group_deleted(group_id)

    # -- events and wake-ups -----------------------------------------------------------------
    def publish(self, events) -> None:
        """Hand delivery events to the observer seam; wake waiting fetches on any release."""
        if not events:
            return
        # a release makes records available; an acknowledgement or archive may move the start
        # offset and so make room under max.record.locks: either may serve a waiting fetch
        if any(e.kind != "acquire" for _, e in events):
            self.released.set()
            self.released = trio.Event()
        emit = self.broker.observer
        if emit is not None:  # nothing is built while nobody listens
            from .events import ShareRecordsChanged
            now = self.broker.now_ms()
            names: dict = {}
            for (group_id, topic_id, index), e in events:
                if topic_id not in names:
                    info = self.broker.topics.lookup_id(topic_id)
                    names[topic_id] = info.name if info is not None else None
                emit(ShareRecordsChanged(
                    at_ms=now, group_id=group_id, topic=names[topic_id], partition=index,
                    action=e.kind, member_id=e.member_id or None, first_offset=e.first_offset,
                    last_offset=e.last_offset, delivery_count=e.delivery_count,
                    ack_type=e.ack_type))

    def locks_changed(self) -> None:
        """A lock was taken or renewed: the timer task may have to wake sooner."""
        deadline = self.delivery.next_deadline()
        waits_for = self.broker._timer_waits_for
        if deadline is not None and (waits_for is None or deadline < waits_for):
            self.broker.timers_changed.set()

    def leader_changed(self, topic_id, partition: int) -> None:
        """A partition's leader moved (cluster_moves.py): its share-partitions reload."""
        self.publish(self.delivery.leader_changed(topic_id, partition))

    def expire(self, now_ms: int) -> None:
        self.drain_departures()
        self.publish(self.delivery.expire(now_ms))

    def connection_closed(self, connection_key: int) -> None:
        self.publish(self.delivery.closed_connection(connection_key))

    def member_left(self, group_id: str, member_id: str) -> None:
        self.publish(self.delivery.member_left(group_id, member_id))

    # -- the log ---------------------------------------------------------------------------
    def read(self, log: Any, sp: Any, max_bytes: int, isolation_level: str
             ) -> tuple[list[bytes], list[LogBatch], int]:
        """The stored batches from ``sp``'s next fetch offset, described; and the read limit
        (HWM, or LSO under read_committed)."""
        committed = isolation_level == "read_committed"
        limit = log.last_stable_offset if committed else log.high_watermark
        if not sp.initialised:
            sp.initialise(log.log_start_offset, limit)
        start = max(sp.next_fetch_offset(), log.log_start_offset)
        if start >= limit:
            return [], [], limit
        aborted = []
        if committed:
            raw, _, _, aborted = log.read_committed(start, max_bytes, min_one=True)
        else:
            raw, _, _ = log.read_sized(start, max_bytes, min_one=True)
        described = []
        for data in raw:
            h = parse_header(data)
            skip = h.is_control or (committed and h.is_transactional and any(
                a.producer_id == h.producer_id and a.first_offset <= h.base_offset <= a.last_offset
                for a in aborted))
            described.append(LogBatch(h.base_offset, h.last_offset, skip))
        return raw, described, limit


def pick_batches(raw: list[bytes], described: list[LogBatch], acquired) -> list[bytes]:
    """The stored batches holding at least one acquired offset, in log order."""
    out = []
    runs = list(acquired)
    i = 0
    for data, b in zip(raw, described):
        while i < len(runs) and runs[i].last_offset < b.base_offset:
            i += 1
        if i < len(runs) and runs[i].first_offset <= b.last_offset:
            out.append(data)
    return out


def share_group_error(ctx, group_id: str, *, must_be_empty: bool):
    """(code, message) refusing an offsets request on ``group_id``, or None: not this broker's
    group (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS in a cluster), no such share group
    (GROUP_ID_NOT_FOUND), a group of another type, or members present when the request needs
    an empty group (NON_EMPTY_GROUP)."""
    from ..errors import ErrorCode
    broker = ctx.broker
    if broker.cluster.multi:
        error = broker.cluster_moves.group_error(ctx.connection.node_id, group_id)
        if error is not None:
            return error, None
    coordinator = broker.coordinator
    kind = coordinator.group_type(group_id)
    if kind is None:
        return ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found."
    if kind != "share":
        return ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group."
    if must_be_empty and coordinator.share_group_state(group_id) != "Empty":
        return ErrorCode.NON_EMPTY_GROUP, f"Share group {group_id} is not empty."
    return None


def lag_of(sp, log) -> int:
    """KIP-1226 share-partition lag: records from the start offset to the high watermark not
    yet acknowledged or archived; -1 while the start offset is not fixed."""
    if sp is None or not sp.initialised:
        return -1
    finished = sum(1 for r in sp.records.values() if r.state.name in ("ACKNOWLEDGED", "ARCHIVED"))
    return max(log.high_watermark - sp.start_offset - finished, 0)


def leader_of(ctx, topic_id, index: int, log) -> tuple[int, int, object | None]:
    """(leader id, leader epoch, the leader's Node if this broker is not it) of a partition:
    what CurrentLeader and NodeEndpoints tell a share consumer (KIP-951's redirect)."""
    cluster = ctx.broker.cluster
    if not cluster.multi:
        return cluster.node(ctx.connection.node_id).node_id, log.leader_epoch, None
    info = ctx.broker.topics.lookup_id(topic_id)
    placement = cluster.placement(topic_id, info.name, index)
    me = cluster.node(ctx.connection.node_id).node_id
    other = cluster.nodes.get(placement.leader) if placement.leader != me else None
    return placement.leader, placement.leader_epoch, other


def sessions_for(ctx):
    """The share sessions of the broker the request came to (one per broker in a cluster)."""
    multi = ctx.broker.cluster.multi
    return ctx.broker.share_fetching.delivery.sessions_at(
        ctx.connection.node_id if multi else None)
