"""ShareGroupDescribe v1 (KIP-932). Share groups off -> every group UNSUPPORTED_VERSION (Kafka's
isShareGroupProtocolEnabled gate answers each requested group). Unknown groups and groups of
another type get GROUP_ID_NOT_FOUND with Kafka's message, an empty id INVALID_GROUP_ID. Topics are
named by id and name; a topic deleted since is left out."""

from __future__ import annotations

from functools import partial

from ...coordinator.share.commands import ShareGroupDescribe, ShareGroupDescribeResult
from ...errors import ErrorCode
from ...protocol.messages import share_group_describe as m
from . import Handler
from ._operations import GROUP_OPERATIONS, NOT_PROVIDED
from .share_group_heartbeat import share_groups_enabled


def _assignment(ctx, partitions) -> m.ShareGroupDescribeAssignment:
    topics = []
    for name, ps in partitions:
        info = ctx.broker.topics.lookup(name)
        if info is not None:
            topics.append(m.ShareGroupDescribeTopicPartitions(
                topic_id=info.topic_id, topic_name=name, partitions=list(ps)))
    return m.ShareGroupDescribeAssignment(topic_partitions=topics)


def render(ctx, with_operations: bool, result: ShareGroupDescribeResult):
    return m.ShareGroupDescribeResponse(groups=[
        m.ShareGroupDescribeGroup(
            error_code=g.error, error_message=g.error_message, group_id=g.group_id,
            group_state=g.state if g.error == 0 else "", group_epoch=g.group_epoch,
            assignment_epoch=g.assignment_epoch, assignor_name=g.assignor_name,
            members=[m.ShareGroupDescribeMember(
                member_id=x.member_id, rack_id=x.rack_id, member_epoch=x.member_epoch,
                client_id=x.client_id, client_host=x.client_host,
                subscribed_topic_names=list(x.subscribed_topic_names),
                assignment=_assignment(ctx, x.assignment)) for x in g.members],
            authorized_operations=GROUP_OPERATIONS if with_operations and g.error == 0
            else NOT_PROVIDED)
        for g in result.groups])


async def share_group_describe(ctx, request):
    if not share_groups_enabled(ctx):
        return m.ShareGroupDescribeResponse(groups=[
            m.ShareGroupDescribeGroup(error_code=ErrorCode.UNSUPPORTED_VERSION, group_id=gid,
                                      group_state="", group_epoch=0, assignment_epoch=0,
                                      assignor_name="", members=[])
            for gid in request.group_ids])
    command = ShareGroupDescribe(request_id=ctx.request_id, group_ids=tuple(request.group_ids))
    return await ctx.submit(command, partial(render, ctx, request.include_authorized_operations))


HANDLER = Handler(m.API, "1", share_group_describe)
