"""Produce (0): valid 3-13, flexible 9+.

v3 is Kafka 4.0's baseline (v0-2 removed, KIP-896): TransactionalId and record format v2. v4
KAFKA_STORAGE_ERROR; v5 response LogStartOffset; v7 zstd (KIP-110); v8 RecordErrors and
ErrorMessage (KIP-467); v9 flexible; v10 tagged CurrentLeader (partition, tag 0) and
NodeEndpoints (top level, tag 0) for leader discovery (KIP-951); v11 TRANSACTION_ABORTABLE
(KIP-890); v12 same as v11; v13 topic ids replace topic names (KIP-516, Kafka 4.1).

Acks = 0 requests get no response at all; that is a handler matter, not a wire one.
"""

import uuid

from ..schema import INT16, INT32, INT64, RECORDS, STRING, UUID, Api, Array, field, message, struct


@struct
class PartitionProduceData:
    index: int = field(INT32, "0+")
    records: bytes | None = field(RECORDS, "0+", nullable="0+")


@struct
class TopicProduceData:
    name: str = field(STRING, "0-12", ignorable=True)
    topic_id: uuid.UUID = field(UUID, "13+", ignorable=True)
    partition_data: list = field(Array(PartitionProduceData), "0+")


@message(api_key=0, kind="request", valid="3-13", flexible="9+")
class ProduceRequest:
    transactional_id: str | None = field(STRING, "3+", nullable="3+", default=None)
    acks: int = field(INT16, "0+")
    timeout_ms: int = field(INT32, "0+")
    topic_data: list = field(Array(TopicProduceData), "0+")


@struct
class BatchIndexAndErrorMessage:
    batch_index: int = field(INT32, "8+")
    batch_index_error_message: str | None = field(STRING, "8+", nullable="8+", default=None)


@struct
class LeaderIdAndEpoch:
    leader_id: int = field(INT32, "10+", default=-1)
    leader_epoch: int = field(INT32, "10+", default=-1)


@struct
class PartitionProduceResponse:
    index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    base_offset: int = field(INT64, "0+")
    log_append_time_ms: int = field(INT64, "2+", default=-1, ignorable=True)
    log_start_offset: int = field(INT64, "5+", default=-1, ignorable=True)
    record_errors: list = field(Array(BatchIndexAndErrorMessage), "8+", ignorable=True)
    error_message: str | None = field(STRING, "8+", nullable="8+", default=None, ignorable=True)
    current_leader: LeaderIdAndEpoch = field(LeaderIdAndEpoch, "10+", tag=0, tagged="10+")


@struct
class TopicProduceResponse:
    name: str = field(STRING, "0-12", ignorable=True)
    topic_id: uuid.UUID = field(UUID, "13+", ignorable=True)
    partition_responses: list = field(Array(PartitionProduceResponse), "0+")


@struct
class NodeEndpoint:
    node_id: int = field(INT32, "10+")
    host: str = field(STRING, "10+")
    port: int = field(INT32, "10+")
    rack: str | None = field(STRING, "10+", nullable="10+", default=None)


@message(api_key=0, kind="response", valid="3-13", flexible="9+")
class ProduceResponse:
    responses: list = field(Array(TopicProduceResponse), "0+")
    throttle_time_ms: int = field(INT32, "1+", ignorable=True)
    node_endpoints: list = field(Array(NodeEndpoint), "10+", tag=0, tagged="10+")


API = Api(0, "Produce", ProduceRequest, ProduceResponse)
