"""ListOffsets v1-10: -2 earliest, -1 latest, -3 max timestamp (v7+), or the first offset with
a timestamp at or after the one given; v4 leader epochs. In a cluster only the leader answers (NOT_LEADER_OR_FOLLOWER, or
FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for v4+'s current_leader_epoch). v0 (removed in Kafka 4.0) is not served.
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
    cluster = ctx.broker.cluster
    epochs = has_leader_epoch(ctx.version)
    out = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            try:
                log = topics.partition(t.name, p.partition_index)
                if cluster.multi:
                    refused = cluster.check_partition(ctx.connection.node_id, t.name,
                                                      p.partition_index,
                                                      p.current_leader_epoch if epochs else -1)
                    if refused is not None:
                        raise KafkaError(refused)
                found = log.offset_for_timestamp(p.timestamp)
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
