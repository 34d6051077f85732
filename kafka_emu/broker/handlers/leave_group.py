"""LeaveGroup v0-5: v0-2 name one member and answer with one code (the top-level error if any,
else that member's); v3+ batch members by id and instance id (KIP-345); v5 per-member Reason.
"""

from __future__ import annotations

from functools import partial

from ... import coordinator as c
from ...errors import ErrorCode
from ...protocol.messages.leave_group import API, LeaveGroupResponse, MemberResponse
from . import Handler


def batches_members(version: int) -> bool:
    return version >= 3


def render(version: int, result: c.LeaveGroupResult) -> LeaveGroupResponse:
    if not batches_members(version):
        error = result.error
        if error == ErrorCode.NONE and result.members:
            error = result.members[0].error
        return LeaveGroupResponse(error_code=error)
    return LeaveGroupResponse(error_code=result.error, members=[
        MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id,
                       error_code=m.error) for m in result.members])


async def leave_group(ctx, request) -> LeaveGroupResponse:
    if batches_members(ctx.version):
        members = tuple(c.LeaveMember(member_id=m.member_id,
                                      group_instance_id=m.group_instance_id, reason=m.reason)
                        for m in request.members)
    else:
        members = (c.LeaveMember(member_id=request.member_id),)
    command = c.LeaveGroup(request_id=ctx.request_id, group_id=request.group_id,
                           members=members)
    return await ctx.submit(command, partial(render, ctx.version))


HANDLER = Handler(API, "0-5", leave_group)
