"""OffsetFetch v1-10 (v0 was removed in Kafka 4.0, KIP-896): v2 null Topics = all, and a
top-level ErrorCode; v5 leader epoch; v7
RequireStable (a partition with pending transactional offsets, TxnOffsetCommit not yet ended by
its marker, is UNSTABLE_OFFSET_COMMIT; without it pending offsets are simply not seen); v8
batches groups (KIP-709); v9 MemberId/MemberEpoch (ignored for classic groups); v10 topics by
id (KIP-848): ids resolve to names before the coordinator is asked, an id no topic has answers
its partitions UNKNOWN_TOPIC_ID, and a fetch of all offsets leaves out those of topics that no
longer exist (they have no id to name them by), as KafkaApis does.
Unknown groups and partitions are not errors: offset -1, metadata "" (reference 4.2). A v1
group error is copied onto each partition of the group result.
"""

from __future__ import annotations

import attrs

from ... import coordinator as c
from ...errors import ErrorCode
from ...protocol.messages import offset_fetch as m
from . import Handler


def batches_groups(version: int) -> bool:
    return version >= 8


def has_top_level_error(version: int) -> bool:
    return 2 <= version <= 7


def uses_topic_ids(version: int) -> bool:
    return version >= 10


def _by_topic(result: c.OffsetFetchResult, make_partition, make_topic, group_error=None):
    topics: dict[str, list] = {}
    for f in result.partitions:
        topics.setdefault(f.topic, []).append(make_partition(
            partition_index=f.partition, committed_offset=f.offset,
            committed_leader_epoch=f.leader_epoch, metadata=f.metadata,
            error_code=group_error if group_error else f.error))
    return [make_topic(name=name, partitions=parts) for name, parts in topics.items()]


async def _fetch(ctx, group_id: str, topics, require_stable: bool, member_id=None,
                 member_epoch: int = -1) -> c.OffsetFetchResult:
    command = c.OffsetFetch(member_id=member_id, member_epoch=member_epoch,
        request_id=ctx.broker.new_request_id(), group_id=group_id,
        topics=None if topics is None else tuple((t.name, tuple(t.partition_indexes))
                                                 for t in topics),
        require_stable=require_stable)
    return await ctx.submit(command, lambda result: result)


async def offset_fetch(ctx, request):
    v = ctx.version
    if batches_groups(v):
        groups = []
        by_id = uses_topic_ids(v)
        for g in request.groups:
            topics, unknown = (_resolve_ids(ctx, g.topics) if by_id and g.topics is not None
                               else (g.topics, []))
            result = await _fetch(ctx, g.group_id, topics, request.require_stable,
                                  g.member_id, g.member_epoch)
            answered = _by_topic(result, m.OffsetFetchResponsePartitions,
                                 m.OffsetFetchResponseTopics)
            if by_id:
                answered = unknown + _with_ids(ctx, answered)
            groups.append(m.OffsetFetchResponseGroup(
                group_id=g.group_id, error_code=result.error, topics=answered))
        return m.OffsetFetchResponse(groups=groups)
    result = await _fetch(ctx, request.group_id, request.topics, request.require_stable)
    if has_top_level_error(v):
        return m.OffsetFetchResponse(
            error_code=result.error,
            topics=_by_topic(result, m.OffsetFetchResponsePartition, m.OffsetFetchResponseTopic))
    group_error = result.error if result.error != ErrorCode.NONE else None
    return m.OffsetFetchResponse(topics=_by_topic(
        result, m.OffsetFetchResponsePartition, m.OffsetFetchResponseTopic, group_error))


def _resolve_ids(ctx, topics) -> tuple[list, list]:
    """(the requested topics named, the answers for ids no topic has)."""
    get_by_id = ctx.broker.topics.catalogue.get_by_id
    named, unknown = [], []
    for t in topics:
        topic = get_by_id(t.topic_id)
        if topic is None:
            unknown.append(m.OffsetFetchResponseTopics(topic_id=t.topic_id, partitions=[
                m.OffsetFetchResponsePartitions(partition_index=i, committed_offset=-1,
                                                metadata="", error_code=ErrorCode.UNKNOWN_TOPIC_ID)
                for i in t.partition_indexes]))
        else:
            named.append(attrs.evolve(t, name=topic.name))
    return named, unknown


def _with_ids(ctx, answered: list) -> list:
    get = ctx.broker.topics.catalogue.get
    return [attrs.evolve(t, topic_id=topic.topic_id) for t in answered
            for topic in [get(t.name)] if topic is not None]


HANDLER = Handler(m.API, "1-10", offset_fetch)
