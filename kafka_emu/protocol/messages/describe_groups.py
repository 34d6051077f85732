"""DescribeGroups (15): valid 0-6, flexible 5+.

v1 throttle; v3 AuthorizedOperations; v4 member GroupInstanceId; v5 flexible; v6 per-group
ErrorMessage and GROUP_ID_NOT_FOUND for unknown groups (KIP-1043).
"""

from ..schema import BOOL, BYTES, INT16, INT32, STRING, Api, Array, field, message, struct

INT32_MIN = -(2**31)  # AuthorizedOperations "not provided"


@message(api_key=15, kind="request", valid="0-6", flexible="5+")
class DescribeGroupsRequest:
    groups: list = field(Array(STRING), "0+")
    include_authorized_operations: bool = field(BOOL, "3+")


@struct
class DescribedGroupMember:
    member_id: str = field(STRING, "0+")
    group_instance_id: str | None = field(STRING, "4+", nullable="4+", default=None,
                                          ignorable=True)
    client_id: str = field(STRING, "0+")
    client_host: str = field(STRING, "0+")
    member_metadata: bytes = field(BYTES, "0+")
    member_assignment: bytes = field(BYTES, "0+")


@struct
class DescribedGroup:
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "6+", nullable="6+", default=None)
    group_id: str = field(STRING, "0+")
    group_state: str = field(STRING, "0+")
    protocol_type: str = field(STRING, "0+")
    protocol_data: str = field(STRING, "0+")  # the selected protocol name
    members: list = field(Array(DescribedGroupMember), "0+")
    authorized_operations: int = field(INT32, "3+", default=INT32_MIN)


@message(api_key=15, kind="response", valid="0-6", flexible="5+")
class DescribeGroupsResponse:
    throttle_time_ms: int = field(INT32, "1+", ignorable=True)
    groups: list = field(Array(DescribedGroup), "0+")


API = Api(15, "DescribeGroups", DescribeGroupsRequest, DescribeGroupsResponse)
