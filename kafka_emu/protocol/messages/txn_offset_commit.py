"""TxnOffsetCommit (28): valid 0-5, flexible 3+.

v2 CommittedLeaderEpoch; v3 GenerationId, MemberId, GroupInstanceId (KIP-447); v4 may answer
TRANSACTION_ABORTABLE (KIP-890); v5 the same as v4, sent by transactions-v2 producers, whose
TxnOffsetCommit also adds the group to the transaction (KIP-890 part 2).
"""

from ..schema import INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@struct
class TxnOffsetCommitRequestPartition:
    partition_index: int = field(INT32, "0+")
    committed_offset: int = field(INT64, "0+")
    committed_leader_epoch: int = field(INT32, "2+", default=-1, ignorable=True)
    committed_metadata: str | None = field(STRING, "0+", nullable="0+")


@struct
class TxnOffsetCommitRequestTopic:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(TxnOffsetCommitRequestPartition), "0+")


@message(api_key=28, kind="request", valid="0-5", flexible="3+")
class TxnOffsetCommitRequest:
    transactional_id: str = field(STRING, "0+")
    group_id: str = field(STRING, "0+")
    producer_id: int = field(INT64, "0+")
    producer_epoch: int = field(INT16, "0+")
    generation_id: int = field(INT32, "3+", default=-1)
    member_id: str = field(STRING, "3+", default="")
    group_instance_id: str | None = field(STRING, "3+", nullable="3+", default=None)
    topics: list = field(Array(TxnOffsetCommitRequestTopic), "0+")


@struct
class TxnOffsetCommitResponsePartition:
    partition_index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")


@struct
class TxnOffsetCommitResponseTopic:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(TxnOffsetCommitResponsePartition), "0+")


@message(api_key=28, kind="response", valid="0-5", flexible="3+")
class TxnOffsetCommitResponse:
    throttle_time_ms: int = field(INT32, "0+")
    topics: list = field(Array(TxnOffsetCommitResponseTopic), "0+")


API = Api(28, "TxnOffsetCommit", TxnOffsetCommitRequest, TxnOffsetCommitResponse)
