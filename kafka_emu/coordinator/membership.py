"""SyncGroup, Heartbeat and LeaveGroup (reference 3.10 tables, 3.11).

SyncGroup v0-5: v3 GroupInstanceId, v5 ProtocolType/Name (KIP-559; the broker rejects nulls
before we are called, we compare only non-null values). Heartbeat v0-4: v3 GroupInstanceId.
LeaveGroup v0-5: v3 batches members (the broker folds v0-2 into one member), v5 reasons.
"""

from __future__ import annotations

from kafka_emu.errors import ErrorCode

from .commands import Heartbeat, LeaveGroup, SyncGroup
from .core import Core, sync_key
from .events import AssignmentsDistributed, RemovalReason
from .group import Group
from .rebalance import (
    SYNC,
    detach_member,
    drop_pending,
    maybe_complete_join_phase,
    maybe_prepare_rebalance_or_complete_join,
    propagate_assignment,
)
from .results import HeartbeatResult, LeaveGroupResult, LeaveMemberResult, SyncGroupResult
from .state import GroupState

HEARTBEAT = "Heartbeat"
LEAVE = "LeaveGroup"


# ------------------------------------------------------------------------------ SyncGroup
def _sync_error(core: Core, cmd: SyncGroup, error: ErrorCode) -> None:
    core.reply(cmd.request_id, SYNC, cmd.group_id, SyncGroupResult(error=error))


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current


