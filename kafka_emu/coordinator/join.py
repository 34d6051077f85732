"""JoinGroup (reference 3.2-3.10, "JoinGroup" table in 3.10).

JoinGroup v0-9 as commands: v4 MEMBER_ID_REQUIRED (``require_known_member_id``), v5 static
members (``group_instance_id``), v7 KIP-559 protocol type in the response (the broker and client
compare it), v8 reason, v9 SkipAssignment (``supports_skip_assignment``).

Order of checks for a non-empty member id (after the size check): Dead -> protocol support ->
pending member -> member validation -> state, so an unknown id with unsupported protocols gets
INCONSISTENT_GROUP_PROTOCOL rather than UNKNOWN_MEMBER_ID (3.10).
"""

from __future__ import annotations

from kafka_emu.errors import ErrorCode

from .commands import JoinGroup
from .core import Core, heartbeat_key
from .events import MemberAdded, PendingMemberAdded, RemovalReason
from .group import Group, Member
from .rebalance import (
    JOIN,
    SYNC,
    detach_member,
    drop_pending,
    emit_removed,
    maybe_complete_join_phase,
    maybe_prepare_rebalance_or_complete_join,
    prepare_rebalance,
)
from .results import JoinGroupResult, SyncGroupResult
from .state import GroupState


def _fail(core: Core, cmd: JoinGroup, error: ErrorCode, member_id: str) -> None:
    core.reply(cmd.request_id, JOIN, cmd.group_id, JoinGroupResult(error=error, member_id=member_id))


def handle_join(core: Core, cmd: JoinGroup) -> None:
    if cmd.group_id == "":
        return _fail(core, cmd, ErrorCode.INVALID_GROUP_ID, cmd.member_id)
    config = core.config
    if not config.group_min_session_timeout_ms <= cmd.session_timeout_ms <= config.group_max_session_timeout_ms:
        return _fail(core, cmd, ErrorCode.INVALID_SESSION_TIMEOUT, cmd.member_id)

    unknown_member = cmd.member_id == ""
    group = core.groups.get(cmd.group_id)
    if group is None:
        if not unknown_member:
            return _fail(core, cmd, ErrorCode.UNKNOWN_MEMBER_ID, cmd.member_id)
        group = core.create_group(cmd.group_id)

    if not _accept_joining_member(core, group, cmd.member_id):
        # 3.9: the member (or pending id) is removed; no join-completion check follows (Kafka).
        if cmd.member_id in group.members:
            # Only reachable in PreparingRebalance for a member that is not awaiting join, so
            # it has no parked request to answer.
            detach_member(core, group, group.members[cmd.member_id], RemovalReason.GROUP_MAX_SIZE)
        elif cmd.member_id in group.pending_members:
            drop_pending(core, group, cmd.member_id, RemovalReason.GROUP_MAX_SIZE)
        return _fail(core, cmd, ErrorCode.GROUP_MAX_SIZE_REACHED, "")
    if unknown_member:
        _join_new_member(core, group, cmd)
    else:
        _join_existing_member(core, group, cmd)


def _accept_joining_member(core: Core, group: Group, member_id: str) -> bool:
    max_size = core.config.group_max_size
    state = group.state
    if state is GroupState.EMPTY or state is GroupState.DEAD:
        return True
    member = group.members.get(member_id)
    if state is GroupState.PREPARING_REBALANCE:
        # Counting parked joins (not members) lets a reduced max size kick out the last
        # members to rejoin.
        return (member is not None and member.awaiting_join) or group.num_awaiting_join < max_size
    return member is not None or len(group.members) < max_size


