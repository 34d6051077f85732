"""ListTransactions (66): valid 0-2, flexible 0+ (KIP-664); v1 DurationFilter (KIP-994), v2
TransactionalIdPattern (KIP-1152)."""

from ..schema import INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@message(api_key=66, kind="request", valid="0-2", flexible="0+")
class ListTransactionsRequest:
    state_filters: list = field(Array(STRING), "0+")
    producer_id_filters: list = field(Array(INT64), "0+")
    duration_filter: int = field(INT64, "1+", default=-1)
    transactional_id_pattern: str | None = field(STRING, "2+", nullable="2+", default=None)


@struct
class ListTransactionsState:
    transactional_id: str = field(STRING, "0+")
    producer_id: int = field(INT64, "0+")
    transaction_state: str = field(STRING, "0+")


@message(api_key=66, kind="response", valid="0-2", flexible="0+")
class ListTransactionsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    unknown_state_filters: list = field(Array(STRING), "0+")
    transaction_states: list = field(Array(ListTransactionsState), "0+")


API = Api(66, "ListTransactions", ListTransactionsRequest, ListTransactionsResponse)
