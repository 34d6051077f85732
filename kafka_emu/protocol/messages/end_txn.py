"""EndTxn (26): valid 0-5, flexible 3+.

v1 as v0; v2 PRODUCER_FENCED; v3 flexible; v4 TRANSACTION_ABORTABLE; v5 transactions v2
(KIP-890 part 2): every EndTxn bumps the epoch, and the response carries the producer id and
epoch to use next.
"""

from ..schema import BOOL, INT16, INT32, INT64, STRING, Api, field, message


@message(api_key=26, kind="request", valid="0-5", flexible="3+")
class EndTxnRequest:
    transactional_id: str = field(STRING, "0+")
    producer_id: int = field(INT64, "0+")
    producer_epoch: int = field(INT16, "0+")
    committed: bool = field(BOOL, "0+")


@message(api_key=26, kind="response", valid="0-5", flexible="3+")
class EndTxnResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    producer_id: int = field(INT64, "5+", default=-1, ignorable=True)
    producer_epoch: int = field(INT16, "5+", default=-1, ignorable=True)


API = Api(26, "EndTxn", EndTxnRequest, EndTxnResponse)
