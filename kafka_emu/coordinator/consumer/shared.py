"""The APIs consumer groups share with classic groups: offsets, ListGroups, DescribeGroups,
DeleteGroups, ConsumerGroupDescribe, and what the classic member APIs get from a consumer group.

OffsetCommit (Kafka 4.3's ConsumerGroup.validateOffsetCommit, commit_fence.py): a commit with a
negative epoch is accepted only while the group has no members (admin tools, assign()-based
consumers); otherwise the member must exist (UNKNOWN_MEMBER_ID), must use OffsetCommit v9+
(UNSUPPORTED_VERSION) and must send its current member epoch, or an older one for partitions it
was assigned at that epoch or before and still holds (KIP-1251; STALE_MEMBER_EPOCH otherwise).
A commit is not a heartbeat here.
OffsetFetch v9+ (validateOffsetFetch): without member id and with a negative epoch anyone may
fetch; otherwise the same member and epoch checks, as a group-level error.
OffsetDelete: allowed in any state, except for topics the group subscribes to.

Classic member APIs: a JoinGroup to an Empty consumer group turns it back into a classic group
(offsets kept), as Kafka does; JoinGroup, SyncGroup, Heartbeat and LeaveGroup to a non-empty one
are served by classic_members.py (classic members inside a consumer group). A classic member's
OffsetCommit (any version) is checked the same way, refused with ILLEGAL_GENERATION; its
OffsetFetch must carry its member epoch as generation (ILLEGAL_GENERATION otherwise).
"""

from __future__ import annotations

from kafka_emu.errors import ErrorCode

from .. import join as classic_join
from . import classic_members
from ..commands import (Heartbeat, JoinGroup, LeaveGroup, OffsetCommit, OffsetDelete,
                        OffsetFetch, SyncGroup)
from ..core import Core, heartbeat_key, join_key, sync_key
from ..events import GroupDeleted, OffsetsCommitted, OffsetsRemoved
from ..offsets import _OFFSETS_COMMITTED, _java_length, fetched_or_unstable
from ..offsets_store import StoredOffset
from ..results import (FetchedOffset, HeartbeatResult, LeaveGroupResult,
                       LeaveMemberResult, ListedGroup, OffsetCommitResult, OffsetDeleteResult,
                       OffsetFetchResult, PartitionError, SyncGroupResult)
from ..state import GroupState
from .commit_fence import validate_commit
from .commands import (ConsumerGroupDescribe, ConsumerGroupDescribeResult, DescribedConsumerGroup,
                       DescribedConsumerMember, as_partitions)
from .heartbeat import preferred_assignor, schedule_retention
from .model import ConsumerGroup, ConsumerGroupState

GROUP_TYPE = "consumer"


# ------------------------------------------------------------------------------ offsets
def handle_commit(core: Core, cmd: OffsetCommit) -> None:
    group = core.consumer_groups[cmd.group_id]
    max_metadata = core.config.offset_metadata_max_bytes
    error = validate_commit(
        group, member_id=cmd.member_id, instance_id=cmd.group_instance_id, epoch=cmd.generation_id,
        supports_member_epochs=cmd.supports_member_epochs,
        partitions=[(o.topic, o.partition) for o in cmd.offsets
                    if o.metadata is None or _java_length(o.metadata) <= max_metadata])
    if error is not None:
        return core.reply(cmd.request_id, "OffsetCommit", cmd.group_id, OffsetCommitResult(
            partitions=tuple(PartitionError(topic=o.topic, partition=o.partition, error=error)
                             for o in cmd.offsets)))
    now = core.now
    expire_at = None if cmd.retention_time_ms == -1 else now + cmd.retention_time_ms
    results, committed = [], []
    for o in cmd.offsets:
        if o.metadata is not None and _java_length(o.metadata) > core.config.offset_metadata_max_bytes:
            results.append(PartitionError(topic=o.topic, partition=o.partition,
                                          error=ErrorCode.OFFSET_METADATA_TOO_LARGE))
            continue
        core.offsets.put(cmd.group_id, o.topic, o.partition, StoredOffset(
            offset=o.offset, leader_epoch=o.leader_epoch,
            metadata=o.metadata if o.metadata is not None else "",
            commit_timestamp_ms=now, expire_timestamp_ms=expire_at))
        results.append(PartitionError(topic=o.topic, partition=o.partition, error=ErrorCode.NONE))
        committed.append((o.topic, o.partition, o.offset))
    if committed and core.observing:
        if cmd.by_frame and core.frame_commits is not None and len(cmd.offsets) == 1:
            # the trace alone, by frames: recorded with the request (offsets.handle_commit)
            core.frame_commits.commit_at = now
        elif core.observer_rows:  # as a row (broker/event_rows.py), as the classic commit's
            core.observer((_OFFSETS_COMMITTED, now, cmd.group_id, cmd.member_id,  # type: ignore[misc]
                           cmd.generation_id, tuple(committed)))
        else:
            core.emit(OffsetsCommitted(at_ms=now, group_id=cmd.group_id, member_id=cmd.member_id,
                                       generation_id=cmd.generation_id, offsets=tuple(committed)))
    core.reply(cmd.request_id, "OffsetCommit", cmd.group_id,
               OffsetCommitResult(partitions=tuple(results)))