# ---------------------------------------------------------------------------- new members
def _join_new_member(core: Core, group: Group, cmd: JoinGroup) -> None:
    if group.state is GroupState.DEAD:
        return _fail(core, cmd, ErrorCode.COORDINATOR_NOT_AVAILABLE, "")
    if not group.supports_protocols(cmd.protocol_type, (name for name, _ in cmd.protocols)):
        return _fail(core, cmd, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "")
    prefix = cmd.group_instance_id if cmd.group_instance_id is not None else cmd.client_id
    new_id = f"{prefix}-{core.new_member_uuid()}"
    if cmd.group_instance_id is not None:
        existing = group.static_members.get(cmd.group_instance_id)
        if existing is not None:
            return _replace_static_member(core, group, cmd, existing, new_id)
        return _add_member(core, group, cmd, new_id)
    if cmd.require_known_member_id:
        # 3.5 (KIP-394): hand out an id and wait for the client to come back with it. The group
        # state does not change, but the pending id blocks early join completion.
        group.pending_members[new_id] = new_id
        core.timers.schedule(heartbeat_key(group.group_id, new_id), core.now + cmd.session_timeout_ms)
        if core.observing:
            core.emit(
                PendingMemberAdded(at_ms=core.now, group_id=group.group_id, member_id=new_id, client_id=cmd.client_id)
            )
        return _fail(core, cmd, ErrorCode.MEMBER_ID_REQUIRED, new_id)
    _add_member(core, group, cmd, new_id)


def _add_member(core: Core, group: Group, cmd: JoinGroup, member_id: str) -> None:
    member = Member(
        member_id=member_id,
        group_instance_id=cmd.group_instance_id,
        client_id=cmd.client_id,
        client_host=cmd.client_host,
        rebalance_timeout_ms=cmd.rebalance_timeout_ms,
        session_timeout_ms=cmd.session_timeout_ms,
        protocol_type=cmd.protocol_type,
        protocols=tuple(cmd.protocols),
        is_new=True,
    )
    if group.state is GroupState.PREPARING_REBALANCE and group.previous_state is GroupState.EMPTY:
        group.new_member_added = True  # extends the initial delay (3.6)
    group.add(member, cmd.request_id)
    if core.observing:
        core.emit(
            MemberAdded(
                at_ms=core.now,
                group_id=group.group_id,
                member_id=member_id,
                group_instance_id=cmd.group_instance_id,
                client_id=cmd.client_id,
            )
        )
    core.parked(group.group_id, cmd.request_id, JOIN)
    # A new member cannot heartbeat until its join completes, so it gets the fixed new-member
    # join timeout instead of its session timeout (3.7).
    core.schedule_heartbeat(group, member_id, core.config.new_member_join_timeout_ms)
    maybe_prepare_rebalance_or_complete_join(
        core, group, _reason(cmd, f"adding new member {member_id} with group instance id {cmd.group_instance_id}")
    )


def _replace_static_member(core: Core, group: Group, cmd: JoinGroup, old_id: str, new_id: str) -> None:
    """3.8 static member replacement (updateStaticMemberThenRebalanceOrCompleteJoin)."""
    gid = group.group_id
    current_leader = group.leader_id
    old, new = group.replace_static_member(cmd.group_instance_id, old_id, new_id)  # type: ignore[arg-type]
    # Fence whatever the old incarnation still has parked.
    if old.join_request is not None:
        core.reply(
            old.join_request,
            JOIN,
            gid,
            JoinGroupResult(error=ErrorCode.FENCED_INSTANCE_ID, member_id=old_id),
        )
        old.join_request = None
    if old.sync_request is not None:
        core.reply(old.sync_request, SYNC, gid, SyncGroupResult(error=ErrorCode.FENCED_INSTANCE_ID))
        old.sync_request = None
    core.cancel_heartbeat(group, old_id)
    emit_removed(core, gid, old_id, old.group_instance_id, RemovalReason.REPLACED)
    if core.observing:
        core.emit(
            MemberAdded(
                at_ms=core.now,
                group_id=gid,
                member_id=new_id,
                group_instance_id=new.group_instance_id,
                client_id=new.client_id,
                replaces=old_id,
            )
        )
    # Kafka re-arms the session with the member's previous timeout, before the update below.
    core.schedule_heartbeat(group, new_id, new.session_timeout_ms)
    group.update_member(new, tuple(cmd.protocols), cmd.rebalance_timeout_ms, cmd.session_timeout_ms, cmd.request_id)
    core.parked(gid, cmd.request_id, JOIN)

    state = group.state
    if state is GroupState.STABLE:
        if group.protocol_name == group.select_protocol():
            # No rebalance: the group keeps its assignment and the new id takes over (3.8).
            group.store()  # Kafka writes the group with the new member id to its log
            request = group.take_join(new)
            if cmd.supports_skip_assignment:
                # v9+: a returning leader gets the member list but must not reassign.
                is_leader = group.leader_id == new_id
                result = JoinGroupResult(
                    error=ErrorCode.NONE,
                    generation_id=group.generation,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader=group.leader_id or "",
                    member_id=new_id,
                    members=group.join_members() if is_leader else (),
                    skip_assignment=is_leader,
                )
            else:
                # v0-8: report the leader from before the replacement, so a returning leader sees
                # itself as a follower and does not reassign.
                result = JoinGroupResult(
                    error=ErrorCode.NONE,
                    generation_id=group.generation,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader=current_leader or "",
                    member_id=new_id,
                )
            core.reply(request, JOIN, gid, result)
        else:
            maybe_prepare_rebalance_or_complete_join(
                core, group, _reason(cmd, f"static member {new_id} changes the selected protocol")
            )
    elif state is GroupState.COMPLETING_REBALANCE:
        # The leader may already hold an assignment keyed by the old id: always rebalance.
        prepare_rebalance(core, group, _reason(cmd, f"static member {new_id} rejoined during sync"))
    else:
        maybe_complete_join_phase(core, group)


