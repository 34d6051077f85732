"""OffsetCommit (8): valid 0-10, flexible 8+.

v1 generation/member id and a v1-only CommitTimestamp; v2-4 RetentionTimeMs; v3 throttle; v5
drops retention; v6 CommittedLeaderEpoch; v7 GroupInstanceId; v8 flexible; v9 KIP-848 groups;
v10 topic ids replace topic names (KIP-848, Kafka 4.1).
"""

import uuid

from ..schema import INT16, INT32, INT64, STRING, UUID, Api, Array, field, message, struct


@struct
class OffsetCommitRequestPartition:
    partition_index: int = field(INT32, "0+")
    committed_offset: int = field(INT64, "0+")
    committed_leader_epoch: int = field(INT32, "6+", default=-1, ignorable=True)
    commit_timestamp: int = field(INT64, "1", default=-1)
    committed_metadata: str | None = field(STRING, "0+", nullable="0+")


@struct
class OffsetCommitRequestTopic:
    name: str = field(STRING, "0-9", ignorable=True)
    topic_id: uuid.UUID = field(UUID, "10+", ignorable=True)
    partitions: list = field(Array(OffsetCommitRequestPartition), "0+")


@message(api_key=8, kind="request", valid="0-10", flexible="8+")
class OffsetCommitRequest:
    group_id: str = field(STRING, "0+")
    generation_id_or_member_epoch: int = field(INT32, "1+", default=-1, ignorable=True)
    member_id: str = field(STRING, "1+", ignorable=True)
    group_instance_id: str | None = field(STRING, "7+", nullable="7+", default=None)
    retention_time_ms: int = field(INT64, "2-4", default=-1, ignorable=True)
    topics: list = field(Array(OffsetCommitRequestTopic), "0+")


@struct
class OffsetCommitResponsePartition:
    partition_index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")


@struct
class OffsetCommitResponseTopic:
    name: str = field(STRING, "0-9", ignorable=True)
    topic_id: uuid.UUID = field(UUID, "10+", ignorable=True)
    partitions: list = field(Array(OffsetCommitResponsePartition), "0+")


@message(api_key=8, kind="response", valid="0-10", flexible="8+")
class OffsetCommitResponse:
    throttle_time_ms: int = field(INT32, "3+", ignorable=True)
    topics: list = field(Array(OffsetCommitResponseTopic), "0+")


API = Api(8, "OffsetCommit", OffsetCommitRequest, OffsetCommitResponse)
