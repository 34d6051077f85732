"""OffsetCommit, OffsetFetch, OffsetDelete and offset retention (reference section 4, 3.16).

OffsetCommit v0-9: v1 generation/member id, v2-4 RetentionTimeMs (``retention_time_ms``), v6
leader epoch, v7 GroupInstanceId, v9 GROUP_ID_NOT_FOUND for a missing group
(``missing_group_is_not_found``; earlier versions get ILLEGAL_GENERATION). Topic and partition
existence is checked by the broker before we are called.

OffsetFetch: unknown groups and partitions are not errors (offset -1, epoch -1, metadata "").
RequireStable (v7+): a partition with pending transactional offsets (txn_offsets.py) is
UNSTABLE_OFFSET_COMMIT with offset -1, as OffsetMetadataManager.fetchOffsets answers it.

Retention (4.3) runs as a timer every ``offsets.retention.check.interval.ms`` while any group
exists. Offsets expire by an explicit expire timestamp (v2-4 commits) or after
``offsets.retention.minutes`` measured from a base that depends on the group state; a group that
is Empty and has no offsets left is deleted.
"""

from __future__ import annotations

from typing import Callable

from kafka_emu.bounded import remember
from kafka_emu.errors import ErrorCode
from kafka_emu.frozen import mutable_twin

from .commands import OffsetCommit, OffsetDelete, OffsetFetch
from .core import RETENTION_KEY, Core
from .events import OffsetsCommitted, OffsetsRemoved
from .group import Group
from .offsets_store import StoredOffset
from .results import (
    FetchedOffset,
    OffsetCommitResult,
    OffsetDeleteResult,
    OffsetFetchResult,
    PartitionError,
)
from .state import GroupState

COMMIT = "OffsetCommit"
FETCH = "OffsetFetch"
DELETE = "OffsetDelete"


# --------------------------------------------------------------------------- OffsetCommit
# Enum members are read through the enum class's metaclass (~0.15 µs each): the per-request
# paths below read module constants instead.
_STABLE, _PREPARING = GroupState.STABLE, GroupState.PREPARING_REBALANCE
_EMPTY, _DEAD = GroupState.EMPTY, GroupState.DEAD
_COMPLETING = GroupState.COMPLETING_REBALANCE
_NONE = ErrorCode.NONE
_OFFSETS_COMMITTED = OffsetsCommitted.__name__  # the tag of its rows
_StoredOffsetTwin = mutable_twin(StoredOffset)


# One frozen result per committed (topic, partition) for the usual commit of one partition
# without error, made on first use and shared (results are immutable): the answer is the same
# every time. Bounded: cleared when full (topics come and go).
_COMMITTED: dict[tuple[str, int], OffsetCommitResult] = {}


def handle_commit(core: Core, cmd: OffsetCommit) -> None:
    group_id = cmd.group_id
    group = core.groups.get(group_id)
    member = None
    if (group is not None and group.state is _STABLE and cmd.group_instance_id is None
            and cmd.generation_id == group.generation):
        # The usual commit: a member of a Stable group at its generation, which passes every
        # row of _validate_commit's table (a Stable group's generation is never negative).
        member = group.members.get(cmd.member_id)
    if member is None:
        error = _validate_commit(core, cmd)
        if error is not None:
            partitions = tuple(PartitionError(topic=o.topic, partition=o.partition, error=error)
                               for o in cmd.offsets)
            return core.reply(cmd.request_id, COMMIT, group_id,
                              OffsetCommitResult(partitions=partitions))
        group = core.groups[group_id]
        state = group.state
        if state is _STABLE or state is _PREPARING:
            member = group.members[cmd.member_id]
    # A commit doubles as a heartbeat in Stable and PreparingRebalance (4.1).
    if member is not None and not member.heartbeats_ignored:
        core.schedule_heartbeat(group, member.member_id, member.session_timeout_ms)

    now = core.now
    expire_at = None if cmd.retention_time_ms == -1 else now + cmd.retention_time_ms
    max_metadata = core.config.offset_metadata_max_bytes
    offsets = cmd.offsets
    if len(offsets) == 1:  # the usual commit: one partition (the loop below, written out)
        o = offsets[0]
        metadata = o.metadata
        if metadata is None or len(metadata) * 2 <= max_metadata or _java_length(metadata) <= max_metadata:
            topic, partition = o.topic, o.partition
            # StoredOffset(...) built in its mutable twin, then given its class
            # (frozen.mutable_twin): the same frozen instance, plain attribute stores
            stored = _StoredOffsetTwin()
            stored.offset, stored.leader_epoch = o.offset, o.leader_epoch
            stored.metadata = metadata if metadata is not None else ""
            stored.commit_timestamp_ms, stored.expire_timestamp_ms = now, expire_at
            stored.__class__ = StoredOffset
            core.offsets.put(group_id, topic, partition, stored)
            if core.observing:
                if cmd.by_frame and core.frame_commits is not None:
                    # the trace alone, by frames: the request path records this commit with its
                    # request's frames, which hold the rest of the row (event_rows.COMMIT_FRAME)
                    core.frame_commits.commit_at = now
                elif core.observer_rows:  # as a row (broker/event_rows.py): one per commit, so cheap
                    core.observer((_OFFSETS_COMMITTED, now, group_id, cmd.member_id,  # type: ignore[misc]
                                   cmd.generation_id, ((topic, partition, o.offset),)))
                else:
                    core.emit(OffsetsCommitted(at_ms=now, group_id=group_id,
                                               member_id=cmd.member_id,
                                               generation_id=cmd.generation_id,
                                               offsets=((topic, partition, o.offset),)))
            result = _COMMITTED.get((topic, partition))
            if result is None:
                result = remember(_COMMITTED, (topic, partition), OffsetCommitResult(partitions=(
                    PartitionError(topic=topic, partition=partition, error=_NONE),)))
            return core.reply(cmd.request_id, COMMIT, group_id, result)
    put = core.offsets.put
    observing = core.observing
    results = []
    committed = []
    for o in offsets:
        metadata = o.metadata
        if metadata is not None and len(metadata) * 2 > max_metadata and _java_length(metadata) > max_metadata:
            results.append(PartitionError(topic=o.topic, partition=o.partition, error=ErrorCode.OFFSET_METADATA_TOO_LARGE))
            continue
        put(
            group_id,
            o.topic,
            o.partition,
            StoredOffset(
                offset=o.offset,
                leader_epoch=o.leader_epoch,
                metadata=metadata if metadata is not None else "",
                commit_timestamp_ms=now,
                expire_timestamp_ms=expire_at,
            ),
        )
        results.append(PartitionError(topic=o.topic, partition=o.partition, error=_NONE))
        if observing:
            committed.append((o.topic, o.partition, o.offset))
    if committed and observing:
        if core.observer_rows:
            core.observer((_OFFSETS_COMMITTED, now, group_id, cmd.member_id,  # type: ignore[misc]
                           cmd.generation_id, tuple(committed)))
        else:
            core.emit(
                OffsetsCommitted(
                    at_ms=now,
                    group_id=group_id,
                    member_id=cmd.member_id,
                    generation_id=cmd.generation_id,
                    offsets=tuple(committed),
                )
            )
    core.reply(cmd.request_id, COMMIT, group_id, OffsetCommitResult(partitions=tuple(results)))