# ---------------------------------------------------------------------- known member ids
def _join_existing_member(core: Core, group: Group, cmd: JoinGroup) -> None:
    member_id = cmd.member_id
    if group.state is GroupState.DEAD:
        return _fail(core, cmd, ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id)
    if not group.supports_protocols(cmd.protocol_type, (name for name, _ in cmd.protocols)):
        return _fail(core, cmd, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id)
    if member_id in group.pending_members:
        if cmd.group_instance_id is not None:
            # Kafka throws IllegalStateException here -> UNKNOWN_SERVER_ERROR (3.8).
            return _fail(core, cmd, ErrorCode.UNKNOWN_SERVER_ERROR, "")
        # the id as handed out, not the request's copy of it: the member, its timer key and the
        # group's maps then keep one string (memory: one per member of a large group)
        return _add_member(core, group, cmd, group.pending_members[member_id])
    error = group.validate_member(member_id, cmd.group_instance_id)
    if error is not None:
        return _fail(core, cmd, error, member_id)

    member = group.members[member_id]
    state = group.state
    if state is GroupState.PREPARING_REBALANCE:
        return _update_member(core, group, member, cmd, "joining during PreparingRebalance")
    if state is GroupState.COMPLETING_REBALANCE:
        if member.matches(cmd.protocols):
            # Probably a lost JoinGroup response: answer for the current generation.
            return _current_generation(core, group, cmd, with_members=group.is_leader(member_id))
        return _update_member(core, group, member, cmd, "metadata changed during CompletingRebalance")
    if state is GroupState.STABLE:
        if group.is_leader(member_id):
            # A leader JoinGroup always rebalances (it may have seen topic metadata change).
            return _update_member(core, group, member, cmd, "leader rejoined during Stable")
        if not member.matches(cmd.protocols):
            return _update_member(core, group, member, cmd, "metadata changed during Stable")
        return _current_generation(core, group, cmd, with_members=False)
    # Empty with a validated member cannot normally happen (3.10 last JoinGroup row).
    _fail(core, cmd, ErrorCode.UNKNOWN_MEMBER_ID, member_id)


def _update_member(core: Core, group: Group, member: Member, cmd: JoinGroup, why: str) -> None:
    superseded = group.update_member(
        member, tuple(cmd.protocols), cmd.rebalance_timeout_ms, cmd.session_timeout_ms, cmd.request_id
    )
    # A JoinGroup parked earlier for this member (say, on a dead connection) is never answered.
    core.dropped(group.group_id, superseded, JOIN, "superseded by a newer JoinGroup")
    core.parked(group.group_id, cmd.request_id, JOIN)
    maybe_prepare_rebalance_or_complete_join(core, group, _reason(cmd, f"member {member.member_id} {why}"))


def _current_generation(core: Core, group: Group, cmd: JoinGroup, with_members: bool) -> None:
    core.reply(
        cmd.request_id,
        JOIN,
        group.group_id,
        JoinGroupResult(
            error=ErrorCode.NONE,
            generation_id=group.generation,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id or "",
            member_id=cmd.member_id,
            members=group.join_members() if with_members else (),
        ),
    )


def _reason(cmd: JoinGroup, what: str) -> str:
    return f"{what}; client reason: {cmd.reason if cmd.reason is not None else 'not provided'}"
