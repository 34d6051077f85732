"""ListOffsets (2): valid 1-11, flexible 6+.

v1 is Kafka 4.0's baseline (v0 and its MaxNumOffsets/OldStyleOffsets removed, KIP-896): one
offset and its timestamp per partition. v2 IsolationLevel and throttle; v4 CurrentLeaderEpoch
and response LeaderEpoch (KIP-320); v5 OFFSET_NOT_AVAILABLE; v6 flexible; v7 max-timestamp
lookups (-3, KIP-734); v8 local log start (-4, KIP-405); v9 last tiered offset (-5, KIP-1005);
v10 TimeoutMs for async remote lookups (KIP-1075); v11 earliest pending upload (-6, KIP-1023),
no new fields.
"""

from ..schema import INT8, INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@struct
class ListOffsetsPartition:
    partition_index: int = field(INT32, "0+")
    current_leader_epoch: int = field(INT32, "4+", default=-1, ignorable=True)
    timestamp: int = field(INT64, "0+")


@struct
class ListOffsetsTopic:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(ListOffsetsPartition), "0+")


@message(api_key=2, kind="request", valid="1-11", flexible="6+")
class ListOffsetsRequest:
    replica_id: int = field(INT32, "0+")
    isolation_level: int = field(INT8, "2+")
    topics: list = field(Array(ListOffsetsTopic), "0+")
    timeout_ms: int = field(INT32, "10+", ignorable=True)


@struct
class ListOffsetsPartitionResponse:
    partition_index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    timestamp: int = field(INT64, "1+", default=-1)
    offset: int = field(INT64, "1+", default=-1)
    leader_epoch: int = field(INT32, "4+", default=-1)


@struct
class ListOffsetsTopicResponse:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(ListOffsetsPartitionResponse), "0+")


@message(api_key=2, kind="response", valid="1-11", flexible="6+")
class ListOffsetsResponse:
    throttle_time_ms: int = field(INT32, "2+", ignorable=True)
    topics: list = field(Array(ListOffsetsTopicResponse), "0+")


API = Api(2, "ListOffsets", ListOffsetsRequest, ListOffsetsResponse)
