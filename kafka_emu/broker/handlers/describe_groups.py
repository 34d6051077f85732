"""DescribeGroups v0-6: v3 AuthorizedOperations on request (Kafka 4.x's group set, and only on
entries without an error, as KafkaApis fills it in); v4 member GroupInstanceId; v6 ErrorMessage
and GROUP_ID_NOT_FOUND for unknown groups (KIP-1043; v0-5 get a "Dead" entry)."""

from __future__ import annotations

from functools import partial

from ... import coordinator as c
from ...errors import ErrorCode
from ...protocol.messages.describe_groups import (API, DescribedGroup, DescribedGroupMember,
                                                  DescribeGroupsResponse)
from . import Handler
from ._operations import GROUP_OPERATIONS, NOT_PROVIDED


def unknown_group_is_error(version: int) -> bool:
    return version >= 6


def has_error_message(version: int) -> bool:
    return version >= 6


def render(version: int, with_operations: bool, result: c.DescribeGroupsResult):
    member = DescribedGroupMember  # a thousand of them for a thousand-member group
    return DescribeGroupsResponse(groups=[
        DescribedGroup(
            error_code=g.error,
            error_message=g.error_message if has_error_message(version) else None,
            group_id=g.group_id, group_state=g.state, protocol_type=g.protocol_type,
            protocol_data=g.protocol_data,
            members=[member(
                member_id=m.member_id, group_instance_id=m.group_instance_id,
                client_id=m.client_id, client_host=m.client_host, member_metadata=m.metadata,
                member_assignment=m.assignment) for m in g.members],
            authorized_operations=(GROUP_OPERATIONS if with_operations and g.error == ErrorCode.NONE
                                   else NOT_PROVIDED))
        for g in result.groups])


async def describe_groups(ctx, request) -> DescribeGroupsResponse:
    command = c.DescribeGroups(request_id=ctx.request_id, group_ids=tuple(request.groups),
                               not_found_is_error=unknown_group_is_error(ctx.version))
    with_operations = ctx.version >= 3 and request.include_authorized_operations
    return await ctx.submit(command, partial(render, ctx.version, with_operations))


HANDLER = Handler(API, "0-6", describe_groups)
