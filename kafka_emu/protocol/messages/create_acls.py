"""CreateAcls (30): valid 0-3, flexible 2+ (Kafka 4.0 removed v0, KIP-896).

v1 ResourcePatternType; v2 flexible; v3 the USER resource type. One result per creation, in
request order.
"""

from ..schema import INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class AclCreation:
    resource_type: int = field(INT8, "0+")
    resource_name: str = field(STRING, "0+")
    resource_pattern_type: int = field(INT8, "1+", default=3)
    principal: str = field(STRING, "0+")
    host: str = field(STRING, "0+")
    operation: int = field(INT8, "0+")
    permission_type: int = field(INT8, "0+")


@message(api_key=30, kind="request", valid="0-3", flexible="2+")
class CreateAclsRequest:
    creations: list = field(Array(AclCreation), "0+")


@struct
class AclCreationResult:
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)


@message(api_key=30, kind="response", valid="0-3", flexible="2+")
class CreateAclsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    results: list = field(Array(AclCreationResult), "0+")


API = Api(30, "CreateAcls", CreateAclsRequest, CreateAclsResponse)