def _java_length(text: str) -> int:
    # offset.metadata.max.bytes is compared with Java's String.length(): UTF-16 code units.
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _validate_commit(core: Core, cmd: OffsetCommit) -> ErrorCode | None:
    """3.10 OffsetCommit table (OffsetMetadataManager / ClassicGroup.validateOffsetCommit)."""
    group = core.groups.get(cmd.group_id)
    if group is None:
        if cmd.generation_id < 0:
            # A "simple" group for assign()+commit or admin offset changes: Empty, no type.
            core.create_group(cmd.group_id)
            return None
        return ErrorCode.GROUP_ID_NOT_FOUND if cmd.missing_group_is_not_found else ErrorCode.ILLEGAL_GENERATION
    state = group.state
    if state is _DEAD:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if cmd.generation_id < 0 and state is _EMPTY:
        return None
    if cmd.generation_id >= 0 or cmd.member_id != "" or cmd.group_instance_id is not None:
        error = group.validate_member(cmd.member_id, cmd.group_instance_id)
        if error is not None:
            return error
        if cmd.generation_id != group.generation:
            return ErrorCode.ILLEGAL_GENERATION
    elif state is not _EMPTY:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if state is _COMPLETING:
        return ErrorCode.REBALANCE_IN_PROGRESS
    return None


# ---------------------------------------------------------------------------- OffsetFetch
def handle_fetch(core: Core, cmd: OffsetFetch) -> None:
    group = core.groups.get(cmd.group_id)
    found = group is not None and group.state is not GroupState.DEAD
    store = core.offsets
    partitions: list[FetchedOffset] = []
    stable = cmd.require_stable and cmd.group_id in store.open_txns
    if cmd.topics is None:
        if found:
            for topic, partition, value in store.group_items(cmd.group_id):
                if stable and store.has_pending(cmd.group_id, topic, partition):
                    partitions.append(_unstable(topic, partition))
                else:
                    partitions.append(_fetched(topic, partition, value))
    else:
        for topic, indexes in cmd.topics:
            for partition in indexes:
                if found and stable and store.has_pending(cmd.group_id, topic, partition):
                    partitions.append(_unstable(topic, partition))
                    continue
                value = store.get(cmd.group_id, topic, partition) if found else None
                partitions.append(_fetched(topic, partition, value))
    core.reply(
        cmd.request_id, FETCH, cmd.group_id, OffsetFetchResult(error=ErrorCode.NONE, partitions=tuple(partitions))
    )


def fetched_or_unstable(store, group_id: str, topic: str, partition: int,
                        value: StoredOffset | None, stable: bool) -> FetchedOffset:
    """One OffsetFetch answer; with require_stable, UNSTABLE_OFFSET_COMMIT where pending
    transactional offsets exist (``stable``: asked, and the group has some at all)."""
    if stable and store.has_pending(group_id, topic, partition):
        return _unstable(topic, partition)
    return _fetched(topic, partition, value)


