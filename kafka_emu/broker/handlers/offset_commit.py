"""OffsetCommit v2-10 (v0-1 were removed in Kafka 4.0, KIP-896): v2-4 RetentionTimeMs; v6 leader
epoch; v7 GroupInstanceId; v9 GROUP_ID_NOT_FOUND for a missing group with a generation (v0-8
ILLEGAL_GENERATION); v10 topics by id: as KafkaApis, ids are resolved to names first and the
partitions of an id no topic has are UNKNOWN_TOPIC_ID (listed first, as Kafka's response builder
adds them before the coordinator answers). Partitions of unknown topics get
UNKNOWN_TOPIC_OR_PARTITION from the front end, as in KafkaApis; the rest go to the coordinator.
"""

from __future__ import annotations

from functools import partial

from ... import coordinator as c
from ...bounded import remember
from ...errors import ErrorCode
import attrs

from ...frozen import mutable_twin
from ...protocol.messages.offset_commit import (API, OffsetCommitResponse,
                                                OffsetCommitResponsePartition,
                                                OffsetCommitResponseTopic)
from ...protocol.preencoded import encode_array
from . import Handler
from ._common import by_topic


def missing_group_is_not_found(version: int) -> bool:
    return version >= 9


def supports_member_epochs(version: int) -> bool:
    """v9+: commits from consumer group (KIP-848) members, checked against their member epoch."""
    return version >= 9


_NONE = ErrorCode.NONE
_UNKNOWN = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
CommitOffset, OffsetCommit = c.CommitOffset, c.OffsetCommit
_CommitOffsetTwin, _OffsetCommitTwin = mutable_twin(CommitOffset), mutable_twin(OffsetCommit)


def render(order, rejected: dict, result) -> OffsetCommitResponse:
    errors = dict(rejected)
    if result is not None:
        errors.update({(p.topic, p.partition): p.error for p in result.partitions})
    return OffsetCommitResponse(topics=by_topic(order, errors, OffsetCommitResponsePartition,
                                                OffsetCommitResponseTopic))


def render_all_known(order, result) -> OffsetCommitResponse:
    """``render`` when every partition reached the coordinator: its results are in request
    order, one per partition, so they are regrouped as they come."""
    partitions = result.partitions
    if len(partitions) == 1:  # the usual commit: one partition
        p = partitions[0]
        return OffsetCommitResponse(topics=[OffsetCommitResponseTopic(name=p.topic, partitions=[
            OffsetCommitResponsePartition(partition_index=p.partition, error_code=p.error)])])
    topics: dict[str, list] = {}
    for p in partitions:
        parts = topics.get(p.topic)
        if parts is None:
            parts = topics[p.topic] = []
        parts.append(OffsetCommitResponsePartition(partition_index=p.partition, error_code=p.error))
    return OffsetCommitResponse(topics=[OffsetCommitResponseTopic(name=name, partitions=parts)
                                        for name, parts in topics.items()])


# One frozen response per (version, topic, partition, error) for the usual commit of one
# partition, made on first use and shared (as Heartbeat's are), its one-topic array encoded once
# (preencoded.py): a consumer committing the same partition again and again gets the same answer,
# so it is neither built nor encoded again. Bounded (topics come and go).
_ONE: dict[tuple, OffsetCommitResponse] = {}


def render_one(version: int, result) -> OffsetCommitResponse:
    """``render_all_known`` for a commit of one partition of a known topic: its one result."""
    p = result.partitions[0]
    key = (version, p.topic, p.partition, p.error)
    response = _ONE.get(key)
    if response is None:
        topic = OffsetCommitResponseTopic(name=p.topic, partitions=[
            OffsetCommitResponsePartition(partition_index=p.partition, error_code=p.error)])
        response = remember(_ONE, key, OffsetCommitResponse(topics=encode_array(
            OffsetCommitResponse, version, OffsetCommitResponseTopic, [topic])))
    return response


# per version, made once: render_one for it (not a partial per request) and the two predicates
_ONE_PARTITION = {version: (partial(render_one, version), missing_group_is_not_found(version),
                            supports_member_epochs(version)) for version in range(2, 10)}


def uses_topic_ids(version: int) -> bool:
    return version >= 10