def handle_sync(core: Core, cmd: SyncGroup) -> None:
    if cmd.group_id == "":
        return _sync_error(core, cmd, ErrorCode.INVALID_GROUP_ID)
    group = core.groups.get(cmd.group_id)
    # Kafka checks "absent or Empty" before Dead (classicGroupSync).
    if group is None or group.state is GroupState.EMPTY:
        return _sync_error(core, cmd, ErrorCode.UNKNOWN_MEMBER_ID)
    if group.state is GroupState.DEAD:
        return _sync_error(core, cmd, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    error = group.validate_member(cmd.member_id, cmd.group_instance_id)
    if error is not None:
        return _sync_error(core, cmd, error)
    if cmd.generation_id != group.generation:
        return _sync_error(core, cmd, ErrorCode.ILLEGAL_GENERATION)
    if _inconsistent(cmd.protocol_type, group.protocol_type) or _inconsistent(
        cmd.protocol_name, group.protocol_name
    ):
        return _sync_error(core, cmd, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)

    state = group.state
    if state is GroupState.PREPARING_REBALANCE:
        return _sync_error(core, cmd, ErrorCode.REBALANCE_IN_PROGRESS)
    member = group.members[cmd.member_id]
    if state is GroupState.COMPLETING_REBALANCE:
        # A SyncGroup already parked for this member (an abandoned connection) is replaced and
        # never answered, as in Kafka.
        core.dropped(group.group_id, member.sync_request, SYNC, "superseded by a newer SyncGroup")
        member.sync_request = cmd.request_id
        core.parked(group.group_id, cmd.request_id, SYNC)
        _remove_pending_sync(core, group, cmd.member_id)
        if group.is_leader(cmd.member_id):
            # Storing the assignment cannot fail in memory, so the write-callback of Kafka runs
            # right away: assignments (missing members get b"") go out with the protocol.
            assignment = dict(cmd.assignments)
            equal: dict[bytes, bytes] = {}  # members given equal bytes share one object
            for m in group.members.values():
                given = assignment.get(m.member_id, b"")
                m.assignment = equal.setdefault(given, given)
            if core.observing:
                core.emit(
                    AssignmentsDistributed(
                        at_ms=core.now,
                        group_id=group.group_id,
                        generation=group.generation,
                        protocol_type=group.protocol_type,
                        protocol_name=group.protocol_name,
                        leader=group.leader_id,
                        assignments=tuple((m.member_id, m.assignment) for m in group.members.values()),
                    )
                )
            propagate_assignment(core, group, ErrorCode.NONE)
            group.transition_to(GroupState.STABLE)
        return
    # Stable: answer at once with the stored assignment (no session reset, 3.7).
    _remove_pending_sync(core, group, cmd.member_id)
    core.reply(
        cmd.request_id,
        SYNC,
        group.group_id,
        SyncGroupResult(
            error=ErrorCode.NONE,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            assignment=member.assignment,
        ),
    )


def _remove_pending_sync(core: Core, group: Group, member_id: str) -> None:
    group.pending_sync.pop(member_id, None)
    if not group.pending_sync:
        group.pending_sync = {}  # a new one: an emptied dict keeps its table
        core.timers.cancel(sync_key(group.group_id))


# ------------------------------------------------------------------------------ Heartbeat
# Enum members are read through the enum class's metaclass (~0.15 µs each): the per-request
# paths below read module constants instead, and share one frozen result per error code
# (made on first use).
_DEAD, _EMPTY, _PREPARING = GroupState.DEAD, GroupState.EMPTY, GroupState.PREPARING_REBALANCE
_NONE, _UNKNOWN_MEMBER_ID = ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID
_HEARTBEAT_RESULTS: dict[ErrorCode, HeartbeatResult] = {}


def handle_heartbeat(core: Core, cmd: Heartbeat) -> None:
    error = _heartbeat(core, cmd)
    result = _HEARTBEAT_RESULTS.get(error)
    if result is None:
        result = _HEARTBEAT_RESULTS[error] = HeartbeatResult(error=error)
    core.reply(cmd.request_id, HEARTBEAT, cmd.group_id, result)


def _heartbeat(core: Core, cmd: Heartbeat) -> ErrorCode:
    group_id = cmd.group_id
    if group_id == "":
        return ErrorCode.INVALID_GROUP_ID
    group = core.groups.get(group_id)
    if group is None:
        return _UNKNOWN_MEMBER_ID
    state = group.state
    if state is _DEAD:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    member_id = cmd.member_id
    error = group.validate_member(member_id, cmd.group_instance_id)
    if error is not None:
        return error
    if cmd.generation_id != group.generation:
        return ErrorCode.ILLEGAL_GENERATION
    if state is _EMPTY:
        return _UNKNOWN_MEMBER_ID
    member = group.members[member_id]
    if not member.heartbeats_ignored:
        core.schedule_heartbeat(group, member_id, member.session_timeout_ms)
    if state is _PREPARING:
        return ErrorCode.REBALANCE_IN_PROGRESS
    return _NONE


# ------------------------------------------------------------------------------ LeaveGroup
def handle_leave(core: Core, cmd: LeaveGroup) -> None:
    gid = cmd.group_id
    if gid == "":
        return core.reply(cmd.request_id, LEAVE, gid, LeaveGroupResult(error=ErrorCode.INVALID_GROUP_ID))
    group = core.groups.get(gid)
    if group is None:
        # Kafka throws UNKNOWN_MEMBER_ID and the service turns it into per-member errors; the
        # broker picks the single v0-2 code from them.
        results = tuple(
            LeaveMemberResult(
                member_id=m.member_id, group_instance_id=m.group_instance_id, error=ErrorCode.UNKNOWN_MEMBER_ID
            )
            for m in cmd.members
        )
        return core.reply(cmd.request_id, LEAVE, gid, LeaveGroupResult(error=ErrorCode.NONE, members=results))
    if group.state is GroupState.DEAD:
        return core.reply(
            cmd.request_id, LEAVE, gid, LeaveGroupResult(error=ErrorCode.COORDINATOR_NOT_AVAILABLE)
        )

    results = []
    removed = []
    for leaving in cmd.members:
        error = _leave_one(core, group, leaving.member_id, leaving.group_instance_id)
        results.append(
            LeaveMemberResult(member_id=leaving.member_id, group_instance_id=leaving.group_instance_id, error=error)
        )
        if error is ErrorCode.NONE:
            removed.append(leaving.member_id)
    if removed:
        # A removed pending id or an instance-id-only removal counts too (3.10 LeaveGroup).
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            maybe_prepare_rebalance_or_complete_join(
                core, group, f"explicit LeaveGroup request for ({', '.join(removed)}) members"
            )
        elif group.state is GroupState.PREPARING_REBALANCE:
            maybe_complete_join_phase(core, group)
    core.reply(cmd.request_id, LEAVE, gid, LeaveGroupResult(error=ErrorCode.NONE, members=tuple(results)))


def _leave_one(core: Core, group: Group, member_id: str, instance_id: str | None) -> ErrorCode:
    if member_id == "":
        # Admin removal by instance id alone (3.8).
        if instance_id is not None and instance_id in group.static_members:
            member = group.members[group.static_members[instance_id]]
            detach_member(core, group, member, RemovalReason.LEFT)
            return ErrorCode.NONE
        return ErrorCode.UNKNOWN_MEMBER_ID
    if member_id in group.pending_members:
        drop_pending(core, group, member_id, RemovalReason.LEFT)
        return ErrorCode.NONE
    error = group.validate_member(member_id, instance_id)
    if error is not None:
        return error
    detach_member(core, group, group.members[member_id], RemovalReason.LEFT)
    return ErrorCode.NONE
