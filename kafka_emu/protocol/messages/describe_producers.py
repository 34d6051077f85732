"""DescribeProducers (61): valid 0, flexible 0+ (KIP-664). ProducerEpoch is an int32 here."""

from ..schema import INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@struct
class DescribeProducersTopicRequest:
    name: str = field(STRING, "0+")
    partition_indexes: list = field(Array(INT32), "0+")


@message(api_key=61, kind="request", valid="0", flexible="0+")
class DescribeProducersRequest:
    topics: list = field(Array(DescribeProducersTopicRequest), "0+")


@struct
class DescribeProducersProducerState:
    producer_id: int = field(INT64, "0+")
    producer_epoch: int = field(INT32, "0+")
    last_sequence: int = field(INT32, "0+", default=-1)
    last_timestamp: int = field(INT64, "0+", default=-1)
    coordinator_epoch: int = field(INT32, "0+")
    current_txn_start_offset: int = field(INT64, "0+", default=-1)


@struct
class DescribeProducersPartitionResponse:
    partition_index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    active_producers: list = field(Array(DescribeProducersProducerState), "0+")


@struct
class DescribeProducersTopicResponse:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(DescribeProducersPartitionResponse), "0+")


@message(api_key=61, kind="response", valid="0", flexible="0+")
class DescribeProducersResponse:
    throttle_time_ms: int = field(INT32, "0+")
    topics: list = field(Array(DescribeProducersTopicResponse), "0+")


API = Api(61, "DescribeProducers", DescribeProducersRequest, DescribeProducersResponse)
