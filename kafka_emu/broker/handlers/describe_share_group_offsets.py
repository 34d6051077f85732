"""DescribeShareGroupOffsets v0-1 (KIP-932): v1 adds Lag (KIP-1226).

Per group: GROUP_ID_NOT_FOUND for no share group of that id (or a group of another type), as
Kafka's shareGroup(groupId) lookup; topics null means every topic-partition the group has state
for. A partition without state (never fetched, or deleted) answers start offset -1 and lag -1;
an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

import uuid

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.describe_share_group_offsets import (
    API, DescribeShareGroupOffsetsResponse, DescribeShareGroupOffsetsResponseGroup,
    DescribeShareGroupOffsetsResponsePartition, DescribeShareGroupOffsetsResponseTopic)
from ..share_fetching import lag_of, share_group_error
from . import Handler
from .share_acknowledge import share_enabled

NO_TOPIC_ID = uuid.UUID(int=0)  # the response's topic id for a topic that does not exist


def reports_lag(version: int) -> bool:
    return version >= 1


def _group(ctx, g) -> DescribeShareGroupOffsetsResponseGroup:
    refused = share_group_error(ctx, g.group_id, must_be_empty=False)
    if refused is not None:
        return DescribeShareGroupOffsetsResponseGroup(group_id=g.group_id, error_code=refused[0],
                                                      error_message=refused[1])
    topics = ctx.broker.topics
    delivery = ctx.broker.share_fetching.delivery
    wanted: dict[str, list[int]] = {}
    if g.topics is None:
        for (_, topic_id, index) in sorted(delivery.of_group(g.group_id),
                                           key=lambda k: (str(k[1]), k[2])):
            info = topics.lookup_id(topic_id)
            if info is not None:
                wanted.setdefault(info.name, []).append(index)
    else:
        for t in g.topics:
            wanted.setdefault(t.topic_name, []).extend(t.partitions)
    out = []
    for name, indexes in wanted.items():
        info = topics.lookup(name)
        parts = []
        for index in indexes:
            try:
                log = topics.partition(name, index)
            except KafkaError as exc:
                parts.append(DescribeShareGroupOffsetsResponsePartition(
                    partition_index=index, start_offset=-1, leader_epoch=-1,
                    error_code=exc.code, error_message=str(exc)))
                continue
            sp = delivery.partition(g.group_id, info.topic_id, index)
            parts.append(DescribeShareGroupOffsetsResponsePartition(
                partition_index=index, start_offset=sp.start_offset if sp is not None else -1,
                leader_epoch=log.leader_epoch,
                lag=lag_of(sp, log) if reports_lag(ctx.version) else -1))
        out.append(DescribeShareGroupOffsetsResponseTopic(
            topic_name=name, topic_id=info.topic_id if info is not None else NO_TOPIC_ID,
            partitions=parts))
    return DescribeShareGroupOffsetsResponseGroup(group_id=g.group_id, topics=out)


async def describe_share_group_offsets(ctx, request) -> DescribeShareGroupOffsetsResponse:
    if not share_enabled(ctx):
        return DescribeShareGroupOffsetsResponse(groups=[
            DescribeShareGroupOffsetsResponseGroup(group_id=g.group_id,
                                                   error_code=ErrorCode.UNSUPPORTED_VERSION)
            for g in request.groups])
    ctx.broker.share_fetching.drain_departures()
    return DescribeShareGroupOffsetsResponse(groups=[_group(ctx, g) for g in request.groups])


HANDLER = Handler(API, "0-1", describe_share_group_offsets)
