"""ConsumerGroupDescribe v0-1 (KIP-848): v1 adds the member's MemberType (KIP-1099). Unknown
groups and classic groups get GROUP_ID_NOT_FOUND with Kafka's message; an empty id
INVALID_GROUP_ID. Topics are named by id and name; a topic deleted since is left out."""

from __future__ import annotations

from functools import partial

from ...coordinator import consumer as cg
from ...protocol.messages import consumer_group_describe as m
from . import Handler
from ._operations import GROUP_OPERATIONS, NOT_PROVIDED


def _assignment(ctx, partitions) -> m.ConsumerGroupDescribeAssignment:
    topics = []
    for name, ps in partitions:
        info = ctx.broker.topics.lookup(name)
        if info is not None:
            topics.append(m.ConsumerGroupDescribeTopicPartitions(
                topic_id=info.topic_id, topic_name=name, partitions=list(ps)))
    return m.ConsumerGroupDescribeAssignment(topic_partitions=topics)


def render(ctx, with_operations: bool, result: cg.ConsumerGroupDescribeResult):
    return m.ConsumerGroupDescribeResponse(groups=[
        m.ConsumerGroupDescribeGroup(
            error_code=g.error, error_message=g.error_message, group_id=g.group_id,
            group_state=g.state if g.error == 0 else "", group_epoch=g.group_epoch,
            assignment_epoch=g.assignment_epoch, assignor_name=g.assignor_name,
            members=[m.ConsumerGroupDescribeMember(
                member_id=x.member_id, instance_id=x.instance_id, rack_id=x.rack_id,
                member_epoch=x.member_epoch, client_id=x.client_id, client_host=x.client_host,
                subscribed_topic_names=list(x.subscribed_topic_names),
                subscribed_topic_regex=x.subscribed_topic_regex,
                assignment=_assignment(ctx, x.assignment),
                target_assignment=_assignment(ctx, x.target_assignment),
                member_type=x.member_type) for x in g.members],
            authorized_operations=GROUP_OPERATIONS if with_operations and g.error == 0
            else NOT_PROVIDED)
        for g in result.groups])


async def consumer_group_describe(ctx, request):
    command = cg.ConsumerGroupDescribe(request_id=ctx.request_id,
                                       group_ids=tuple(request.group_ids))
    return await ctx.submit(command, partial(render, ctx, request.include_authorized_operations))


HANDLER = Handler(m.API, "0-1", consumer_group_describe)
