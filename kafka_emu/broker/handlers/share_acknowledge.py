"""ShareAcknowledge v1-2 (KIP-932): v0 (Kafka 4.0's early access) is gone as in 4.1; v2 adds
IsRenewAck (acknowledge type 4, Renew, KIP-1222) and the response's AcquisitionLockTimeoutMs.

The share session must exist: epoch 0 is INVALID_SHARE_SESSION_EPOCH, a missing session
SHARE_SESSION_NOT_FOUND, a wrong epoch INVALID_SHARE_SESSION_EPOCH (top-level errors); -1 closes
the session after the acknowledgements and releases what the member still holds. Each
partition's acknowledgements apply all or nothing: INVALID_REQUEST for a malformed batch
(first > last, overlapping batches, a types array neither 1 long nor one per offset, an unknown
type), INVALID_RECORD_STATE for an offset that is not acquired by this member (never acquired,
already acknowledged, its lock expired, or another member's), UNKNOWN_TOPIC_ID /
UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist.
"""

from __future__ import annotations

from ...coordinator.share.partition_state import AckBatch, AckError
from ...coordinator.share.sessions import SessionError
from ...errors import ErrorCode, KafkaError
from ...protocol.messages.share_acknowledge import (API, LeaderIdAndEpoch, NodeEndpoint,
                                                    PartitionData, ShareAcknowledgeResponse,
                                                    ShareAcknowledgeTopicResponse)
from ..share_fetching import leader_of, sessions_for
from . import Handler
from ._common import node_endpoint


def renew_supported(version: int) -> bool:
    return version >= 2


def reports_lock_timeout(version: int) -> bool:
    return version >= 2


def share_enabled(ctx) -> bool:
    return ctx.broker.config.coordinator.share.enabled  # share.version >= 1


def apply_acks(ctx, group_id: str, member_id: str, acks: dict, renew_allowed: bool
               ) -> dict[tuple, tuple[ErrorCode, str | None]]:
    """Apply each partition's acknowledgements; (code, message) per (topic id, partition)."""
    broker = ctx.broker
    fetching = broker.share_fetching
    delivery = fetching.delivery
    now = broker.now_ms()
    out = {}
    events = []
    for key, batches in acks.items():
        topic_id, index = key
        try:
            broker.topics.partition_by_id(topic_id, index)
        except KafkaError as exc:
            out[key] = (exc.code, str(exc))
            continue
        if broker.cluster.multi:
            refused = broker.cluster.check_partition_id(ctx.connection.node_id, topic_id, index)
            if refused is not None:
                out[key] = (refused, None)
                continue
        sp = delivery.partition(group_id, topic_id, index)
        if sp is None:
            out[key] = (ErrorCode.INVALID_RECORD_STATE, "No records acquired in this partition")
            continue
        try:
            evs = sp.acknowledge(member_id, batches, now, renew_allowed=renew_allowed)
        except AckError as exc:
            out[key] = (exc.code, str(exc))
            continue
        events += [((group_id, topic_id, index), e) for e in evs]
        out[key] = (ErrorCode.NONE, None)
    fetching.publish(events)
    if events:
        fetching.locks_changed()
    return out


async def share_acknowledge(ctx, request) -> ShareAcknowledgeResponse:
    if not share_enabled(ctx):
        return ShareAcknowledgeResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    group_id, member_id = request.group_id, request.member_id
    if not group_id or not member_id:
        return ShareAcknowledgeResponse(error_code=ErrorCode.INVALID_REQUEST,
                                        error_message="A share acknowledge needs a group id "
                                                      "and member id")
    fetching = ctx.broker.share_fetching
    fetching.drain_departures()  # a member that left must not keep what it held
    delivery = fetching.delivery
    try:
        context = sessions_for(ctx).acknowledge_context(group_id, member_id,
                                                        request.share_session_epoch)
    except SessionError as exc:
        return ShareAcknowledgeResponse(error_code=exc.code, error_message=str(exc))
    acks = {}
    for t in request.topics:
        for p in t.partitions:
            acks[(t.topic_id, p.partition_index)] = [
                AckBatch(b.first_offset, b.last_offset, tuple(b.acknowledge_types))
                for b in p.acknowledgement_batches]
    results = apply_acks(ctx, group_id, member_id, acks, renew_supported(ctx.version))
    if context.final:
        sessions_for(ctx).close(group_id, member_id)
        fetching.publish(delivery.release_member(group_id, member_id,
                                                 only=set(context.session.partitions)))
    responses: dict = {}
    endpoints: dict = {}
    for (topic_id, index), (code, message) in results.items():
        try:
            log = ctx.broker.topics.partition_by_id(topic_id, index)
        except KafkaError:
            leader = LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1)
        else:
            leader_id, epoch, elsewhere = leader_of(ctx, topic_id, index, log)
            leader = LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=epoch)
            if elsewhere is not None and code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
                endpoints[elsewhere.node_id] = elsewhere
        responses.setdefault(topic_id, []).append(PartitionData(
            partition_index=index, error_code=code, error_message=message,
            current_leader=leader))
    lock_ms = delivery.config_for(group_id).record_lock_duration_ms
    return ShareAcknowledgeResponse(
        acquisition_lock_timeout_ms=lock_ms if reports_lock_timeout(ctx.version) else 0,
        responses=[ShareAcknowledgeTopicResponse(topic_id=t, partitions=ps)
                   for t, ps in responses.items()],
        node_endpoints=[NodeEndpoint(node_id=n.node_id, host=h, port=p, rack=n.rack)
                        for n in endpoints.values() for h, p in [node_endpoint(ctx, n)]])


HANDLER = Handler(API, "1-2", share_acknowledge)
