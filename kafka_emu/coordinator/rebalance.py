"""The rebalance engine: starting, completing and timing out rebalances (reference 3.2-3.7, 3.11).

These functions mirror the Java coordinator's GroupMetadataManager steps of the same names
(prepareRebalance, completeClassicGroupJoin, propagateAssignment, expire*...) so its source can be
used as the tie-breaker. They answer parked requests through ``core.reply`` and (re)arm timers
through ``core.timers``; they never read a clock (``core.now`` is the time of the current step).

Timers fired here (keys from ``core``):
- heartbeat(group, member): session timeout, the new-member join timeout, or a pending
  MEMBER_ID_REQUIRED id's timeout (3.5, 3.7);
- join(group): the rebalance timeout, or an initial-delay step (payload ``("initial", d, R)``);
- sync(group): pending-sync expiry for one generation (payload = that generation).
"""

from __future__ import annotations

from kafka_emu.errors import ErrorCode

from .core import Core, heartbeat_key, join_key, sync_key
from .events import (
    GenerationChanged,
    MemberRemoved,
    MemberSubscribed,
    RebalanceTriggered,
    RemovalReason,
)
from .group import Group, Member
from .results import JoinGroupResult, SyncGroupResult
from .state import GroupState

JOIN = "JoinGroup"
SYNC = "SyncGroup"


# ------------------------------------------------------------------ member removal
def detach_member(core: Core, group: Group, member: Member, reason: RemovalReason) -> None:
    """Remove a member: its parked JoinGroup gets UNKNOWN_MEMBER_ID (so a live client rejoins),
    its heartbeat timer is cancelled. A parked SyncGroup is dropped unanswered, as Kafka does."""
    request = group.take_join(member)
    if request is not None:
        core.reply(request, JOIN, group.group_id, JoinGroupResult(error=ErrorCode.UNKNOWN_MEMBER_ID))
    if member.sync_request is not None:
        core.dropped(group.group_id, member.sync_request, SYNC, "member removed")
        member.sync_request = None
    group.remove(member.member_id)
    core.cancel_heartbeat(group, member.member_id)
    emit_removed(core, group.group_id, member.member_id, member.group_instance_id, reason)


def drop_pending(core: Core, group: Group, member_id: str, reason: RemovalReason) -> None:
    group.remove(member_id)
    core.cancel_heartbeat(group, member_id)
    emit_removed(core, group.group_id, member_id, None, reason, pending=True)


def emit_removed(core: Core, group_id: str, member_id: str, instance_id: str | None,
                 reason: RemovalReason, *, pending: bool = False) -> None:
    """The one MemberRemoved event (built only when someone observes)."""
    if core.observing:
        core.emit(MemberRemoved(at_ms=core.now, group_id=group_id, member_id=member_id,
                                group_instance_id=instance_id, reason=reason, pending=pending))


# ------------------------------------------------------------------ rebalance start
def maybe_prepare_rebalance_or_complete_join(core: Core, group: Group, reason: str) -> None:
    if group.can_rebalance():
        prepare_rebalance(core, group, reason)
    else:
        maybe_complete_join_phase(core, group)


def prepare_rebalance(core: Core, group: Group, reason: str) -> None:
    if group.state is GroupState.COMPLETING_REBALANCE:
        # 3.11: parked SyncGroups are cancelled with REBALANCE_IN_PROGRESS, assignments wiped.
        for member in group.members.values():
            member.assignment = b""
        propagate_assignment(core, group, ErrorCode.REBALANCE_IN_PROGRESS)
    group.pending_sync.clear()
    core.timers.cancel(sync_key(group.group_id))

    initial = group.state is GroupState.EMPTY
    if initial:
        # 3.6: the first rebalance from Empty waits group.initial.rebalance.delay.ms, extended
        # while members keep arriving, within the first members' rebalance timeout.
        delay = core.config.group_initial_rebalance_delay_ms
        remaining = max(group.rebalance_timeout_ms() - delay, 0)
        core.timers.schedule(join_key(group.group_id), core.now + delay, ("initial", delay, remaining))
    if core.observing:
        core.emit(RebalanceTriggered(at_ms=core.now, group_id=group.group_id, reason=reason))
    group.transition_to(GroupState.PREPARING_REBALANCE)
    if not initial:
        if group.has_all_members_joined():
            complete_join(core, group)
        else:
            core.timers.schedule(join_key(group.group_id), core.now + group.rebalance_timeout_ms(), ("normal",))


def maybe_complete_join_phase(core: Core, group: Group) -> None:
    """Early completion (3.2a); never during the initial rebalance (3.6)."""
    if group.state is not GroupState.PREPARING_REBALANCE:
        return
    if group.previous_state is GroupState.EMPTY:
        return
    if group.has_all_members_joined():
        complete_join(core, group)


