"""DeleteAcls (31): valid 0-3, flexible 2+ (Kafka 4.0 removed v0, KIP-896).

v1 PatternTypeFilter and the matching ACLs' PatternType; v2 flexible; v3 the USER resource
type. One filter result per filter, in request order, listing the ACLs it deleted.
"""

from ..schema import INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class DeleteAclsFilter:
    resource_type_filter: int = field(INT8, "0+")
    resource_name_filter: str | None = field(STRING, "0+", nullable="0+", default=None)
    pattern_type_filter: int = field(INT8, "1+", default=3)
    principal_filter: str | None = field(STRING, "0+", nullable="0+", default=None)
    host_filter: str | None = field(STRING, "0+", nullable="0+", default=None)
    operation: int = field(INT8, "0+")
    permission_type: int = field(INT8, "0+")


@message(api_key=31, kind="request", valid="0-3", flexible="2+")
class DeleteAclsRequest:
    filters: list = field(Array(DeleteAclsFilter), "0+")


@struct
class DeleteAclsMatchingAcl:
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    resource_type: int = field(INT8, "0+")
    resource_name: str = field(STRING, "0+")
    pattern_type: int = field(INT8, "1+", default=3)
    principal: str = field(STRING, "0+")
    host: str = field(STRING, "0+")
    operation: int = field(INT8, "0+")
    permission_type: int = field(INT8, "0+")


@struct
class DeleteAclsFilterResult:
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    matching_acls: list = field(Array(DeleteAclsMatchingAcl), "0+")


@message(api_key=31, kind="response", valid="0-3", flexible="2+")
class DeleteAclsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    filter_results: list = field(Array(DeleteAclsFilterResult), "0+")


API = Api(31, "DeleteAcls", DeleteAclsRequest, DeleteAclsResponse)
