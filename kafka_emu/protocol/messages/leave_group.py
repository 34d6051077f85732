"""LeaveGroup (13): valid 0-5, flexible 4+.

v1 throttle; v3 batched Members replace MemberId (KIP-345); v4 flexible; v5 per-member Reason
(KIP-800).
"""

from ..schema import INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class MemberIdentity:
    member_id: str = field(STRING, "3+")
    group_instance_id: str | None = field(STRING, "3+", nullable="3+", default=None)
    reason: str | None = field(STRING, "5+", nullable="5+", default=None, ignorable=True)


@message(api_key=13, kind="request", valid="0-5", flexible="4+")
class LeaveGroupRequest:
    group_id: str = field(STRING, "0+")
    member_id: str = field(STRING, "0-2")
    members: list = field(Array(MemberIdentity), "3+")


@struct
class MemberResponse:
    member_id: str = field(STRING, "3+")
    group_instance_id: str | None = field(STRING, "3+", nullable="3+")
    error_code: int = field(INT16, "3+")


@message(api_key=13, kind="response", valid="0-5", flexible="4+")
class LeaveGroupResponse:
    throttle_time_ms: int = field(INT32, "1+", ignorable=True)
    error_code: int = field(INT16, "0+")
    members: list = field(Array(MemberResponse), "3+")


API = Api(13, "LeaveGroup", LeaveGroupRequest, LeaveGroupResponse)
