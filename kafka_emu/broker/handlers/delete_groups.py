"""DeleteGroups v0-2: per group GROUP_ID_NOT_FOUND / NON_EMPTY_GROUP / deleted."""

from __future__ import annotations

from ... import coordinator as c
from ...protocol.messages.delete_groups import API, DeletableGroupResult, DeleteGroupsResponse
from . import Handler


def render(result: c.DeleteGroupsResult) -> DeleteGroupsResponse:
    return DeleteGroupsResponse(results=[
        DeletableGroupResult(group_id=group_id, error_code=error)
        for group_id, error in result.results])


async def delete_groups(ctx, request) -> DeleteGroupsResponse:
    command = c.DeleteGroups(request_id=ctx.request_id, group_ids=tuple(request.groups_names))
    return await ctx.submit(command, render)


HANDLER = Handler(API, "0-2", delete_groups)
