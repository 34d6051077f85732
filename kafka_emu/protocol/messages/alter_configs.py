"""AlterConfigs (33): valid 0-2, flexible 2+. Replaces a resource's whole set of overrides.

v1 same as v0 (responses before throttling); v2 flexible. Its response shape is shared with
IncrementalAlterConfigs (44).
"""

from ..schema import BOOL, INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class AlterableConfig:
    name: str = field(STRING, "0+")
    value: str | None = field(STRING, "0+", nullable="0+")


@struct
class AlterConfigsResource:
    resource_type: int = field(INT8, "0+")
    resource_name: str = field(STRING, "0+")
    configs: list = field(Array(AlterableConfig), "0+")


@message(api_key=33, kind="request", valid="0-2", flexible="2+")
class AlterConfigsRequest:
    resources: list = field(Array(AlterConfigsResource), "0+")
    validate_only: bool = field(BOOL, "0+")


@struct
class AlterConfigsResourceResponse:
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    resource_type: int = field(INT8, "0+")
    resource_name: str = field(STRING, "0+")


@message(api_key=33, kind="response", valid="0-2", flexible="2+")
class AlterConfigsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    responses: list = field(Array(AlterConfigsResourceResponse), "0+")


API = Api(33, "AlterConfigs", AlterConfigsRequest, AlterConfigsResponse)
