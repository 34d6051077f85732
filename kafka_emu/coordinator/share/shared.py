"""What share groups answer beside ShareGroupHeartbeat: ShareGroupDescribe, ListGroups,
DeleteGroups, the other group types' APIs aimed at a share group, the control plane's operator
commands, and the read-only queries the share-partition side (ShareFetch) asks.

Other types' APIs on a share group id, as Kafka 4.2 answers them:
- JoinGroup: INCONSISTENT_GROUP_PROTOCOL with an empty member id (classicGroupJoin: "group exists
  but it's not a consumer group"); SyncGroup, Heartbeat, LeaveGroup: UNKNOWN_MEMBER_ID;
- ConsumerGroupHeartbeat: GROUP_ID_NOT_FOUND "Group X is not a consumer group.";
- OffsetCommit, TxnOffsetCommit, OffsetFetch, OffsetDelete: GROUP_ID_NOT_FOUND (ShareGroup.validateOffset*:
  "Group X is not a consumer group."); a share group's progress is its share-partitions' start
  offsets (DescribeShareGroupOffsets), not committed offsets.
Share groups never expire (ShareGroup.shouldExpire is false): an Empty one stays until DeleteGroups.
"""

from __future__ import annotations

from kafka_emu.errors import ErrorCode, KafkaError

from ..commands import (DeleteGroup, ExpireMember, Heartbeat, IgnoreHeartbeats, JoinGroup,
                        LeaveGroup, OffsetCommit, OffsetDelete, OffsetFetch, SetOffsets, SyncGroup,
                        TriggerRebalance)
from ..consumer.commands import ConsumerGroupHeartbeat, ConsumerGroupHeartbeatResult
from ..core import Core
from ..events import GroupDeleted, RemovalReason
from ..txn_offsets import API as TXN_OFFSET_COMMIT, TxnOffsetCommit
from ..results import (HeartbeatResult, JoinGroupResult, LeaveGroupResult, LeaveMemberResult,
                       ListedGroup, OffsetCommitResult, OffsetDeleteResult, OffsetFetchResult,
                       OperatorResult, PartitionError, SyncGroupResult)
from .commands import (DescribedShareGroup, DescribedShareMember, ShareGroupDescribe,
                       ShareGroupDescribeResult)
from .heartbeat import bump_group_epoch, fence, session_key
from .model import GROUP_TYPE, PROTOCOL_TYPE, Assignment, ShareGroup, ShareGroupState, as_partitions

OPERATOR = "Operator"


# ------------------------------------------------------------------------- other types' APIs
def _not_consumer(group_id: str) -> KafkaError:
    return KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")


def handle_join(core: Core, cmd: JoinGroup) -> None:
    core.reply(cmd.request_id, "JoinGroup", cmd.group_id,
               JoinGroupResult(error=ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=""))


def handle_classic_member_api(core: Core, cmd) -> None:
    code = ErrorCode.UNKNOWN_MEMBER_ID
    if isinstance(cmd, SyncGroup):
        result, api = SyncGroupResult(error=code), "SyncGroup"
    elif isinstance(cmd, Heartbeat):
        result, api = HeartbeatResult(error=code), "Heartbeat"
    else:
        result = LeaveGroupResult(error=ErrorCode.NONE, members=tuple(
            LeaveMemberResult(member_id=m.member_id, group_instance_id=m.group_instance_id,
                              error=code) for m in cmd.members))
        api = "LeaveGroup"
    core.reply(cmd.request_id, api, cmd.group_id, result)


def handle_consumer_heartbeat(core: Core, cmd: ConsumerGroupHeartbeat) -> None:
    exc = _not_consumer(cmd.group_id)
    core.reply(cmd.request_id, "ConsumerGroupHeartbeat", cmd.group_id,
               ConsumerGroupHeartbeatResult(error=exc.code, error_message=exc.message))


