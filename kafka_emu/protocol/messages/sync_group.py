"""SyncGroup (14): valid 0-5, flexible 4+.

v1 throttle; v3 GroupInstanceId (KIP-345); v4 flexible; v5 ProtocolType and ProtocolName in
request and response (KIP-559).
"""

from ..schema import BYTES, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class SyncGroupRequestAssignment:
    member_id: str = field(STRING, "0+")
    assignment: bytes = field(BYTES, "0+")


@message(api_key=14, kind="request", valid="0-5", flexible="4+")
class SyncGroupRequest:
    group_id: str = field(STRING, "0+")
    generation_id: int = field(INT32, "0+")
    member_id: str = field(STRING, "0+")
    group_instance_id: str | None = field(STRING, "3+", nullable="3+", default=None)
    protocol_type: str | None = field(STRING, "5+", nullable="5+", default=None, ignorable=True)
    protocol_name: str | None = field(STRING, "5+", nullable="5+", default=None, ignorable=True)
    assignments: list = field(Array(SyncGroupRequestAssignment), "0+")


@message(api_key=14, kind="response", valid="0-5", flexible="4+")
class SyncGroupResponse:
    throttle_time_ms: int = field(INT32, "1+", ignorable=True)
    error_code: int = field(INT16, "0+")
    protocol_type: str | None = field(STRING, "5+", nullable="5+", default=None, ignorable=True)
    protocol_name: str | None = field(STRING, "5+", nullable="5+", default=None, ignorable=True)
    assignment: bytes = field(BYTES, "0+")


API = Api(14, "SyncGroup", SyncGroupRequest, SyncGroupResponse)