async def offset_commit(ctx, request) -> OffsetCommitResponse:
    topics = request.topics
    if ctx.version >= 10:  # uses_topic_ids, written out: no call on every commit
        return await _by_topic_id(ctx, request)
    if len(topics) == 1:
        # The usual commit: one partition of one topic (a consumer commits what it was
        # assigned, often one partition). The general path below, with nothing to regroup.
        name, partitions = topics[0].name, topics[0].partitions
        if len(partitions) == 1:
            p = partitions[0]
            index = p.partition_index
            topic = ctx.broker.topics.catalogue.get(name)  # Topics.exists, written out
            if topic is not None and 0 <= index < len(topic.partitions):
                # CommitOffset(...) and OffsetCommit(...) built in their mutable twins by
                # plain attribute stores, then given their class (frozen.mutable_twin): the
                # same frozen instances, without a generic descriptor call per field.
                offset = _CommitOffsetTwin()
                offset.topic, offset.partition = name, index
                offset.offset, offset.leader_epoch = p.committed_offset, p.committed_leader_epoch
                offset.metadata = p.committed_metadata
                offset.__class__ = CommitOffset
                command = _OffsetCommitTwin()
                answer, missing_is_not_found, member_epochs = _ONE_PARTITION[ctx.version]
                command.request_id, command.group_id = ctx.request_id, request.group_id
                command.generation_id = request.generation_id_or_member_epoch
                command.member_id = request.member_id
                command.group_instance_id = request.group_instance_id
                command.offsets, command.retention_time_ms = (offset,), request.retention_time_ms
                command.missing_group_is_not_found = missing_is_not_found
                command.supports_member_epochs = member_epochs
                broker = ctx.broker
                if broker.cluster.multi:  # only the group's coordinator serves it
                    command.by_frame = False
                    command.__class__ = OffsetCommit
                    return await ctx.submit(command, answer)
                # recorded by its frames with its OffsetsCommitted, if traced so (dispatch.py),
                # unless a fault rule acts on it (its action may still run after this)
                command.by_frame = ctx.deferrable
                command.__class__ = OffsetCommit
                # ctx.submit(command, answer) written out for one broker: the coordinator
                # answers a commit at once, and awaiting a coroutine of ours for that cost
                # about a Python call more per commit (making and driving the coroutine).
                pending = broker.submit(command, answer)
                if pending.resolved:
                    return pending.response
                return await ctx.wait_for(pending, command.request_id)
    return await _general(ctx, request)


async def _by_topic_id(ctx, request) -> OffsetCommitResponse:
    get_by_id = ctx.broker.topics.catalogue.get_by_id
    known, unknown = [], []
    for t in request.topics:
        topic = get_by_id(t.topic_id)
        if topic is None:
            unknown.append(OffsetCommitResponseTopic(topic_id=t.topic_id, partitions=[
                OffsetCommitResponsePartition(partition_index=p.partition_index,
                                              error_code=ErrorCode.UNKNOWN_TOPIC_ID)
                for p in t.partitions]))
        else:
            known.append(attrs.evolve(t, name=topic.name))
    if not known:
        return OffsetCommitResponse(topics=unknown)
    ids = {t.name: t.topic_id for t in known}
    answer = await _general(ctx, attrs.evolve(request, topics=known))
    return OffsetCommitResponse(topics=unknown + [
        attrs.evolve(t, topic_id=ids[t.name]) for t in answer.topics])


async def _general(ctx, request) -> OffsetCommitResponse:
    # split_known_partitions (_common.py), written out: this runs for every commit
    exists = ctx.broker.topics.exists
    order, rejected, offsets = [], {}, []
    for t in request.topics:
        name = t.name
        for p in t.partitions:
            index = p.partition_index
            order.append((name, index))
            if exists(name, index):
                offsets.append(c.CommitOffset(topic=name, partition=index,
                                              offset=p.committed_offset,
                                              leader_epoch=p.committed_leader_epoch,
                                              metadata=p.committed_metadata))
            else:
                rejected[(name, index)] = _UNKNOWN
    if not offsets:
        return render(order, rejected, None)
    version = ctx.version
    command = c.OffsetCommit(
        request_id=ctx.request_id, group_id=request.group_id,
        generation_id=request.generation_id_or_member_epoch, member_id=request.member_id,
        group_instance_id=request.group_instance_id, offsets=tuple(offsets),
        retention_time_ms=request.retention_time_ms,
        missing_group_is_not_found=missing_group_is_not_found(version),
        supports_member_epochs=supports_member_epochs(version))
    if rejected or (len(order) > 1 and len(set(order)) != len(order)):  # refused or repeated
        return await ctx.submit(command, partial(render, order, rejected))
    return await ctx.submit(command, partial(render_all_known, order))


HANDLER = Handler(API, "2-10", offset_commit)
