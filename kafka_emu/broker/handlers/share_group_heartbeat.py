"""ShareGroupHeartbeat v1 (KIP-932): the only version Kafka 4.2 serves (v0, 4.0's early access,
was removed in 4.1). The client makes its own member id.

Before the coordinator, as KafkaApis does: share groups off (the share.version feature at 0) ->
UNSUPPORTED_VERSION. The request checks (INVALID_REQUEST with Kafka's messages) are the
coordinator's, as GroupCoordinatorService makes them.
The group's own share.session.timeout.ms and share.heartbeat.interval.ms (group configs) and the
catalogue (name -> partition count, internal topics excluded) ride on the command.
"""

from __future__ import annotations

from functools import partial

from ...coordinator.share.commands import ShareGroupHeartbeat, ShareGroupHeartbeatResult
from ...errors import ErrorCode
from ...protocol.messages.share_group_heartbeat import (
    API, ShareGroupHeartbeatAssignment, ShareGroupHeartbeatResponse,
    ShareGroupHeartbeatTopicPartitions)
from . import Handler
from ._common import java_host

def share_groups_enabled(ctx) -> bool:
    return ctx.broker.config.coordinator.share.enabled


def catalogue(ctx) -> dict[str, int]:
    return {t.name: t.num_partitions for t in ctx.broker.topics.catalogue if not t.is_internal}


def render(ctx, result: ShareGroupHeartbeatResult) -> ShareGroupHeartbeatResponse:
    assignment = None
    if result.assignment is not None:
        topics = []
        for name, partitions in result.assignment:
            info = ctx.broker.topics.lookup(name)
            if info is not None:
                topics.append(ShareGroupHeartbeatTopicPartitions(
                    topic_id=info.topic_id, partitions=list(partitions)))
        assignment = ShareGroupHeartbeatAssignment(topic_partitions=topics)
    return ShareGroupHeartbeatResponse(
        error_code=result.error, error_message=result.error_message, member_id=result.member_id,
        member_epoch=result.member_epoch, heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=assignment)


async def share_group_heartbeat(ctx, request) -> ShareGroupHeartbeatResponse:
    if not share_groups_enabled(ctx):
        return ShareGroupHeartbeatResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    names = request.subscribed_topic_names
    settings = ctx.broker.resource_configs.share_timing.get(request.group_id, (None, None))
    command = ShareGroupHeartbeat(
        request_id=ctx.request_id, group_id=request.group_id, member_id=request.member_id,
        member_epoch=request.member_epoch, rack_id=request.rack_id,
        subscribed_topic_names=None if names is None else tuple(names),
        client_id=ctx.client_id, client_host=java_host(ctx.connection.peer_host),
        topics=catalogue(ctx), session_timeout_ms=settings[0], heartbeat_interval_ms=settings[1])
    return await ctx.submit(command, partial(render, ctx))


HANDLER = Handler(API, "1", share_group_heartbeat)
