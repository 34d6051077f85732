"""ListOffsets v1-10: -2 earliest, -1 latest, -3 max timestamp (v7+), or the first offset with
a timestamp at or after the one given; v4 leader epochs. v0 (removed in Kafka 4.0) is not served.
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.list_offsets import (API, ListOffsetsPartitionResponse,
                                               ListOffsetsResponse, ListOffsetsTopicResponse)
from . import Handler


def has_leader_epoch(version: int) -> bool:
    return version >= 4


async def list_offsets(ctx, request) -> ListOffsetsResponse:
    topics = ctx.broker.topics
    epochs = has_leader_epoch(ctx.version)
    out = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            try:
                found = topics.partition(t.name, p.partition_index).offset_for_timestamp(
                    p.timestamp)
            except KafkaError as exc:
                parts.append(ListOffsetsPartitionResponse(partition_index=p.partition_index,
                                                          error_code=exc.code))
                continue
            parts.append(ListOffsetsPartitionResponse(
                partition_index=p.partition_index, error_code=ErrorCode.NONE,
                timestamp=found.timestamp, offset=found.offset,
                leader_epoch=found.leader_epoch if epochs else -1))
        out.append(ListOffsetsTopicResponse(name=t.name, partitions=parts))
    return ListOffsetsResponse(topics=out)


HANDLER = Handler(API, "1-10", list_offsets)
