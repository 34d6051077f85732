"""ListGroups (16): valid 0-5, flexible 3+.

v1 throttle; v3 flexible; v4 StatesFilter and GroupState (KIP-518); v5 TypesFilter and
GroupType (KIP-848).
"""

from ..schema import INT16, INT32, STRING, Api, Array, field, message, struct


@message(api_key=16, kind="request", valid="0-5", flexible="3+")
class ListGroupsRequest:
    states_filter: list = field(Array(STRING), "4+")
    types_filter: list = field(Array(STRING), "5+")


@struct
class ListedGroup:
    group_id: str = field(STRING, "0+")
    protocol_type: str = field(STRING, "0+")
    group_state: str = field(STRING, "4+", ignorable=True)
    group_type: str = field(STRING, "5+", ignorable=True)


@message(api_key=16, kind="response", valid="0-5", flexible="3+")
class ListGroupsResponse:
    throttle_time_ms: int = field(INT32, "1+", ignorable=True)
    error_code: int = field(INT16, "0+")
    groups: list = field(Array(ListedGroup), "0+")


API = Api(16, "ListGroups", ListGroupsRequest, ListGroupsResponse)