# ------------------------------------------------------------------ join completion
def complete_join(core: Core, group: Group) -> None:
    """completeClassicGroupJoin (3.2)."""
    gid = group.group_id
    core.timers.cancel(join_key(gid))
    missing = [m for m in group.members.values() if m.join_request is None and not m.is_static]
    for member in missing:
        detach_member(core, group, member, RemovalReason.REBALANCE_TIMEOUT)

    if group.state is GroupState.DEAD:
        return
    if not group.maybe_elect_new_joined_leader() and group.members:
        # Only static members that did not rejoin are left: wait another rebalance timeout
        # until their sessions expire or they come back.
        core.timers.schedule(join_key(gid), core.now + group.rebalance_timeout_ms(), ("normal",))
        return

    group.init_next_generation()
    if core.observing:
        core.emit(
            GenerationChanged(
                at_ms=core.now,
                group_id=gid,
                generation=group.generation,
                protocol_name=group.protocol_name,
                leader=group.leader_id if group.members else None,
                members=tuple(group.members),
            )
        )
        for member in group.members.values():
            core.emit(
                MemberSubscribed(
                    at_ms=core.now,
                    group_id=gid,
                    generation=group.generation,
                    member_id=member.member_id,
                    group_instance_id=member.group_instance_id,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    metadata=member.metadata_by_name.get(group.protocol_name or "", b""),
                )
            )
    if group.state is GroupState.EMPTY:
        return

    leader_members = group.join_members()
    generation = group.generation
    protocol_type = group.protocol_type
    protocol_name = group.protocol_name
    leader = group.leader_id or ""
    timers = core.timers
    deadline_base = core.now
    for member in group.members.values():
        request = group.take_join(member)
        if request is not None:
            is_leader = member.member_id == leader
            core.reply(
                request,
                JOIN,
                gid,
                JoinGroupResult(
                    error=ErrorCode.NONE,
                    generation_id=generation,
                    protocol_type=protocol_type,
                    protocol_name=protocol_name,
                    leader=leader,
                    member_id=member.member_id,
                    members=leader_members if is_leader else (),
                ),
            )
        timers.schedule(heartbeat_key(gid, member.member_id), deadline_base + member.session_timeout_ms)
        member.is_new = False
        group.pending_sync[member.member_id] = None
    timers.schedule(sync_key(gid), deadline_base + group.rebalance_timeout_ms(), generation)


# ------------------------------------------------------------------ assignment propagation
def propagate_assignment(core: Core, group: Group, error: ErrorCode) -> None:
    """Answer every parked SyncGroup with its member's assignment (or the error) (3.10/3.11)."""
    if error is ErrorCode.NONE:
        protocol_type, protocol_name = group.protocol_type, group.protocol_name
    else:
        protocol_type = protocol_name = None
    gid = group.group_id
    for member in group.members.values():
        request = member.sync_request
        if request is not None:
            member.sync_request = None
            core.reply(
                request,
                SYNC,
                gid,
                SyncGroupResult(
                    error=error,
                    protocol_type=protocol_type,
                    protocol_name=protocol_name,
                    assignment=member.assignment,
                ),
            )
            # 3.7: answering a parked sync resets the session (also on the error path).
            core.schedule_heartbeat(group, member.member_id, member.session_timeout_ms)


# ------------------------------------------------------------------ timer callbacks
def on_heartbeat_expired(core: Core, group_id: str, member_id: str) -> None:
    group = core.groups.get(group_id)
    if group is None or group.state is GroupState.DEAD:
        return
    expire_member(core, group, member_id, forced=False)


def expire_member(core: Core, group: Group, member_id: str, *, forced: bool) -> bool:
    """The heartbeat timer's work for one member (or pending id): remove it and rebalance as
    Kafka's onExpireHeartbeat does. ``forced`` (the operator's "expire now") skips the check that
    a member parked in a join or sync counts as alive. True if something was removed."""
    core.cancel_heartbeat(group, member_id)
    if member_id in group.pending_members:
        drop_pending(core, group, member_id, RemovalReason.PENDING_EXPIRED)
        # 3.6 edge: this bypasses the initial-delay guard.
        if group.state is GroupState.PREPARING_REBALANCE and group.has_all_members_joined():
            complete_join(core, group)
        return True
    member = group.members.get(member_id)
    if member is None or (not forced and member.has_satisfied_heartbeat()):
        return False
    reason = RemovalReason.NEW_MEMBER_TIMEOUT if member.is_new else RemovalReason.SESSION_EXPIRED
    detach_member(core, group, member, reason)
    if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
        maybe_prepare_rebalance_or_complete_join(
            core, group, f"removing member {member_id} on heartbeat expiration"
        )
    elif group.state is GroupState.PREPARING_REBALANCE and group.has_all_members_joined():
        complete_join(core, group)
    return True


def on_join_timer(core: Core, group_id: str, payload: tuple) -> None:
    group = core.groups.get(group_id)
    if group is None:
        return
    if payload[0] == "initial":
        _, delay, remaining = payload
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            configured = core.config.group_initial_rebalance_delay_ms
            new_delay = min(configured, remaining)
            new_remaining = max(remaining - delay, 0)
            core.timers.schedule(join_key(group_id), core.now + new_delay, ("initial", new_delay, new_remaining))
            return
    complete_join(core, group)


def on_sync_expired(core: Core, group_id: str, generation: int) -> None:
    group = core.groups.get(group_id)
    if group is None or generation != group.generation:
        return
    if group.state not in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE) or not group.pending_sync:
        return
    laggards = sorted(group.pending_sync, key=_member_order(group))
    for member_id in laggards:
        member = group.members.get(member_id)
        if member is None:
            group.pending_sync.pop(member_id, None)  # a replaced static member's old id
        else:
            detach_member(core, group, member, RemovalReason.SYNC_TIMEOUT)
    prepare_rebalance(core, group, f"removing {laggards} on pending sync request expiration")


def _member_order(group: Group):
    order = {member_id: i for i, member_id in enumerate(group.members)}
    return lambda member_id: (order.get(member_id, len(order)), member_id)
