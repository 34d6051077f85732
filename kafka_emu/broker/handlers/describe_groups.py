"""DescribeGroups v0-6: v3 AuthorizedOperations on request (Kafka 4.x's group set, and only on
entries without an error, as KafkaApis fills it in); v4 member GroupInstanceId; v6 ErrorMessage
and GROUP_ID_NOT_FOUND for unknown groups (KIP-1043; v0-5 get a "Dead" entry)."""

from __future__ import annotations

import weakref
from functools import partial

from ... import coordinator as c
from ...errors import ErrorCode
from ...protocol.messages.describe_groups import (API, DescribedGroup, DescribedGroupMember,
                                                  DescribeGroupsResponse)
from ...protocol.preencoded import EncodedArray, encode_array
from . import Handler
from ._operations import GROUP_OPERATIONS, NOT_PROVIDED


def unknown_group_is_error(version: int) -> bool:
    return version >= 6


def has_error_message(version: int) -> bool:
    return version >= 6


def render(version: int, with_operations: bool, result: c.DescribeGroupsResult):
    return DescribeGroupsResponse(groups=[
        DescribedGroup(
            error_code=g.error,
            error_message=g.error_message if has_error_message(version) else None,
            group_id=g.group_id, group_state=g.state, protocol_type=g.protocol_type,
            protocol_data=g.protocol_data,
            members=encoded_members(version, g) if g.members else [],
            authorized_operations=(GROUP_OPERATIONS if with_operations and g.error == ErrorCode.NONE
                                   else NOT_PROVIDED))
        for g in result.groups])


# The member arrays encoded for the descriptions the coordinator handed out, by the
# description's id: (a weak reference to it, {version: EncodedArray}). The coordinator hands out
# the same description while nothing it reports has changed (coordinator/admin.py), so asking
# again about an unchanged group writes the bytes encoded the first time instead of building and
# encoding every member again. An entry goes when its description is collected (the weak
# reference's callback), so the cache holds what live descriptions need and nothing more.
_ENCODED: dict[int, tuple[weakref.ref, dict[int, EncodedArray]]] = {}


def encoded_members(version: int, described: c.DescribedGroup) -> EncodedArray:
    key = id(described)
    entry = _ENCODED.get(key)
    if entry is None or entry[0]() is not described:  # (the second: never, but cheap to be sure)
        entry = _ENCODED[key] = (weakref.ref(described, partial(_forget, key)), {})
    by_version = entry[1]
    encoded = by_version.get(version)
    if encoded is None:
        # encoded straight from the coordinator's described members (a thousand for a
        # thousand-member group), which hold every field of a DescribedGroupMember, two under
        # other names: none is built twice
        encoded = by_version[version] = encode_array(
            DescribeGroupsResponse, version, DescribedGroupMember, described.members,
            _MEMBER_NAMES)
    return encoded


# DescribedGroupMember's fields the coordinator's DescribedMember holds under other names
_MEMBER_NAMES = {"member_metadata": "metadata", "member_assignment": "assignment"}


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _ENCODED.get(key)
    if entry is not None and entry[0] is ref:
        del _ENCODED[key]


async def describe_groups(ctx, request) -> DescribeGroupsResponse:
    command = c.DescribeGroups(request_id=ctx.request_id, group_ids=tuple(request.groups),
                               not_found_is_error=unknown_group_is_error(ctx.version))
    with_operations = ctx.version >= 3 and request.include_authorized_operations
    return await ctx.submit(command, partial(render, ctx.version, with_operations))


HANDLER = Handler(API, "0-6", describe_groups)
