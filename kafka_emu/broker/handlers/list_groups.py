"""ListGroups v0-5: v4 StatesFilter and GroupState (KIP-518, case-insensitive); v5
TypesFilter and GroupType (KIP-848)."""

from __future__ import annotations

from ... import coordinator as c
from ...protocol.messages.list_groups import API, ListedGroup, ListGroupsResponse
from . import Handler


def render(result: c.ListGroupsResult) -> ListGroupsResponse:
    return ListGroupsResponse(error_code=result.error, groups=[
        ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state,
                    group_type=g.group_type) for g in result.groups])


async def list_groups(ctx, request) -> ListGroupsResponse:
    command = c.ListGroups(request_id=ctx.request_id,
                           states_filter=tuple(request.states_filter),
                           types_filter=tuple(request.types_filter))
    return await ctx.submit(command, render)


HANDLER = Handler(API, "0-5", list_groups)
