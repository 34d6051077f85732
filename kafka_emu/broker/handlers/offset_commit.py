"""OffsetCommit v0-9: v1 generation/member id (v0 commits are "simple": generation -1); v2-4
RetentionTimeMs; v6 leader epoch; v7 GroupInstanceId; v9 GROUP_ID_NOT_FOUND for a missing
group with a generation (v0-8 ILLEGAL_GENERATION). Partitions of unknown topics get
UNKNOWN_TOPIC_OR_PARTITION from the front end, as in KafkaApis; the rest go to the coordinator.
"""

from __future__ import annotations

from functools import partial

from ... import coordinator as c
from ...errors import ErrorCode
from ...protocol.messages.offset_commit import (API, OffsetCommitResponse,
                                                OffsetCommitResponsePartition,
                                                OffsetCommitResponseTopic)
from . import Handler


def missing_group_is_not_found(version: int) -> bool:
    return version >= 9


def render(order: list[tuple[str, int]], rejected: dict, result) -> OffsetCommitResponse:
    errors = dict(rejected)
    if result is not None:
        for p in result.partitions:
            errors[(p.topic, p.partition)] = p.error
    topics: dict[str, list] = {}
    for topic, partition in order:
        topics.setdefault(topic, []).append(OffsetCommitResponsePartition(
            partition_index=partition, error_code=errors[(topic, partition)]))
    return OffsetCommitResponse(topics=[OffsetCommitResponseTopic(name=name, partitions=parts)
                                        for name, parts in topics.items()])


async def offset_commit(ctx, request) -> OffsetCommitResponse:
    topics = ctx.broker.topics
    order, rejected, offsets = [], {}, []
    for t in request.topics:
        for p in t.partitions:
            order.append((t.name, p.partition_index))
            if not topics.exists(t.name, p.partition_index):
                rejected[(t.name, p.partition_index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            offsets.append(c.CommitOffset(topic=t.name, partition=p.partition_index,
                                          offset=p.committed_offset,
                                          leader_epoch=p.committed_leader_epoch,
                                          metadata=p.committed_metadata))
    if not offsets:
        return render(order, rejected, None)
    command = c.OffsetCommit(
        request_id=ctx.request_id, group_id=request.group_id,
        generation_id=request.generation_id_or_member_epoch, member_id=request.member_id,
        group_instance_id=request.group_instance_id, offsets=tuple(offsets),
        retention_time_ms=request.retention_time_ms,
        missing_group_is_not_found=missing_group_is_not_found(ctx.version))
    return await ctx.submit(command, partial(render, order, rejected))


HANDLER = Handler(API, "0-9", offset_commit)
