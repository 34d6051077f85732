"""ShareFetch (78): valid 1-2, flexible 0+ (KIP-932).

v0 was Kafka 4.0's early-access version, removed in 4.1 (with PartitionMaxBytes). v1 adds
MaxRecords, BatchSize and the response's AcquisitionLockTimeoutMs; v2 (Kafka 4.2) adds
ShareAcquireMode (KIP-1206) and IsRenewAck with acknowledge type 4, Renew (KIP-1222).
"""

import uuid

from ..schema import (BOOL, INT8, INT16, INT32, INT64, RECORDS, STRING, UUID, Api, Array, field,
                      message, struct)


@struct
class AcknowledgementBatch:
    first_offset: int = field(INT64, "0+")
    last_offset: int = field(INT64, "0+")
    acknowledge_types: list = field(Array(INT8), "0+")


@struct
class FetchPartition:
    partition_index: int = field(INT32, "0+")
    acknowledgement_batches: list = field(Array(AcknowledgementBatch), "0+")


@struct
class FetchTopic:
    topic_id: uuid.UUID = field(UUID, "0+")
    partitions: list = field(Array(FetchPartition), "0+")


@struct
class ForgottenTopic:
    topic_id: uuid.UUID = field(UUID, "0+")
    partitions: list = field(Array(INT32), "0+")


@message(api_key=78, kind="request", valid="1-2", flexible="0+")
class ShareFetchRequest:
    group_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    member_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    share_session_epoch: int = field(INT32, "0+")
    max_wait_ms: int = field(INT32, "0+")
    min_bytes: int = field(INT32, "0+")
    max_bytes: int = field(INT32, "0+", default=0x7FFFFFFF)
    max_records: int = field(INT32, "1+")
    batch_size: int = field(INT32, "1+")
    share_acquire_mode: int = field(INT8, "2+")
    is_renew_ack: bool = field(BOOL, "2+")
    topics: list = field(Array(FetchTopic), "0+")
    forgotten_topics_data: list = field(Array(ForgottenTopic), "0+")


@struct
class LeaderIdAndEpoch:
    leader_id: int = field(INT32, "0+")
    leader_epoch: int = field(INT32, "0+")


@struct
class AcquiredRecords:
    first_offset: int = field(INT64, "0+")
    last_offset: int = field(INT64, "0+")
    delivery_count: int = field(INT16, "0+")


@struct
class PartitionData:
    partition_index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    acknowledge_error_code: int = field(INT16, "0+")
    acknowledge_error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    current_leader: LeaderIdAndEpoch = field(LeaderIdAndEpoch, "0+")
    records: bytes | None = field(RECORDS, "0+", nullable="0+")
    acquired_records: list = field(Array(AcquiredRecords), "0+")


@struct
class ShareFetchableTopicResponse:
    topic_id: uuid.UUID = field(UUID, "0+")
    partitions: list = field(Array(PartitionData), "0+")


@struct
class NodeEndpoint:
    node_id: int = field(INT32, "0+")
    host: str = field(STRING, "0+")
    port: int = field(INT32, "0+")
    rack: str | None = field(STRING, "0+", nullable="0+", default=None)


@message(api_key=78, kind="response", valid="1-2", flexible="0+")
class ShareFetchResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    acquisition_lock_timeout_ms: int = field(INT32, "1+")
    responses: list = field(Array(ShareFetchableTopicResponse), "0+")
    node_endpoints: list = field(Array(NodeEndpoint), "0+")


API = Api(78, "ShareFetch", ShareFetchRequest, ShareFetchResponse)
