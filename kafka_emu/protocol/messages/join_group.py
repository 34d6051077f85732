"""JoinGroup (11): valid 0-9, flexible 6+.

v1 RebalanceTimeoutMs; v2 throttle; v4 MEMBER_ID_REQUIRED round trip (KIP-394); v5
GroupInstanceId (KIP-345); v6 flexible; v7 response ProtocolType, nullable ProtocolName
(KIP-559); v8 Reason (KIP-800); v9 SkipAssignment.
"""

from ..schema import BOOL, BYTES, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class JoinGroupRequestProtocol:
    name: str = field(STRING, "0+")
    metadata: bytes = field(BYTES, "0+")


@message(api_key=11, kind="request", valid="0-9", flexible="6+")
class JoinGroupRequest:
    group_id: str = field(STRING, "0+")
    session_timeout_ms: int = field(INT32, "0+")
    rebalance_timeout_ms: int = field(INT32, "1+", default=-1, ignorable=True)
    member_id: str = field(STRING, "0+")
    group_instance_id: str | None = field(STRING, "5+", nullable="5+", default=None)
    protocol_type: str = field(STRING, "0+")
    protocols: list = field(Array(JoinGroupRequestProtocol), "0+")
    reason: str | None = field(STRING, "8+", nullable="8+", default=None, ignorable=True)


@struct
class JoinGroupResponseMember:
    member_id: str = field(STRING, "0+")
    group_instance_id: str | None = field(STRING, "5+", nullable="5+", default=None,
                                          ignorable=True)
    metadata: bytes = field(BYTES, "0+")


@message(api_key=11, kind="response", valid="0-9", flexible="6+")
class JoinGroupResponse:
    throttle_time_ms: int = field(INT32, "2+", ignorable=True)
    error_code: int = field(INT16, "0+")
    generation_id: int = field(INT32, "0+", default=-1)
    protocol_type: str | None = field(STRING, "7+", nullable="7+", default=None, ignorable=True)
    protocol_name: str | None = field(STRING, "0+", nullable="7+")
    leader: str = field(STRING, "0+")
    skip_assignment: bool = field(BOOL, "9+")
    member_id: str = field(STRING, "0+")
    members: list = field(Array(JoinGroupResponseMember), "0+")


API = Api(11, "JoinGroup", JoinGroupRequest, JoinGroupResponse)
