"""Operator commands: what a test (or an administrator) does to a group beyond the wire APIs.

The control plane's group operations arrive here as plain commands, like every API: command in,
``OperatorResult`` out, through the same ``Coordinator.handle`` door (so due timers fire first and
observers see the same events). Each command checks everything before it changes anything: an
answer with an error means nothing was changed.

- ExpireMember: the heartbeat timer's own work, run now (``rebalance.expire_member``), also for a
  member parked in a join or sync, which a real expiry would spare;
- IgnoreHeartbeats: a flag on the member; heartbeats and commits no longer reset its session;
- TriggerRebalance: Kafka's prepareRebalance, as a metadata change would start it;
- DeleteGroup: DeleteGroups for one group; ``force`` first removes every member as LeaveGroup
  would (parked JoinGroups get UNKNOWN_MEMBER_ID, parked SyncGroups are dropped);
- SetOffsets: an administrator's offset reset, allowed in any group state.

Removing a static member (KIP-345's admin removal) needs no command of its own: it is LeaveGroup
naming only the instance id. Aimed at a consumer (KIP-848) group, the same commands run
``consumer/operator.py``'s handlers instead (the coordinator's shared-handler dispatch).
"""

from __future__ import annotations

from kafka_emu.errors import ErrorCode

from . import admin
from .commands import DeleteGroup, ExpireMember, IgnoreHeartbeats, SetOffsets, TriggerRebalance
from .core import Core
from .events import OffsetsCommitted, RemovalReason
from .group import Group
from .offsets_store import StoredOffset
from .rebalance import detach_member, drop_pending, expire_member, prepare_rebalance
from .results import OperatorResult
from .state import GroupState

API = "Operator"


def _answer(core: Core, cmd, error: ErrorCode = ErrorCode.NONE, detail: str = "",
            member_ids: tuple[str, ...] = ()) -> None:
    core.reply(cmd.request_id, API, cmd.group_id, OperatorResult(error=error, detail=detail, member_ids=member_ids))


def _live_group(core: Core, cmd) -> Group | None:
    """The group, or None after answering why it cannot be acted on."""
    group = core.groups.get(cmd.group_id)
    if group is None:
        _answer(core, cmd, ErrorCode.GROUP_ID_NOT_FOUND, f"group {cmd.group_id!r} does not exist")
        return None
    if group.state is GroupState.DEAD:
        _answer(core, cmd, ErrorCode.COORDINATOR_NOT_AVAILABLE, f"group {cmd.group_id!r} is Dead")
        return None
    return group


def _member_id(core: Core, cmd, group: Group, *, pending_ok: bool) -> str | None:
    """The member id a command names (by member id or instance id), or None after answering."""
    if (cmd.member_id is None) == (cmd.group_instance_id is None):
        _answer(core, cmd, ErrorCode.INVALID_REQUEST, "name the member by member_id or group_instance_id")
        return None
    if cmd.group_instance_id is not None:
        member_id = group.static_members.get(cmd.group_instance_id)
        if member_id is None:
            _answer(core, cmd, ErrorCode.UNKNOWN_MEMBER_ID,
                    f"group {cmd.group_id!r} has no member with group.instance.id {cmd.group_instance_id!r}")
        return member_id
    if cmd.member_id in group.members or (pending_ok and cmd.member_id in group.pending_members):
        return cmd.member_id
    _answer(core, cmd, ErrorCode.UNKNOWN_MEMBER_ID, f"group {cmd.group_id!r} has no member {cmd.member_id!r}")
    return None


def handle_expire_member(core: Core, cmd: ExpireMember) -> None:
    group = _live_group(core, cmd)
    if group is None:
        return
    member_id = _member_id(core, cmd, group, pending_ok=True)
    if member_id is None:
        return
    expire_member(core, group, member_id, forced=True)
    _answer(core, cmd, member_ids=(member_id,))


def handle_ignore_heartbeats(core: Core, cmd: IgnoreHeartbeats) -> None:
    group = _live_group(core, cmd)
    if group is None:
        return
    member_id = _member_id(core, cmd, group, pending_ok=False)
    if member_id is None:
        return
    group.members[member_id].heartbeats_ignored = cmd.ignore
    _answer(core, cmd, member_ids=(member_id,))


def handle_trigger_rebalance(core: Core, cmd: TriggerRebalance) -> None:
    group = _live_group(core, cmd)
    if group is None:
        return
    if group.state is GroupState.PREPARING_REBALANCE:
        return _answer(core, cmd, detail="a rebalance is already in progress")
    if group.state is GroupState.EMPTY:
        return _answer(core, cmd, ErrorCode.INVALID_REQUEST,
                       f"group {cmd.group_id!r} is Empty: no members to rebalance")
    prepare_rebalance(core, group, cmd.reason)
    _answer(core, cmd, member_ids=tuple(group.members))


def handle_delete_group(core: Core, cmd: DeleteGroup) -> None:
    group = _live_group(core, cmd)
    if group is None:
        return
    if group.state is not GroupState.EMPTY and not cmd.force:
        return _answer(core, cmd, ErrorCode.NON_EMPTY_GROUP,
                       f"group {cmd.group_id!r} is {group.state.value} with {len(group.members)} member(s); "
                       "delete with force to remove them first")
    removed = tuple(group.members)
    for member in list(group.members.values()):
        detach_member(core, group, member, RemovalReason.GROUP_DELETED)
    for member_id in list(group.pending_members):
        drop_pending(core, group, member_id, RemovalReason.GROUP_DELETED)
    admin.delete_group(core, group, "control")
    _answer(core, cmd, member_ids=removed)


def handle_set_offsets(core: Core, cmd: SetOffsets) -> None:
    group = core.groups.get(cmd.group_id)
    if group is not None and group.state is GroupState.DEAD:
        return _answer(core, cmd, ErrorCode.COORDINATOR_NOT_AVAILABLE, f"group {cmd.group_id!r} is Dead")
    for o in cmd.offsets:
        if o.offset < 0:
            return _answer(core, cmd, ErrorCode.INVALID_REQUEST,
                           f"offset {o.offset} for {o.topic}-{o.partition} is negative")
    if group is None:
        core.create_group(cmd.group_id)
    for o in cmd.offsets:
        core.offsets.put(cmd.group_id, o.topic, o.partition, StoredOffset(
            offset=o.offset, leader_epoch=o.leader_epoch,
            metadata=o.metadata if o.metadata is not None else "", commit_timestamp_ms=core.now))
    if cmd.offsets and core.observing:
        core.emit(OffsetsCommitted(at_ms=core.now, group_id=cmd.group_id, member_id="", generation_id=-1,
                                   offsets=tuple((o.topic, o.partition, o.offset) for o in cmd.offsets)))
    _answer(core, cmd)
