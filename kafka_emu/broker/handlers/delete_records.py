"""DeleteRecords v0-2: move a partition's log start offset up (offset -1 = the high watermark);
whole batches below it are dropped. Answers the new low watermark per partition; in a cluster only the
leader does (NOT_LEADER_OR_FOLLOWER elsewhere).

Kafka collects the request into a map by partition (KafkaApis.handleDeleteRecordsRequest): a
partition named twice is deleted up to the offset named last, and answered once, in one topic."""

from __future__ import annotations

from operator import attrgetter
from typing import NamedTuple

from ...errors import ErrorCode
from ...protocol.messages.delete_records import (API, DeleteRecordsPartitionResult,
                                                 DeleteRecordsResponse, DeleteRecordsTopicResult)
from . import Handler
from ._common import leader_log, per_partition


async def delete_records(ctx, request) -> DeleteRecordsResponse:
    def answer(name: str, p) -> DeleteRecordsPartitionResult:
        low = leader_log(ctx, name, p.partition_index).delete_records(p.offset)
        return DeleteRecordsPartitionResult(partition_index=p.partition_index, low_watermark=low,
                                            error_code=ErrorCode.NONE)

    def failed(p, code: int) -> DeleteRecordsPartitionResult:
        return DeleteRecordsPartitionResult(partition_index=p.partition_index, low_watermark=-1,
                                            error_code=code)

    return DeleteRecordsResponse(topics=per_partition(
        last_named(request.topics), attrgetter("name"), answer, failed,
        lambda t, parts: DeleteRecordsTopicResult(name=t.name, partitions=parts)))


class _Topic(NamedTuple):
    name: str
    partitions: list


def last_named(topics) -> list[_Topic]:
    """Each partition once, with the offset it was named with last, in the order partitions
    and topics were first named."""
    latest: dict[tuple[str, int], object] = {}
    for t in topics:
        for p in t.partitions:
            latest[t.name, p.partition_index] = p  # a key keeps its first place, takes the last value
    merged: dict[str, _Topic] = {}
    for (name, _), p in latest.items():
        merged.setdefault(name, _Topic(name, [])).partitions.append(p)
    return list(merged.values())


HANDLER = Handler(API, "0-2", delete_records)
