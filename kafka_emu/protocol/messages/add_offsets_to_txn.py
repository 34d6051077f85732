"""AddOffsetsToTxn (25): valid 0-4, flexible 3+.

v1 as v0; v2 PRODUCER_FENCED; v3 flexible; v4 TRANSACTION_ABORTABLE (KIP-890).
"""

from ..schema import INT16, INT32, INT64, STRING, Api, field, message


@message(api_key=25, kind="request", valid="0-4", flexible="3+")
class AddOffsetsToTxnRequest:
    transactional_id: str = field(STRING, "0+")
    producer_id: int = field(INT64, "0+")
    producer_epoch: int = field(INT16, "0+")
    group_id: str = field(STRING, "0+")


@message(api_key=25, kind="response", valid="0-4", flexible="3+")
class AddOffsetsToTxnResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")


API = Api(25, "AddOffsetsToTxn", AddOffsetsToTxnRequest, AddOffsetsToTxnResponse)
