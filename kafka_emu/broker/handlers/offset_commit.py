"""OffsetCommit v2-9 (v0-1 were removed in Kafka 4.0, KIP-896): v2-4 RetentionTimeMs; v6 leader epoch; v7 GroupInstanceId; v9 GROUP_ID_NOT_FOUND for a missing
group with a generation (v0-8 ILLEGAL_GENERATION). Partitions of unknown topics get
UNKNOWN_TOPIC_OR_PARTITION from the front end, as in KafkaApis; the rest go to the coordinator.
"""

from __future__ import annotations

from functools import partial

from ... import coordinator as c
from ...protocol.messages.offset_commit import (API, OffsetCommitResponse,
                                                OffsetCommitResponsePartition,
                                                OffsetCommitResponseTopic)
from . import Handler
from ._common import by_topic, split_known_partitions


def missing_group_is_not_found(version: int) -> bool:
    return version >= 9


def supports_member_epochs(version: int) -> bool:
    """v9+: commits from consumer group (KIP-848) members, checked against their member epoch."""
    return version >= 9


def render(order, rejected: dict, result) -> OffsetCommitResponse:
    errors = dict(rejected)
    if result is not None:
        errors.update({(p.topic, p.partition): p.error for p in result.partitions})
    return OffsetCommitResponse(topics=by_topic(order, errors, OffsetCommitResponsePartition,
                                                OffsetCommitResponseTopic))


async def offset_commit(ctx, request) -> OffsetCommitResponse:
    order, rejected, known = split_known_partitions(ctx, request.topics)
    if not known:
        return render(order, rejected, None)
    command = c.OffsetCommit(
        request_id=ctx.request_id, group_id=request.group_id,
        generation_id=request.generation_id_or_member_epoch, member_id=request.member_id,
        group_instance_id=request.group_instance_id,
        offsets=tuple(c.CommitOffset(topic=t.name, partition=p.partition_index,
                                     offset=p.committed_offset,
                                     leader_epoch=p.committed_leader_epoch,
                                     metadata=p.committed_metadata) for t, p in known),
        retention_time_ms=request.retention_time_ms,
        missing_group_is_not_found=missing_group_is_not_found(ctx.version),
        supports_member_epochs=supports_member_epochs(ctx.version))
    return await ctx.submit(command, partial(render, order, rejected))


HANDLER = Handler(API, "2-9", offset_commit)
