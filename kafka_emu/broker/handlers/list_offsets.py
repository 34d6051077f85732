"""ListOffsets v1-11: -2 earliest, -1 latest, -3 max timestamp (v7+), -4 earliest local (v8+),
-5 latest tiered (v9+), -6 earliest pending upload (v11+, KIP-1023: (-1, -1), as
UnifiedLog.fetchEarliestPendingUploadOffset answers without tiered storage), or the first offset
with a timestamp at or after the one given; v4 leader epochs. In a cluster only the leader answers (NOT_LEADER_OR_FOLLOWER, or FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH for v4+'s current_leader_epoch). v0 (removed in Kafka 4.0) is not served.

As ReplicaManager.fetchOffset: a partition named twice in one request is INVALID_REQUEST, and
answered once (see once_per_partition); a negative timestamp that is no special value, or one
this version does not have yet, is UNSUPPORTED_VERSION. Both are checked before the partition
is looked up.

Isolation level 1 (read_committed, v2+) answers -1 (latest) with the last stable offset, and
any lookup whose answer is at or above it with no offset (Partition.fetchOffsetForTimestamp).
"""

from __future__ import annotations

from collections import Counter
from operator import attrgetter

from ...errors import ErrorCode, KafkaError
from ...log import (EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, LATEST_TIERED_TIMESTAMP,
                    LATEST_TIMESTAMP, MAX_TIMESTAMP)
from ...protocol.messages.list_offsets import (API, ListOffsetsPartitionResponse,
                                               ListOffsetsResponse, ListOffsetsTopicResponse)
from . import Handler
from ._common import leader_log, once_per_partition, per_partition

READ_COMMITTED = 1
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6  # KIP-1023; no tiered storage here, so never an offset

# The version each special timestamp came with (ReplicaManager.timestampMinSupportedVersion).
SPECIAL_TIMESTAMP_SINCE = {
    EARLIEST_TIMESTAMP: 1,
    LATEST_TIMESTAMP: 1,
    MAX_TIMESTAMP: 7,
    EARLIEST_LOCAL_TIMESTAMP: 8,
    LATEST_TIERED_TIMESTAMP: 9,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP: 11,
}


def has_leader_epoch(version: int) -> bool:
    return version >= 4


def timestamp_unsupported(timestamp: int, version: int) -> bool:
    return timestamp < 0 and version < SPECIAL_TIMESTAMP_SINCE.get(timestamp, 1 << 15)


async def list_offsets(ctx, request) -> ListOffsetsResponse:
    epochs = has_leader_epoch(ctx.version)
    committed = request.isolation_level == READ_COMMITTED
    named = Counter((t.name, p.partition_index) for t in request.topics for p in t.partitions)

    def answer(name: str, p) -> ListOffsetsPartitionResponse:
        if named[name, p.partition_index] > 1:
            raise KafkaError(ErrorCode.INVALID_REQUEST)
        if timestamp_unsupported(p.timestamp, ctx.version):
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION)
        log = leader_log(ctx, name, p.partition_index, p.current_leader_epoch if epochs else -1)
        if p.timestamp == EARLIEST_PENDING_UPLOAD_TIMESTAMP:
            return ListOffsetsPartitionResponse(partition_index=p.partition_index,
                                                error_code=ErrorCode.NONE, timestamp=-1,
                                                offset=-1, leader_epoch=-1)
        found = log.offset_for_timestamp(p.timestamp, read_committed=committed)
        return ListOffsetsPartitionResponse(
            partition_index=p.partition_index, error_code=ErrorCode.NONE,
            timestamp=found.timestamp, offset=found.offset,
            leader_epoch=found.leader_epoch if epochs else -1)

    def failed(p, code: int) -> ListOffsetsPartitionResponse:
        return ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=code)

    return ListOffsetsResponse(topics=per_partition(
        once_per_partition(request.topics), attrgetter("name"), answer, failed,
        lambda t, parts: ListOffsetsTopicResponse(name=t.name, partitions=parts)))


HANDLER = Handler(API, "1-11", list_offsets)
