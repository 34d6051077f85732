"""ShareAcknowledge (79): valid 1-2, flexible 0+ (KIP-932).

v0 was Kafka 4.0's early-access version, removed in 4.1. v2 (Kafka 4.2, KIP-1222) adds
IsRenewAck (acknowledge type 4, Renew) and the response's AcquisitionLockTimeoutMs.
"""

import uuid

from ..schema import BOOL, INT8, INT16, INT32, INT64, STRING, UUID, Api, Array, field, message, struct


@struct
class AcknowledgementBatch:
    first_offset: int = field(INT64, "0+")
    last_offset: int = field(INT64, "0+")
    acknowledge_types: list = field(Array(INT8), "0+")


@struct
class AcknowledgePartition:
    partition_index: int = field(INT32, "0+")
    acknowledgement_batches: list = field(Array(AcknowledgementBatch), "0+")


@struct
class AcknowledgeTopic:
    topic_id: uuid.UUID = field(UUID, "0+")
    partitions: list = field(Array(AcknowledgePartition), "0+")


@message(api_key=79, kind="request", valid="1-2", flexible="0+")
class ShareAcknowledgeRequest:
    group_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    member_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    share_session_epoch: int = field(INT32, "0+")
    is_renew_ack: bool = field(BOOL, "2+")
    topics: list = field(Array(AcknowledgeTopic), "0+")


@struct
class LeaderIdAndEpoch:
    leader_id: int = field(INT32, "0+")
    leader_epoch: int = field(INT32, "0+")


@struct
class PartitionData:
    partition_index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    current_leader: LeaderIdAndEpoch = field(LeaderIdAndEpoch, "0+")


@struct
class ShareAcknowledgeTopicResponse:
    topic_id: uuid.UUID = field(UUID, "0+")
    partitions: list = field(Array(PartitionData), "0+")


@struct
class NodeEndpoint:
    node_id: int = field(INT32, "0+")
    host: str = field(STRING, "0+")
    port: int = field(INT32, "0+")
    rack: str | None = field(STRING, "0+", nullable="0+", default=None)


@message(api_key=79, kind="response", valid="1-2", flexible="0+")
class ShareAcknowledgeResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    acquisition_lock_timeout_ms: int = field(INT32, "2+")
    responses: list = field(Array(ShareAcknowledgeTopicResponse), "0+")
    node_endpoints: list = field(Array(NodeEndpoint), "0+")


API = Api(79, "ShareAcknowledge", ShareAcknowledgeRequest, ShareAcknowledgeResponse)
