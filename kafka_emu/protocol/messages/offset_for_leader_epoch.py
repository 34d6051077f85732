"""OffsetForLeaderEpoch (23): valid 2-4 (v0-1 removed in Kafka 4.0, KIP-896), flexible 4+.

v2 CurrentLeaderEpoch (fencing, KIP-320) and ThrottleTimeMs; v3 ReplicaId (-2 for consumers);
v4 flexible. A consumer asks the leader where an epoch ended, to find a truncated log.
"""

from ..schema import INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@struct
class OffsetForLeaderPartition:
    partition: int = field(INT32, "0+")
    current_leader_epoch: int = field(INT32, "2+", default=-1, ignorable=True)
    leader_epoch: int = field(INT32, "0+")


@struct
class OffsetForLeaderTopic:
    topic: str = field(STRING, "0+")
    partitions: list = field(Array(OffsetForLeaderPartition), "0+")


@message(api_key=23, kind="request", valid="2-4", flexible="4+")
class OffsetForLeaderEpochRequest:
    replica_id: int = field(INT32, "3+", default=-2, ignorable=True)
    topics: list = field(Array(OffsetForLeaderTopic), "0+")


@struct
class EpochEndOffset:
    error_code: int = field(INT16, "0+")
    partition: int = field(INT32, "0+")
    leader_epoch: int = field(INT32, "1+", default=-1, ignorable=True)
    end_offset: int = field(INT64, "0+", default=-1)


@struct
class OffsetForLeaderTopicResult:
    topic: str = field(STRING, "0+")
    partitions: list = field(Array(EpochEndOffset), "0+")


@message(api_key=23, kind="response", valid="2-4", flexible="4+")
class OffsetForLeaderEpochResponse:
    throttle_time_ms: int = field(INT32, "2+", ignorable=True)
    topics: list = field(Array(OffsetForLeaderTopicResult), "0+")


API = Api(23, "OffsetForLeaderEpoch", OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse)
