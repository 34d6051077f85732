"""DeleteRecords v0-2: move a partition's log start offset up (offset -1 = the high watermark);
whole batches below it are dropped. Answers the new low watermark per partition; in a cluster only the
leader does (NOT_LEADER_OR_FOLLOWER elsewhere).

A partition named twice is deleted up to the offset named last, and answered once, as Kafka
(see once_per_partition)."""

from __future__ import annotations

from operator import attrgetter

from ...errors import ErrorCode
from ...protocol.messages.delete_records import (API, DeleteRecordsPartitionResult,
                                                 DeleteRecordsResponse, DeleteRecordsTopicResult)
from . import Handler
from ._common import leader_log, once_per_partition, per_partition


async def delete_records(ctx, request) -> DeleteRecordsResponse:
    def answer(name: str, p) -> DeleteRecordsPartitionResult:
        low = leader_log(ctx, name, p.partition_index).delete_records(p.offset)
        return DeleteRecordsPartitionResult(partition_index=p.partition_index, low_watermark=low,
                                            error_code=ErrorCode.NONE)

    def failed(p, code: int) -> DeleteRecordsPartitionResult:
        return DeleteRecordsPartitionResult(partition_index=p.partition_index, low_watermark=-1,
                                            error_code=code)

    return DeleteRecordsResponse(topics=per_partition(
        once_per_partition(request.topics), attrgetter("name"), answer, failed,
        lambda t, parts: DeleteRecordsTopicResult(name=t.name, partitions=parts)))


HANDLER = Handler(API, "0-2", delete_records)