def handle_offsets(core: Core, cmd) -> None:
    code = ErrorCode.GROUP_ID_NOT_FOUND
    if isinstance(cmd, OffsetCommit):
        core.reply(cmd.request_id, "OffsetCommit", cmd.group_id, OffsetCommitResult(
            partitions=tuple(PartitionError(topic=o.topic, partition=o.partition, error=code)
                             for o in cmd.offsets)))
    elif isinstance(cmd, OffsetFetch):
        core.reply(cmd.request_id, "OffsetFetch", cmd.group_id, OffsetFetchResult(error=code))
    elif isinstance(cmd, TxnOffsetCommit):
        core.reply(cmd.request_id, TXN_OFFSET_COMMIT, cmd.group_id, OffsetCommitResult(
            partitions=tuple(PartitionError(topic=o.topic, partition=o.partition, error=code)
                             for o in cmd.offsets)))
    else:
        core.reply(cmd.request_id, "OffsetDelete", cmd.group_id, OffsetDeleteResult(error=code))


# ---------------------------------------------------------------------------- operator commands
def _answer(core: Core, cmd, error: ErrorCode = ErrorCode.NONE, detail: str = "",
            member_ids: tuple[str, ...] = ()) -> None:
    core.reply(cmd.request_id, OPERATOR, cmd.group_id,
               OperatorResult(error=error, detail=detail, member_ids=member_ids))


def _member(core: Core, cmd, group: ShareGroup):
    if cmd.member_id is None:
        _answer(core, cmd, ErrorCode.INVALID_REQUEST,
                "name the member by member_id (share groups have no static members)")
        return None
    member = group.members.get(cmd.member_id)
    if member is None:
        _answer(core, cmd, ErrorCode.UNKNOWN_MEMBER_ID,
                f"group {cmd.group_id!r} has no member {cmd.member_id!r}")
    return member


def handle_expire_member(core: Core, cmd: ExpireMember) -> None:
    group = core.share_groups[cmd.group_id]
    member = _member(core, cmd, group)
    if member is not None:
        fence(core, group, member, RemovalReason.SESSION_EXPIRED)
        _answer(core, cmd, member_ids=(member.member_id,))


def handle_ignore_heartbeats(core: Core, cmd: IgnoreHeartbeats) -> None:
    group = core.share_groups[cmd.group_id]
    member = _member(core, cmd, group)
    if member is not None:
        member.heartbeats_ignored = getattr(cmd, "ignore", True)
        _answer(core, cmd, member_ids=(member.member_id,))


def handle_trigger_rebalance(core: Core, cmd: TriggerRebalance) -> None:
    group = core.share_groups[cmd.group_id]
    bump_group_epoch(core, group, "operator")
    _answer(core, cmd, member_ids=tuple(group.members))


def handle_delete_group(core: Core, cmd: DeleteGroup) -> None:
    group = core.share_groups[cmd.group_id]
    if group.members and not getattr(cmd, "force", False):
        return _answer(core, cmd, ErrorCode.NON_EMPTY_GROUP, "the share group has members")
    members = tuple(group.members)
    for member in list(group.members.values()):
        fence(core, group, member, RemovalReason.GROUP_DELETED)
    remove(core, group, "operator")
    _answer(core, cmd, member_ids=members)


def handle_set_offsets(core: Core, cmd: SetOffsets) -> None:
    _answer(core, cmd, ErrorCode.GROUP_ID_NOT_FOUND,
            f"group {cmd.group_id!r} is a share group: it has share-partition start offsets "
            "(AlterShareGroupOffsets), not committed offsets")


OTHER_TYPE_HANDLERS = {
    JoinGroup: handle_join,
    SyncGroup: handle_classic_member_api,
    Heartbeat: handle_classic_member_api,
    LeaveGroup: handle_classic_member_api,
    ConsumerGroupHeartbeat: handle_consumer_heartbeat,
    OffsetCommit: handle_offsets,
    TxnOffsetCommit: handle_offsets,
    OffsetFetch: handle_offsets,
    OffsetDelete: handle_offsets,
    ExpireMember: handle_expire_member,
    IgnoreHeartbeats: handle_ignore_heartbeats,
    TriggerRebalance: handle_trigger_rebalance,
    DeleteGroup: handle_delete_group,
    SetOffsets: handle_set_offsets,
}


