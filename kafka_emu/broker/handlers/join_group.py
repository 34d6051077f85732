"""JoinGroup v0-9: v0 has no RebalanceTimeoutMs (the session timeout stands in); v4+ a new
dynamic member must rejoin with the id it is given (MEMBER_ID_REQUIRED, KIP-394); v5 static
members; v7 returns ProtocolType and sends an empty ProtocolName as null (KIP-559); v9
SkipAssignment for a returning static leader.
"""

from __future__ import annotations

from functools import partial

from ... import coordinator as c
from ...protocol.messages.join_group import API, JoinGroupResponse, JoinGroupResponseMember
from . import Handler
from ._common import java_host
from ._topic_counts import TopicCounts


def has_rebalance_timeout(version: int) -> bool:
    return version >= 1


def requires_known_member_id(version: int) -> bool:
    return version >= 4


def has_instance_ids(version: int) -> bool:
    return version >= 5


def protocol_name_nullable(version: int) -> bool:
    return version >= 7


def supports_skip_assignment(version: int) -> bool:
    return version >= 9


def render(version: int, result: c.JoinGroupResult) -> JoinGroupResponse:
    name = result.protocol_name
    if protocol_name_nullable(version):
        name = name or None
    else:
        name = name or ""
    instance_ids = has_instance_ids(version)
    return JoinGroupResponse(
        error_code=result.error, generation_id=result.generation_id,
        protocol_type=result.protocol_type, protocol_name=name, leader=result.leader,
        skip_assignment=result.skip_assignment, member_id=result.member_id,
        members=[JoinGroupResponseMember(
            member_id=m.member_id, group_instance_id=m.group_instance_id if instance_ids else None,
            metadata=m.metadata) for m in result.members])


# one renderer per version, made once: a parked JoinGroup keeps its renderer until answered, and a
# partial of its own (with its args tuple and keywords dict) was ~190 bytes per parked member
RENDERERS = tuple(partial(render, v) for v in range(10))


async def join_group(ctx, request) -> JoinGroupResponse:
    v = ctx.version
    command = c.JoinGroup(
        request_id=ctx.request_id, group_id=request.group_id, member_id=request.member_id,
        group_instance_id=request.group_instance_id,
        session_timeout_ms=request.session_timeout_ms,
        rebalance_timeout_ms=(request.rebalance_timeout_ms if has_rebalance_timeout(v)
                              else request.session_timeout_ms),
        protocol_type=request.protocol_type,
        protocols=tuple((p.name, p.metadata) for p in request.protocols),
        client_id=ctx.client_id, client_host=java_host(ctx.connection.peer_host),
        reason=request.reason, require_known_member_id=requires_known_member_id(v),
        supports_skip_assignment=supports_skip_assignment(v), topics=TopicCounts(ctx.broker.topics))
    return await ctx.submit(command, RENDERERS[v], defer=True)  # may come back Parked


HANDLER = Handler(API, "0-9", join_group)
