"""ListOffsets v1-10: -2 earliest, -1 latest, -3 max timestamp (v7+), or the first offset with
a timestamp at or after the one given; v4 leader epochs. In a cluster only the leader answers (NOT_LEADER_OR_FOLLOWER, or
FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for v4+'s current_leader_epoch). v0 (removed in Kafka 4.0) is not served.
"""

from __future__ import annotations

from operator import attrgetter

from ...errors import ErrorCode
from ...protocol.messages.list_offsets import (API, ListOffsetsPartitionResponse,
                                               ListOffsetsResponse, ListOffsetsTopicResponse)
from . import Handler
from ._common import leader_log, per_partition


def has_leader_epoch(version: int) -> bool:
    return version >= 4


async def list_offsets(ctx, request) -> ListOffsetsResponse:
    epochs = has_leader_epoch(ctx.version)

    def answer(name: str, p) -> ListOffsetsPartitionResponse:
        log = leader_log(ctx, name, p.partition_index, p.current_leader_epoch if epochs else -1)
        found = log.offset_for_timestamp(p.timestamp)
        return ListOffsetsPartitionResponse(
            partition_index=p.partition_index, error_code=ErrorCode.NONE,
            timestamp=found.timestamp, offset=found.offset,
            leader_epoch=found.leader_epoch if epochs else -1)

    def failed(p, code: int) -> ListOffsetsPartitionResponse:
        return ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=code)

    return ListOffsetsResponse(topics=per_partition(
        request.topics, attrgetter("name"), answer, failed,
        lambda t, parts: ListOffsetsTopicResponse(name=t.name, partitions=parts)))


HANDLER = Handler(API, "1-10", list_offsets)
