"""Heartbeat (12): valid 0-4, flexible 4+. v1 throttle; v3 GroupInstanceId (KIP-345)."""

from ..schema import INT16, INT32, STRING, Api, field, message


@message(api_key=12, kind="request", valid="0-4", flexible="4+")
class HeartbeatRequest:
    group_id: str = field(STRING, "0+")
    generation_id: int = field(INT32, "0+")
    member_id: str = field(STRING, "0+")
    group_instance_id: str | None = field(STRING, "3+", nullable="3+", default=None)


@message(api_key=12, kind="response", valid="0-4", flexible="4+")
class HeartbeatResponse:
    throttle_time_ms: int = field(INT32, "1+", ignorable=True)
    error_code: int = field(INT16, "0+")


API = Api(12, "Heartbeat", HeartbeatRequest, HeartbeatResponse)