# ------------------------------------------------------------------- list / delete / describe
def listed(core: Core, states: set[str], types: set[str]) -> list[ListedGroup]:
    if types and GROUP_TYPE not in types:
        return []
    return [ListedGroup(group_id=g.group_id, protocol_type=PROTOCOL_TYPE, state=g.state.value,
                        group_type=GROUP_TYPE)
            for g in core.share_groups.values() if not states or g.state.lower in states]


def delete_result(core: Core, group_id: str) -> ErrorCode | None:
    """DeleteGroups for a share group (None: not a share group). ShareGroup.validateDeleteGroup:
    only an Empty group goes; Kafka also deletes its share-partition state (SHARE-B's side)."""
    group = core.share_groups.get(group_id)
    if group is None:
        return None
    if group.state is not ShareGroupState.EMPTY:
        return ErrorCode.NON_EMPTY_GROUP
    remove(core, group, "delete_groups")
    return ErrorCode.NONE


def remove(core: Core, group: ShareGroup, reason: str) -> None:
    for member_id in group.members:
        core.timers.cancel(session_key(group.group_id, member_id))
    del core.share_groups[group.group_id]
    group.state = ShareGroupState.DEAD
    if core.share_departures is not None:
        core.share_departures.append((group.group_id, None, core.now))
    if core.observing:
        core.emit(GroupDeleted(at_ms=core.now, group_id=group.group_id, reason=reason))


def handle_describe(core: Core, cmd: ShareGroupDescribe) -> None:
    core.reply(cmd.request_id, "ShareGroupDescribe", None, ShareGroupDescribeResult(
        groups=tuple(describe(core, gid) for gid in cmd.group_ids)))


def describe(core: Core, group_id: str) -> DescribedShareGroup:
    if group_id == "":
        return DescribedShareGroup(error=ErrorCode.INVALID_GROUP_ID, group_id=group_id)
    group = core.share_groups.get(group_id)
    if group is None:
        message = (f"Group {group_id} is not a share group."
                   if group_id in core.groups or group_id in core.consumer_groups
                   else f"Group {group_id} not found.")
        return DescribedShareGroup(error=ErrorCode.GROUP_ID_NOT_FOUND, group_id=group_id,
                                   error_message=message)
    members = tuple(DescribedShareMember(
        member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
        client_id=m.client_id, client_host=m.client_host,
        subscribed_topic_names=m.subscribed_topic_names, assignment=as_partitions(m.assigned))
        for m in group.members.values())
    return DescribedShareGroup(
        error=ErrorCode.NONE, group_id=group_id, state=group.state.value,
        group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
        assignor_name=core.config.share.assignor, members=members)


# ------------------------------------------------------------------------ read-only queries
def assignment_of(core: Core, group_id: str, member_id: str) -> Assignment | None:
    group = core.share_groups.get(group_id)
    member = None if group is None else group.members.get(member_id)
    return None if member is None else dict(member.assigned)


def member_epoch_of(core: Core, group_id: str, member_id: str) -> int | None:
    group = core.share_groups.get(group_id)
    member = None if group is None else group.members.get(member_id)
    return None if member is None else member.member_epoch


def state_of(core: Core, group_id: str) -> str | None:
    group = core.share_groups.get(group_id)
    return None if group is None else group.state.value


def group_type_of(core: Core, group_id: str) -> str | None:
    if group_id in core.share_groups:
        return GROUP_TYPE
    if group_id in core.consumer_groups:
        return "consumer"
    if group_id in core.groups:
        return "classic"
    return None

