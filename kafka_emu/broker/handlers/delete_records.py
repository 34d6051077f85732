"""DeleteRecords v0-2: move a partition's log start offset up (offset -1 = the high watermark);
whole batches below it are dropped. Answers the new low watermark per partition; in a cluster only the
leader does (NOT_LEADER_OR_FOLLOWER elsewhere)."""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.delete_records import (API, DeleteRecordsPartitionResult,
                                                 DeleteRecordsResponse, DeleteRecordsTopicResult)
from . import Handler


async def delete_records(ctx, request) -> DeleteRecordsResponse:
    topics = ctx.broker.topics
    cluster = ctx.broker.cluster
    out = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            try:
                log = topics.partition(t.name, p.partition_index)
                if cluster.multi:
                    refused = cluster.check_partition(ctx.connection.node_id, t.name,
                                                      p.partition_index)
                    if refused is not None:
                        raise KafkaError(refused)
                low = log.delete_records(p.offset)
            except KafkaError as exc:
                parts.append(DeleteRecordsPartitionResult(
                    partition_index=p.partition_index, low_watermark=-1, error_code=exc.code))
                continue
            parts.append(DeleteRecordsPartitionResult(
                partition_index=p.partition_index, low_watermark=low, error_code=ErrorCode.NONE))
        out.append(DeleteRecordsTopicResult(name=t.name, partitions=parts))
    return DeleteRecordsResponse(topics=out)


HANDLER = Handler(API, "0-2", delete_records)
