"""InitProducerId (22): valid 0-5, flexible 2+.

v1 same as v0 (throttle before responding); v2 flexible; v3 ProducerId/ProducerEpoch so a
producer can resume after INVALID_PRODUCER_EPOCH (KIP-360); v4 PRODUCER_FENCED; v5
TRANSACTION_ABORTABLE (KIP-890). Kafka 4.3's unstable v6 (two-phase commit, KIP-939) is not
declared.
"""

from ..schema import INT16, INT32, INT64, STRING, Api, field, message


@message(api_key=22, kind="request", valid="0-5", flexible="2+")
class InitProducerIdRequest:
    transactional_id: str | None = field(STRING, "0+", nullable="0+")
    transaction_timeout_ms: int = field(INT32, "0+")
    producer_id: int = field(INT64, "3+", default=-1)
    producer_epoch: int = field(INT16, "3+", default=-1)


@message(api_key=22, kind="response", valid="0-5", flexible="2+")
class InitProducerIdResponse:
    throttle_time_ms: int = field(INT32, "0+", ignorable=True)
    error_code: int = field(INT16, "0+")
    producer_id: int = field(INT64, "0+", default=-1)
    producer_epoch: int = field(INT16, "0+")


API = Api(22, "InitProducerId", InitProducerIdRequest, InitProducerIdResponse)