def handle_fetch(core: Core, cmd: OffsetFetch) -> None:
    group = core.consumer_groups[cmd.group_id]
    error = ErrorCode.NONE
    if not (cmd.member_id is None and cmd.member_epoch < 0):
        member = group.members.get(cmd.member_id or "")
        if member is None:
            error = ErrorCode.UNKNOWN_MEMBER_ID
        elif member.member_epoch != cmd.member_epoch:
            error = (ErrorCode.STALE_MEMBER_EPOCH if member.classic is None
                     else ErrorCode.ILLEGAL_GENERATION)
    if error != ErrorCode.NONE:
        return core.reply(cmd.request_id, "OffsetFetch", cmd.group_id, OffsetFetchResult(error=error))
    store = core.offsets
    partitions: list[FetchedOffset] = []
    # require_stable (v7+): pending transactional offsets make a partition unstable
    # (offsets.fetched_or_unstable, as for classic groups)
    stable = cmd.require_stable and cmd.group_id in store.open_txns
    if cmd.topics is None:
        partitions = [fetched_or_unstable(store, cmd.group_id, t, p, v, stable)
                      for t, p, v in store.group_items(cmd.group_id)]
    else:
        for topic, indexes in cmd.topics:
            for p in indexes:
                partitions.append(fetched_or_unstable(store, cmd.group_id, topic, p,
                                                      store.get(cmd.group_id, topic, p), stable))
    core.reply(cmd.request_id, "OffsetFetch", cmd.group_id,
               OffsetFetchResult(error=ErrorCode.NONE, partitions=tuple(partitions)))


def handle_offset_delete(core: Core, cmd: OffsetDelete) -> None:
    group = core.consumer_groups[cmd.group_id]
    results, deleted = [], []
    for topic, partition in cmd.partitions:
        if group.is_subscribed_to_topic(topic):
            results.append(PartitionError(topic=topic, partition=partition,
                                          error=ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC))
            continue
        if core.offsets.delete(cmd.group_id, topic, partition):
            deleted.append((topic, partition))
        results.append(PartitionError(topic=topic, partition=partition, error=ErrorCode.NONE))
    if deleted and core.observing:
        core.emit(OffsetsRemoved(at_ms=core.now, group_id=cmd.group_id, partitions=tuple(deleted),
                                 reason="offset_delete"))
    core.reply(cmd.request_id, "OffsetDelete", cmd.group_id,
               OffsetDeleteResult(error=ErrorCode.NONE, partitions=tuple(results)))


def on_retention(core: Core) -> None:
    """Offset retention for consumer groups (Kafka's ConsumerGroup expiration condition): an offset
    of a topic the group does not subscribe to expires ``offsets.retention.minutes`` after its
    commit (or at the expire timestamp of a v2-4 commit), in any group state; an Empty group left
    without offsets is deleted. Runs on the classic groups' retention timer."""
    now, retention_ms = core.now, core.config.offsets_retention_ms
    for group in list(core.consumer_groups.values()):
        gid, expired, left = group.group_id, [], False
        for topic, partition, value in list(core.offsets.group_items(gid)):
            if group.is_subscribed_to_topic(topic):
                left = True
                continue
            if value.expire_timestamp_ms is not None:
                gone = now >= value.expire_timestamp_ms
            else:
                gone = now - value.commit_timestamp_ms >= retention_ms
            if gone:
                core.offsets.delete(gid, topic, partition)
                expired.append((topic, partition))
            else:
                left = True
        if expired and core.observing:
            core.emit(OffsetsRemoved(at_ms=now, group_id=gid, partitions=tuple(expired),
                                     reason="expired"))
        if not left and group.state is ConsumerGroupState.EMPTY:
            remove(core, group, "retention", keep_offsets=False)
    if core.consumer_groups:
        schedule_retention(core)


# ----------------------------------------------------------------------- classic member APIs
def handle_classic_join(core: Core, cmd: JoinGroup) -> None:
    group = core.consumer_groups[cmd.group_id]
    if group.members:
        return classic_members.handle_join(core, group, cmd)
    remove(core, group, "converted_to_classic", keep_offsets=True)
    classic_join.handle_join(core, cmd)


