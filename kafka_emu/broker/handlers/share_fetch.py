"""ShareFetch v1-2 (KIP-932): v1 MaxRecords / BatchSize and AcquisitionLockTimeoutMs (v0, Kafka
4.0's early access, is gone as in 4.1); v2 ShareAcquireMode (1, record-limit: never more than
MaxRecords, a batch split if need be; 0, batch-optimised: new batches whole) and IsRenewAck
(acknowledge type 4, Renew: the records stay acquired with a fresh lock; a renew-only request
fetches nothing). BatchSize cuts new records into in-flight batches at log batch boundaries
(what throttled redelivery halves); acquired ranges are reported merged.

Order of work, as Kafka's KafkaApis + SharePartitionManager: the share session first (epoch 0
opens, N continues, -1 closes: SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH,
SHARE_SESSION_LIMIT_REACHED, INVALID_REQUEST for acknowledgements on epoch 0 -- all top-level
errors), then the piggy-backed acknowledgements (per-partition AcknowledgeErrorCode:
INVALID_RECORD_STATE, INVALID_REQUEST, UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION), then the
fetch from every partition of the session: max_records across the response (exceeded only to
end on a batch boundary), max_bytes, and until min_bytes are acquired the request waits up to
max_wait_ms for a Produce or a release (share_fetching.py). A final (-1) request only
acknowledges, then releases what the member still holds. Group membership is not checked, as
Kafka's ShareFetch does not (the spec has no UNKNOWN_MEMBER_ID); a member id must be present.
"""

from __future__ import annotations

import trio

from ...coordinator.share.partition_state import AckBatch
from ...coordinator.share.sessions import SessionError
from ...errors import ErrorCode, KafkaError
from ...protocol.messages.share_fetch import (API, AcquiredRecords, LeaderIdAndEpoch,
                                              NodeEndpoint, PartitionData,
                                              ShareFetchableTopicResponse, ShareFetchResponse)
from . import Handler
from .share_acknowledge import apply_acks, share_enabled
from ..share_fetching import leader_of, pick_batches, sessions_for
from ._common import node_endpoint


RECORD_LIMIT = 1


def renew_supported(version: int) -> bool:
    return version >= 2


def acquire_mode_supported(version: int) -> bool:
    return version >= 2


def _acks_of(request) -> dict[tuple, list[AckBatch]]:
    acks: dict[tuple, list[AckBatch]] = {}
    for t in request.topics:
        for p in t.partitions:
            if p.acknowledgement_batches:
                acks[(t.topic_id, p.partition_index)] = [
                    AckBatch(b.first_offset, b.last_offset, tuple(b.acknowledge_types))
                    for b in p.acknowledgement_batches]
    return acks


class _Fetch:
    """Passes over the session's partitions (one, or more while a long poll waits): what each
    acquired, its errors, and its acknowledgement outcome."""

    def __init__(self, ctx, request, group_id: str, member_id: str, partitions) -> None:
        self.ctx, self.request = ctx, request
        self.group_id, self.member_id = group_id, member_id
        self.partitions = partitions
        self.errors: dict[tuple, tuple[ErrorCode, str | None]] = {}
        self.acks: dict[tuple, tuple[ErrorCode, str | None]] = {}
        self.got: dict[tuple, tuple[list, list]] = {}  # key -> (stored batches, acquired runs)
        self.leaders: dict[tuple, LeaderIdAndEpoch] = {}
        self.endpoints: dict[int, object] = {}  # leaders named by NOT_LEADER_OR_FOLLOWER
        self.acquired = 0
        self.size = 0
        # ShareAcquireMode (v2, KIP-1206): 1 is record-limit, 0 batch-optimised
        self.record_limit = (acquire_mode_supported(ctx.version)
                             and request.share_acquire_mode == RECORD_LIMIT)

    def run(self) -> None:
        broker = self.ctx.broker
        fetching = broker.share_fetching
        delivery = fetching.delivery
        topics, cluster, node_id = broker.topics, broker.cluster, self.ctx.connection.node_id
        now = broker.now_ms()
        max_records = self.request.max_records if self.request.max_records > 0 else 500
        budget = self.request.max_bytes - self.size
        events = []
        for key in self.partitions:
            if key in self.errors:
                continue
            topic_id, index = key
            try:
                log = topics.partition_by_id(topic_id, index)
            except KafkaError as exc:
                self.errors[key] = (exc.code, str(exc))
                continue
            leader, epoch, elsewhere = leader_of(self.ctx, topic_id, index, log)
            self.leaders[key] = LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
            if cluster.multi:
                refused = cluster.check_partition_id(node_id, topic_id, index)
                if refused is not None:
                    self.errors[key] = (refused, None)
                    if elsewhere is not None:
                        self.endpoints[elsewhere.node_id] = elsewhere
                    continue
            if self.acquired >= max_records or budget <= 0:
                continue
            sp = delivery.partition(self.group_id, topic_id, index, create=True)
            try:
                raw, described, limit = fetching.read(log, sp, budget,
                                                      sp.config.isolation_level)
            except KafkaError as exc:  # the log refused the read: this partition's error
                self.errors[key] = (exc.code, str(exc))
                continue
            runs, evs = sp.acquire(self.member_id, described, log_start=log.log_start_offset,
                                   log_limit=limit, max_records=max_records - self.acquired,
                                   now_ms=now, record_limit=self.record_limit,
                                   batch_size=max(self.request.batch_size, 0))
            events += [((self.group_id, topic_id, index), e) for e in evs]
            if not runs:
                continue
            batches = pick_batches(raw, described, runs)
            size = sum(map(len, batches))
            budget -= size
            self.size += size
            self.acquired += sum(r.last_offset - r.first_offset + 1 for r in runs)
            got = self.got.setdefault(key, ([], []))
            got[0].extend(batches)
            got[1].extend(runs)
        fetching.publish(events)
        if events:
            fetching.locks_changed()

    def partition_data(self, key) -> PartitionData:
        code, message = self.errors.get(key, (ErrorCode.NONE, None))
        ack_code, ack_message = self.acks.get(key, (ErrorCode.NONE, None))
        batches, runs = self.got.get(key, ((), ()))
        return PartitionData(
            partition_index=key[1], error_code=code, error_message=message,
            acknowledge_error_code=ack_code, acknowledge_error_message=ack_message,
            current_leader=self.leaders.get(key) or LeaderIdAndEpoch(leader_id=-1,
                                                                     leader_epoch=-1),
            records=b"".join(batches),
            acquired_records=[AcquiredRecords(first_offset=r.first_offset,
                                              last_offset=r.last_offset,
                                              delivery_count=r.delivery_count) for r in runs])


