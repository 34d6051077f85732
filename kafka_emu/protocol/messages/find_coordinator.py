"""FindCoordinator (10): valid 0-6, flexible 3+.

v1 KeyType, response throttle and ErrorMessage; v3 flexible; v4 batched CoordinatorKeys with one
Coordinators entry per key (KIP-699); v5 may return TRANSACTION_ABORTABLE; v6 SHARE key type.
"""

from ..schema import INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@message(api_key=10, kind="request", valid="0-6", flexible="3+")
class FindCoordinatorRequest:
    key: str = field(STRING, "0-3")
    key_type: int = field(INT8, "1+")  # 0 group, 1 transaction, 2 share (v6+)
    coordinator_keys: list = field(Array(STRING), "4+")


@struct
class Coordinator:
    key: str = field(STRING, "4+")
    node_id: int = field(INT32, "4+")
    host: str = field(STRING, "4+")
    port: int = field(INT32, "4+")
    error_code: int = field(INT16, "4+")
    error_message: str | None = field(STRING, "4+", nullable="4+", ignorable=True)


@message(api_key=10, kind="response", valid="0-6", flexible="3+")
class FindCoordinatorResponse:
    throttle_time_ms: int = field(INT32, "1+", ignorable=True)
    error_code: int = field(INT16, "0-3")
    error_message: str | None = field(STRING, "1-3", nullable="1-3", ignorable=True)
    node_id: int = field(INT32, "0-3")
    host: str = field(STRING, "0-3")
    port: int = field(INT32, "0-3")
    coordinators: list = field(Array(Coordinator), "4+")


API = Api(10, "FindCoordinator", FindCoordinatorRequest, FindCoordinatorResponse)
