"""ListConfigResources (74): valid 0-1, flexible 0+ (KIP-714 as ListClientMetricsResources, renamed
and widened by KIP-1142).

v0 lists client-metrics resources only; v1 adds the request's ResourceTypes filter (empty: every
type the version supports) and each resource's ResourceType in the answer (default 16, client
metrics, the only type v0 knows).
"""

from ..schema import INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@message(api_key=74, kind="request", valid="0-1", flexible="0+")
class ListConfigResourcesRequest:
    resource_types: list = field(Array(INT8), "1+")


@struct
class ConfigResource:
    resource_name: str = field(STRING, "0+")
    resource_type: int = field(INT8, "1+", default=16, ignorable=True)


@message(api_key=74, kind="response", valid="0-1", flexible="0+")
class ListConfigResourcesResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    config_resources: list = field(Array(ConfigResource), "0+")


API = Api(74, "ListConfigResources", ListConfigResourcesRequest, ListConfigResourcesResponse)
