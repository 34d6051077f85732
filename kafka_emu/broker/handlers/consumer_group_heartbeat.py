"""ConsumerGroupHeartbeat v0-1 (KIP-848): v0 may join with an empty member id (the coordinator
makes one); v1 adds SubscribedTopicRegex and requires the client's own member id (KIP-1082).

The wire names topics by id; the coordinator by name. Owned partitions of ids we do not know (a
deleted topic) are dropped: such partitions count as released, as Kafka's id-keyed lookup treats
them; a join (epoch 0) naming any entry at all is still refused, as Kafka checks the wire's list
(``owned_entries``), and a heartbeat at the previous epoch naming one is fenced, as it is not a
subset of the assignment (``owned_unknown``). The group's own consumer.session.timeout.ms and
consumer.heartbeat.interval.ms (group configs, IncrementalAlterConfigs) ride on the command. The catalogue (name -> partition count, internal topics excluded) rides on the command so
the coordinator stays pure. With "consumer" missing from group.coordinator.rebalance.protocols the
API is not advertised and a request gets UNSUPPORTED_VERSION, as on a Kafka 4.x broker.
"""

from __future__ import annotations

from functools import partial

from ...coordinator import consumer as cg
from ...errors import ErrorCode
from ...protocol.messages.consumer_group_heartbeat import (
    API, ConsumerGroupHeartbeatAssignment, ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatTopicPartitions)
from . import Handler
from ._common import java_host


def client_generates_member_id(version: int) -> bool:
    return version >= 1


def consumer_protocol_enabled(ctx) -> bool:
    return "consumer" in ctx.broker.config.coordinator.group_coordinator_rebalance_protocols


def catalogue(ctx) -> dict[str, int]:
    return {t.name: t.num_partitions for t in ctx.broker.topics.catalogue if not t.is_internal}


def render(ctx, result: cg.ConsumerGroupHeartbeatResult) -> ConsumerGroupHeartbeatResponse:
    assignment = None
    if result.assignment is not None:
        topics = []
        for name, partitions in result.assignment:
            info = ctx.broker.topics.lookup(name)
            if info is not None:
                topics.append(ConsumerGroupHeartbeatTopicPartitions(
                    topic_id=info.topic_id, partitions=list(partitions)))
        assignment = ConsumerGroupHeartbeatAssignment(topic_partitions=topics)
    return ConsumerGroupHeartbeatResponse(
        error_code=result.error, error_message=result.error_message, member_id=result.member_id,
        member_epoch=result.member_epoch, heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=assignment)


async def consumer_group_heartbeat(ctx, request) -> ConsumerGroupHeartbeatResponse:
    if not consumer_protocol_enabled(ctx):
        return ConsumerGroupHeartbeatResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    owned = None
    unknown = False
    if request.topic_partitions is not None:
        owned = []
        for tp in request.topic_partitions:
            info = ctx.broker.topics.lookup_id(tp.topic_id)
            if info is not None:
                owned.append((info.name, tuple(tp.partitions)))
            else:
                unknown = True
        owned = tuple(owned)
    names = request.subscribed_topic_names
    session_ms, interval_ms = ctx.broker.resource_configs.consumer_timing.get(
        request.group_id, (None, None))
    command = cg.ConsumerGroupHeartbeat(
        request_id=ctx.request_id, group_id=request.group_id, member_id=request.member_id,
        member_epoch=request.member_epoch, instance_id=request.instance_id,
        rack_id=request.rack_id, rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=None if names is None else tuple(names),
        subscribed_topic_regex=request.subscribed_topic_regex,
        server_assignor=request.server_assignor, owned=owned,
        owned_entries=len(request.topic_partitions or ()), owned_unknown=unknown,
        session_timeout_ms=session_ms, heartbeat_interval_ms=interval_ms, client_id=ctx.client_id,
        client_host=java_host(ctx.connection.peer_host), topics=catalogue(ctx),
        member_id_required=client_generates_member_id(ctx.version))
    return await ctx.submit(command, partial(render, ctx))


HANDLER = Handler(API, "0-1", consumer_group_heartbeat)
