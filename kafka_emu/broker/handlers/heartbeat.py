"""Heartbeat v0-4: v3 GroupInstanceId. All the state logic lives in the coordinator."""

from __future__ import annotations

from ... import coordinator as c
from ...frozen import mutable_twin
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


Heartbeat = c.Heartbeat
_HeartbeatTwin = mutable_twin(Heartbeat)


async def heartbeat(ctx, request) -> HeartbeatResponse:
    # Heartbeat(...) built in its mutable twin by plain attribute stores, then given its class
    # (frozen.mutable_twin): the same frozen instance, without a call of fast_init's __init__
    # and a slot descriptor's __set__ per field.
    command = _HeartbeatTwin()
    command.request_id, command.group_id = ctx.request_id, request.group_id
    command.generation_id, command.member_id = request.generation_id, request.member_id
    command.group_instance_id = request.group_instance_id
    command.__class__ = Heartbeat
    return await ctx.submit(command, render)


HANDLER = Handler(API, "0-4", heartbeat)