def _error(code: ErrorCode, message: str | None = None) -> ShareFetchResponse:
    return ShareFetchResponse(error_code=code, error_message=message)


async def _wait_for_records(broker, fetching, seconds: float) -> None:
    """Until a Produce appends or records are released, at most ``seconds`` (wall time)."""
    arrived, released = broker.topics.data_arrived, fetching.released
    with trio.move_on_after(seconds):
        async with trio.open_nursery() as nursery:
            async def wait(event):
                await event.wait()
                nursery.cancel_scope.cancel()
            nursery.start_soon(wait, arrived)
            nursery.start_soon(wait, released)


async def share_fetch(ctx, request) -> ShareFetchResponse:
    if not share_enabled(ctx):
        return _error(ErrorCode.UNSUPPORTED_VERSION)
    group_id, member_id = request.group_id, request.member_id
    if not group_id or not member_id:
        return _error(ErrorCode.INVALID_REQUEST, "A share fetch needs a group id and member id")
    broker = ctx.broker
    fetching = broker.share_fetching
    fetching.drain_departures()  # a member that left must not keep what it held
    delivery = fetching.delivery
    acks = _acks_of(request)
    wanted = [(t.topic_id, p.partition_index) for t in request.topics for p in t.partitions]
    forgotten = [(t.topic_id, p) for t in request.forgotten_topics_data for p in t.partitions]
    try:
        context = sessions_for(ctx).fetch_context(
            group_id, member_id, request.share_session_epoch, connection_id=id(ctx.connection),
            wanted=wanted, forgotten=forgotten, has_acks=bool(acks))
    except SessionError as exc:
        return _error(exc.code, str(exc))
    lock_ms = delivery.config_for(group_id).record_lock_duration_ms
    ack_codes = apply_acks(ctx, group_id, member_id, acks, renew_supported(ctx.version))
    fetch = _Fetch(ctx, request, group_id, member_id,
                   [] if context.final else list(context.session.partitions))
    fetch.acks = ack_codes
    renew_only = renew_supported(ctx.version) and request.is_renew_ack
    if context.final:
        sessions_for(ctx).close(group_id, member_id)
        fetching.publish(delivery.release_member(group_id, member_id,
                                                 only=set(context.session.partitions)))
    elif not renew_only:
        fetch.run()
        wanted_bytes = max(request.min_bytes, 1)
        if fetch.size < wanted_bytes and request.max_wait_ms > 0:
            async def long_poll():
                deadline = trio.current_time() + request.max_wait_ms / 1000
                while fetch.size < wanted_bytes:
                    left = deadline - trio.current_time()
                    if left <= 0:
                        return
                    await _wait_for_records(broker, fetching, left)
                    fetch.run()
            await ctx.park(long_poll)
    # a full (epoch 0) answer names every session partition; an incremental one only those
    # with records, an error or an acknowledgement outcome
    keys = dict.fromkeys(list(fetch.errors) + list(fetch.acks) + list(fetch.got))
    if context.full and not context.final:
        keys = dict.fromkeys(list(context.session.partitions) + list(keys))
    responses: dict = {}
    for key in keys:
        responses.setdefault(key[0], []).append(fetch.partition_data(key))
    endpoints = []
    for node in fetch.endpoints.values():
        host, port = node_endpoint(ctx, node)
        endpoints.append(NodeEndpoint(node_id=node.node_id, host=host, port=port,
                                      rack=node.rack))
    return ShareFetchResponse(
        acquisition_lock_timeout_ms=lock_ms,
        responses=[ShareFetchableTopicResponse(topic_id=t, partitions=ps)
                   for t, ps in responses.items()],
        node_endpoints=endpoints)


HANDLER = Handler(API, "1-2", share_fetch)
