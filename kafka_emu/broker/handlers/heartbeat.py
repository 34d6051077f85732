"""Heartbeat v0-4: v3 GroupInstanceId. All the state logic lives in the coordinator."""

from __future__ import annotations

from ... import coordinator as c
from ...protocol.messages.heartbeat import API, HeartbeatResponse
from . import Handler


# one frozen response per error code, made on first use and shared: a Heartbeat's answer is
# nothing else
_RESPONSES: dict[int, HeartbeatResponse] = {}


def render(result: c.HeartbeatResult) -> HeartbeatResponse:
    response = _RESPONSES.get(result.error)
    if response is None:
        response = _RESPONSES[result.error] = HeartbeatResponse(error_code=result.error)
    return response


async def heartbeat(ctx, request) -> HeartbeatResponse:
    command = c.Heartbeat(request_id=ctx.request_id, group_id=request.group_id,
                          generation_id=request.generation_id, member_id=request.member_id,
                          group_instance_id=request.group_instance_id)
    return await ctx.submit(command, render)


HANDLER = Handler(API, "0-4", heartbeat)
