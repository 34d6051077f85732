"""DescribeAcls (29): valid 0-3, flexible 2+ (Kafka 4.0 removed v0, KIP-896).

v1 PatternTypeFilter and the resources' PatternType; v2 flexible; v3 the USER resource type.
"""

from ..schema import INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@message(api_key=29, kind="request", valid="0-3", flexible="2+")
class DescribeAclsRequest:
    resource_type_filter: int = field(INT8, "0+")
    resource_name_filter: str | None = field(STRING, "0+", nullable="0+", default=None)
    pattern_type_filter: int = field(INT8, "1+", default=3)
    principal_filter: str | None = field(STRING, "0+", nullable="0+", default=None)
    host_filter: str | None = field(STRING, "0+", nullable="0+", default=None)
    operation: int = field(INT8, "0+")
    permission_type: int = field(INT8, "0+")


@struct
class AclDescription:
    principal: str = field(STRING, "0+")
    host: str = field(STRING, "0+")
    operation: int = field(INT8, "0+")
    permission_type: int = field(INT8, "0+")


@struct
class DescribeAclsResource:
    resource_type: int = field(INT8, "0+")
    resource_name: str = field(STRING, "0+")
    pattern_type: int = field(INT8, "1+", default=3)
    acls: list = field(Array(AclDescription), "0+")


@message(api_key=29, kind="response", valid="0-3", flexible="2+")
class DescribeAclsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    resources: list = field(Array(DescribeAclsResource), "0+")


API = Api(29, "DescribeAcls", DescribeAclsRequest, DescribeAclsResponse)
