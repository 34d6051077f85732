"""DeleteGroups (42): valid 0-2, flexible 2+. v1 responds before throttling; v2 flexible."""

from ..schema import INT16, INT32, STRING, Api, Array, field, message, struct


@message(api_key=42, kind="request", valid="0-2", flexible="2+")
class DeleteGroupsRequest:
    groups_names: list = field(Array(STRING), "0+")


@struct
class DeletableGroupResult:
    group_id: str = field(STRING, "0+")
    error_code: int = field(INT16, "0+")


@message(api_key=42, kind="response", valid="0-2", flexible="2+")
class DeleteGroupsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    results: list = field(Array(DeletableGroupResult), "0+")


API = Api(42, "DeleteGroups", DeleteGroupsRequest, DeleteGroupsResponse)