def handle_classic_member_api(core: Core, cmd) -> None:
    group = core.consumer_groups[cmd.group_id]
    if group.members:
        if isinstance(cmd, SyncGroup):
            return classic_members.handle_sync(core, group, cmd)
        if isinstance(cmd, Heartbeat):
            return classic_members.handle_heartbeat(core, group, cmd)
        return classic_members.handle_leave(core, group, cmd)
    code = ErrorCode.UNKNOWN_MEMBER_ID
    if isinstance(cmd, SyncGroup):
        result = SyncGroupResult(error=code)
        api = "SyncGroup"
    elif isinstance(cmd, Heartbeat):
        result, api = HeartbeatResult(error=code), "Heartbeat"
    else:
        result = LeaveGroupResult(error=ErrorCode.NONE, members=tuple(
            LeaveMemberResult(member_id=m.member_id, group_instance_id=m.group_instance_id,
                              error=code) for m in cmd.members))
        api = "LeaveGroup"
    core.reply(cmd.request_id, api, cmd.group_id, result)


from .operator import OPERATOR_HANDLERS  # noqa: E402 (operator imports this module lazily)

SHARED_HANDLERS = {
    **OPERATOR_HANDLERS,
    OffsetCommit: handle_commit,
    OffsetFetch: handle_fetch,
    OffsetDelete: handle_offset_delete,
    JoinGroup: handle_classic_join,
    SyncGroup: handle_classic_member_api,
    Heartbeat: handle_classic_member_api,
    LeaveGroup: handle_classic_member_api,
}


# ------------------------------------------------------------------- list / delete / describe
def listed(core: Core, states: set[str], types: set[str]) -> list[ListedGroup]:
    if types and GROUP_TYPE not in types:
        return []
    return [ListedGroup(group_id=g.group_id, protocol_type=GROUP_TYPE, state=g.state.value,
                        group_type=GROUP_TYPE)
            for g in core.consumer_groups.values() if not states or g.state.lower in states]


def delete_result(core: Core, group_id: str) -> ErrorCode | None:
    """DeleteGroups for a consumer group (None: not a consumer group)."""
    group = core.consumer_groups.get(group_id)
    if group is None:
        return None
    if group.state is not ConsumerGroupState.EMPTY:
        return ErrorCode.NON_EMPTY_GROUP
    remove(core, group, "delete_groups", keep_offsets=False)
    return ErrorCode.NONE


def remove(core: Core, group: ConsumerGroup, reason: str, *, keep_offsets: bool) -> None:
    gid = group.group_id
    del core.consumer_groups[gid]
    removed = [] if keep_offsets else core.offsets.delete_group(gid)
    if core.observing:
        if removed:
            core.emit(OffsetsRemoved(at_ms=core.now, group_id=gid, partitions=tuple(removed),
                                     reason="group_deleted"))
        core.emit(GroupDeleted(at_ms=core.now, group_id=gid, reason=reason))


def replace_empty_classic(core: Core, classic) -> None:
    """An Empty classic (or simple) group becomes a consumer group: the classic one goes, its
    offsets stay (Kafka writes only the group metadata tombstone)."""
    gid = classic.group_id
    core.timers.cancel(join_key(gid))
    core.timers.cancel(sync_key(gid))
    for pending in classic.pending_members:  # MEMBER_ID_REQUIRED ids that never came back
        core.timers.cancel(heartbeat_key(gid, pending))
    classic.transition_to(GroupState.DEAD)
    del core.groups[gid]
    if core.observing:
        core.emit(GroupDeleted(at_ms=core.now, group_id=gid, reason="converted_to_consumer"))


def handle_describe(core: Core, cmd: ConsumerGroupDescribe) -> None:
    core.reply(cmd.request_id, "ConsumerGroupDescribe", None, ConsumerGroupDescribeResult(
        groups=tuple(describe(core, gid) for gid in cmd.group_ids)))


def describe(core: Core, group_id: str) -> DescribedConsumerGroup:
    if group_id == "":
        return DescribedConsumerGroup(error=ErrorCode.INVALID_GROUP_ID, group_id=group_id,
                                      error_message="Group id can't be empty.")
    group = core.consumer_groups.get(group_id)
    if group is None:
        message = (f"Group {group_id} is not a consumer group."
                   if group_id in core.groups or group_id in core.share_groups
                   else f"Group {group_id} not found.")
        return DescribedConsumerGroup(error=ErrorCode.GROUP_ID_NOT_FOUND, group_id=group_id,
                                      error_message=message)
    members = tuple(DescribedConsumerMember(
        member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
        member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
        subscribed_topic_names=m.subscribed_topic_names,
        subscribed_topic_regex=m.subscribed_topic_regex, assignment=as_partitions(m.assigned),
        target_assignment=as_partitions(group.target.get(m.member_id, {})),
        member_type=1 if m.classic is None else 0)  # KIP-1099: 0 a classic-protocol member
        for m in group.members.values())
    return DescribedConsumerGroup(
        error=ErrorCode.NONE, group_id=group_id, state=group.state.value,
        group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
        assignor_name=preferred_assignor(core, group), members=members)
