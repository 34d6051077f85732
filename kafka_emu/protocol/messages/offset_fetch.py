"""OffsetFetch (9): valid 0-10, flexible 6+.

v2 null Topics = all and a top-level ErrorCode; v3 throttle; v5 CommittedLeaderEpoch; v6
flexible; v7 RequireStable (KIP-447); v8 batched Groups (KIP-709); v9 MemberId/MemberEpoch;
v10 topic ids replace topic names (KIP-848, Kafka 4.1).
"""

import uuid

from ..schema import BOOL, INT16, INT32, INT64, STRING, UUID, Api, Array, field, message, struct


@struct
class OffsetFetchRequestTopic:
    name: str = field(STRING, "0-7")
    partition_indexes: list = field(Array(INT32), "0-7")


@struct
class OffsetFetchRequestTopics:
    name: str = field(STRING, "8-9", ignorable=True)
    topic_id: uuid.UUID = field(UUID, "10+", ignorable=True)
    partition_indexes: list = field(Array(INT32), "8+")


@struct
class OffsetFetchRequestGroup:
    group_id: str = field(STRING, "8+")
    member_id: str | None = field(STRING, "9+", nullable="9+", default=None, ignorable=True)
    member_epoch: int = field(INT32, "9+", default=-1, ignorable=True)
    topics: list | None = field(Array(OffsetFetchRequestTopics), "8+", nullable="8+")


@message(api_key=9, kind="request", valid="0-10", flexible="6+")
class OffsetFetchRequest:
    group_id: str = field(STRING, "0-7")
    topics: list | None = field(Array(OffsetFetchRequestTopic), "0-7", nullable="2-7")
    groups: list = field(Array(OffsetFetchRequestGroup), "8+")
    require_stable: bool = field(BOOL, "7+")


@struct
class OffsetFetchResponsePartition:
    partition_index: int = field(INT32, "0-7")
    committed_offset: int = field(INT64, "0-7")
    committed_leader_epoch: int = field(INT32, "5-7", default=-1, ignorable=True)
    metadata: str | None = field(STRING, "0-7", nullable="0-7")
    error_code: int = field(INT16, "0-7")


@struct
class OffsetFetchResponseTopic:
    name: str = field(STRING, "0-7")
    partitions: list = field(Array(OffsetFetchResponsePartition), "0-7")


@struct
class OffsetFetchResponsePartitions:
    partition_index: int = field(INT32, "8+")
    committed_offset: int = field(INT64, "8+")
    committed_leader_epoch: int = field(INT32, "8+", default=-1, ignorable=True)
    metadata: str | None = field(STRING, "8+", nullable="8+")
    error_code: int = field(INT16, "8+")


@struct
class OffsetFetchResponseTopics:
    name: str = field(STRING, "8-9", ignorable=True)
    topic_id: uuid.UUID = field(UUID, "10+", ignorable=True)
    partitions: list = field(Array(OffsetFetchResponsePartitions), "8+")


@struct
class OffsetFetchResponseGroup:
    group_id: str = field(STRING, "8+")
    topics: list = field(Array(OffsetFetchResponseTopics), "8+")
    error_code: int = field(INT16, "8+")


@message(api_key=9, kind="response", valid="0-10", flexible="6+")
class OffsetFetchResponse:
    throttle_time_ms: int = field(INT32, "3+", ignorable=True)
    topics: list = field(Array(OffsetFetchResponseTopic), "0-7")
    error_code: int = field(INT16, "2-7", ignorable=True)  # after Topics on the wire
    groups: list = field(Array(OffsetFetchResponseGroup), "8+")


API = Api(9, "OffsetFetch", OffsetFetchRequest, OffsetFetchResponse)
