"""DescribeTransactions (65): valid 0, flexible 0+ (KIP-664)."""

from ..schema import INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@message(api_key=65, kind="request", valid="0", flexible="0+")
class DescribeTransactionsRequest:
    transactional_ids: list = field(Array(STRING), "0+")


@struct
class DescribeTransactionsTopicData:
    topic: str = field(STRING, "0+")
    partitions: list = field(Array(INT32), "0+")


@struct
class DescribeTransactionsState:
    error_code: int = field(INT16, "0+")
    transactional_id: str = field(STRING, "0+")
    transaction_state: str = field(STRING, "0+")
    transaction_timeout_ms: int = field(INT32, "0+")
    transaction_start_time_ms: int = field(INT64, "0+")
    producer_id: int = field(INT64, "0+")
    producer_epoch: int = field(INT16, "0+")
    topics: list = field(Array(DescribeTransactionsTopicData), "0+")


@message(api_key=65, kind="response", valid="0", flexible="0+")
class DescribeTransactionsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    transaction_states: list = field(Array(DescribeTransactionsState), "0+")


API = Api(65, "DescribeTransactions", DescribeTransactionsRequest, DescribeTransactionsResponse)