def _unstable(topic: str, partition: int) -> FetchedOffset:
    return FetchedOffset(topic=topic, partition=partition, offset=-1, leader_epoch=-1,
                         metadata="", error=ErrorCode.UNSTABLE_OFFSET_COMMIT)


def _fetched(topic: str, partition: int, value: StoredOffset | None) -> FetchedOffset:
    if value is None:
        return FetchedOffset(topic=topic, partition=partition, offset=-1, leader_epoch=-1, metadata="")
    return FetchedOffset(
        topic=topic,
        partition=partition,
        offset=value.offset,
        leader_epoch=value.leader_epoch,
        metadata=value.metadata,
    )


# --------------------------------------------------------------------------- OffsetDelete
def handle_offset_delete(core: Core, cmd: OffsetDelete) -> None:
    def top_level(error: ErrorCode) -> None:
        core.reply(cmd.request_id, DELETE, cmd.group_id, OffsetDeleteResult(error=error))

    if cmd.group_id == "":
        return top_level(ErrorCode.INVALID_GROUP_ID)
    group = core.groups.get(cmd.group_id)
    if group is None or group.state is GroupState.DEAD:
        return top_level(ErrorCode.GROUP_ID_NOT_FOUND)
    if group.state is not GroupState.EMPTY and not group.uses_consumer_protocol():
        return top_level(ErrorCode.NON_EMPTY_GROUP)
    results = []
    deleted = []
    for topic, partition in cmd.partitions:
        if group.is_subscribed_to_topic(topic):
            results.append(PartitionError(topic=topic, partition=partition, error=ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC))
            continue
        if core.offsets.delete(cmd.group_id, topic, partition):
            deleted.append((topic, partition))
        # Reported as success whether or not an offset existed (3.16).
        results.append(PartitionError(topic=topic, partition=partition, error=ErrorCode.NONE))
    if deleted and core.observing:
        core.emit(
            OffsetsRemoved(at_ms=core.now, group_id=cmd.group_id, partitions=tuple(deleted), reason="offset_delete")
        )
    core.reply(cmd.request_id, DELETE, cmd.group_id, OffsetDeleteResult(error=ErrorCode.NONE, partitions=tuple(results)))


# ------------------------------------------------------------------------------ retention
def _expiration_base(group: Group) -> Callable[[StoredOffset], int] | None:
    """Which timestamp retention counts from, or None when nothing may expire (4.3)."""
    if group.protocol_type is not None:
        if group.state is GroupState.EMPTY:
            state_since = group.state_timestamp_ms
            return lambda value: state_since
        if group.uses_consumer_protocol() and group.subscribed_topics is not None and group.state is GroupState.STABLE:
            return lambda value: value.commit_timestamp_ms
        return None
    return lambda value: value.commit_timestamp_ms  # simple group


def expire_offsets(core: Core, group: Group) -> bool:
    """Drop expired offsets of one group; True if it has none left and no open transaction
    holds pending offsets in it (cleanupExpiredOffsets)."""
    gid = group.group_id
    store = core.offsets
    if not store.has_group(gid):
        return gid not in store.open_txns
    base = _expiration_base(group)
    if base is None:
        return False
    now = core.now
    retention_ms = core.config.offsets_retention_ms
    expired = []
    all_expired = True
    for topic, partition, value in list(store.group_items(gid)):
        if group.is_subscribed_to_topic(topic) or store.has_pending(gid, topic, partition):
            # pending transactional offsets keep a partition's offset (cleanupExpiredOffsets)
            all_expired = False
            continue
        if value.expire_timestamp_ms is not None:
            is_expired = now >= value.expire_timestamp_ms
        else:
            is_expired = now - base(value) >= retention_ms
        if is_expired:
            store.delete(gid, topic, partition)
            expired.append((topic, partition))
        else:
            all_expired = False
    if expired and core.observing:
        core.emit(OffsetsRemoved(at_ms=now, group_id=gid, partitions=tuple(expired), reason="expired"))
    return all_expired and gid not in store.open_txns


def on_partitions_deleted(core: Core, partitions: set[tuple[str, int]]) -> None:
    """A topic was deleted: every group forgets its offsets for those partitions, as Kafka's
    OffsetMetadataManager.onPartitionsDeleted does. A group left Empty with no offsets is then
    removed by the next retention check, not here (Kafka does the same)."""
    dropped = core.offsets.delete_partitions(partitions)
    if core.observing:
        for gid, removed in dropped.items():
            core.emit(OffsetsRemoved(at_ms=core.now, group_id=gid, partitions=tuple(removed),
                                     reason="partitions_deleted"))


def on_retention_timer(core: Core, delete_group: Callable[[Core, Group, str], None]) -> None:
    for group in list(core.groups.values()):
        if expire_offsets(core, group) and group.state is GroupState.EMPTY:
            delete_group(core, group, "retention")
    if core.groups:
        core.timers.schedule(RETENTION_KEY, core.now + core.config.offsets_retention_check_interval_ms)
