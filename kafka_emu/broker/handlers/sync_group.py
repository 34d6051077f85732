"""SyncGroup v0-5: v3 GroupInstanceId; v5 carries ProtocolType/ProtocolName both ways, and a
request with either null is refused with INCONSISTENT_GROUP_PROTOCOL before the coordinator
sees it (KafkaApis.handleSyncGroupRequest; reference 3.4 / 3.10).
"""

from __future__ import annotations


from ... import coordinator as c
from ...errors import ErrorCode
from ...protocol.messages.sync_group import API, SyncGroupResponse
from . import Handler


def requires_protocol_fields(version: int) -> bool:
    return version >= 5


def render(result: c.SyncGroupResult) -> SyncGroupResponse:
    return SyncGroupResponse(error_code=result.error, protocol_type=result.protocol_type,
                             protocol_name=result.protocol_name, assignment=result.assignment)


async def sync_group(ctx, request) -> SyncGroupResponse:
    if requires_protocol_fields(ctx.version) and (request.protocol_type is None
                                                  or request.protocol_name is None):
        return SyncGroupResponse(error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    command = c.SyncGroup(
        request_id=ctx.request_id, group_id=request.group_id,
        generation_id=request.generation_id, member_id=request.member_id,
        group_instance_id=request.group_instance_id, protocol_type=request.protocol_type,
        protocol_name=request.protocol_name,
        assignments=tuple((a.member_id, a.assignment) for a in request.assignments))
    return await ctx.submit(command, render, defer=True)  # may come back Parked


HANDLER = Handler(API, "0-5", sync_group)
