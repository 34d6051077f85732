"""IncrementalAlterConfigs (44): valid 0-1, flexible 1+ (KIP-339).

Each config carries an operation: SET 0, DELETE 1, APPEND 2, SUBTRACT 3 (list-typed configs).
"""

from ..schema import BOOL, INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class IncrementalAlterableConfig:
    name: str = field(STRING, "0+")
    config_operation: int = field(INT8, "0+")
    value: str | None = field(STRING, "0+", nullable="0+")


@struct
class IncrementalAlterConfigsResource:
    resource_type: int = field(INT8, "0+")
    resource_name: str = field(STRING, "0+")
    configs: list = field(Array(IncrementalAlterableConfig), "0+")


@message(api_key=44, kind="request", valid="0-1", flexible="1+")
class IncrementalAlterConfigsRequest:
    resources: list = field(Array(IncrementalAlterConfigsResource), "0+")
    validate_only: bool = field(BOOL, "0+")


@struct
class IncrementalAlterConfigsResourceResponse:
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    resource_type: int = field(INT8, "0+")
    resource_name: str = field(STRING, "0+")


@message(api_key=44, kind="response", valid="0-1", flexible="1+")
class IncrementalAlterConfigsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    responses: list = field(Array(IncrementalAlterConfigsResourceResponse), "0+")


API = Api(44, "IncrementalAlterConfigs", IncrementalAlterConfigsRequest,
          IncrementalAlterConfigsResponse)
