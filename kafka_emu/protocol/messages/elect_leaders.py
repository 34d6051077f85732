"""ElectLeaders (43): valid 0-2, flexible 2+.

v1 ElectionType (KIP-460: 0 preferred, 1 unclean) and a top-level ErrorCode; v2 flexible.
"""

from ..schema import INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class TopicPartitions:
    topic: str = field(STRING, "0+")
    partitions: list = field(Array(INT32), "0+")


@message(api_key=43, kind="request", valid="0-2", flexible="2+")
class ElectLeadersRequest:
    election_type: int = field(INT8, "1+")
    topic_partitions: list | None = field(Array(TopicPartitions), "0+", nullable="0+",
                                          default=None)
    timeout_ms: int = field(INT32, "0+", default=60000)


@struct
class PartitionResult:
    partition_id: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)


@struct
class ReplicaElectionResult:
    topic: str = field(STRING, "0+")
    partition_result: list = field(Array(PartitionResult), "0+")


@message(api_key=43, kind="response", valid="0-2", flexible="2+")
class ElectLeadersResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "1+")
    replica_election_results: list = field(Array(ReplicaElectionResult), "0+")


API = Api(43, "ElectLeaders", ElectLeadersRequest, ElectLeadersResponse)
