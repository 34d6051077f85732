"""The control plane's operator commands aimed at a consumer group (KIP-848).

The same commands and ``OperatorResult`` answers as for classic groups (``coordinator/operator.py``),
with the consumer group's meaning; an answer with an error means nothing was changed:
- ExpireMember: the session timeout's own work, run now (the member is fenced, the group epoch
  bumped; the others reconcile on their next heartbeats);
- IgnoreHeartbeats: heartbeats are answered but no longer re-arm the member's session timer;
- TriggerRebalance: bump the group epoch, so the next heartbeat computes a new target assignment
  (what a subscription or metadata change does);
- DeleteGroup: an Empty group, or with ``force`` any group, its members fenced first;
- SetOffsets: an administrator's offset write, in any state.
"""

from __future__ import annotations

from kafka_emu.errors import ErrorCode

from ..commands import DeleteGroup, ExpireMember, IgnoreHeartbeats, SetOffsets, TriggerRebalance
from ..core import Core
from ..events import OffsetsCommitted, RemovalReason
from ..offsets_store import StoredOffset
from ..results import OperatorResult
from .epochs import bump_group_epoch, fence, update_state
from .model import ConsumerGroup, ConsumerGroupState, ConsumerMember

API = "Operator"


def _answer(core: Core, cmd, error: ErrorCode = ErrorCode.NONE, detail: str = "",
            member_ids: tuple[str, ...] = ()) -> None:
    core.reply(cmd.request_id, API, cmd.group_id,
               OperatorResult(error=error, detail=detail, member_ids=member_ids))


def _member(core: Core, cmd, group: ConsumerGroup) -> ConsumerMember | None:
    if (cmd.member_id is None) == (cmd.group_instance_id is None):
        _answer(core, cmd, ErrorCode.INVALID_REQUEST, "name the member by member_id or group_instance_id")
        return None
    if cmd.group_instance_id is not None:
        member = group.static_member(cmd.group_instance_id)
        what = f"group.instance.id {cmd.group_instance_id!r}"
    else:
        member = group.members.get(cmd.member_id)
        what = repr(cmd.member_id)
    if member is None:
        _answer(core, cmd, ErrorCode.UNKNOWN_MEMBER_ID, f"group {cmd.group_id!r} has no member {what}")
    return member


def handle_expire_member(core: Core, cmd: ExpireMember) -> None:
    group = core.consumer_groups[cmd.group_id]
    member = _member(core, cmd, group)
    if member is None:
        return
    fence(core, group, member, RemovalReason.SESSION_EXPIRED)
    update_state(core, group)
    _answer(core, cmd, member_ids=(member.member_id,))


def handle_ignore_heartbeats(core: Core, cmd: IgnoreHeartbeats) -> None:
    group = core.consumer_groups[cmd.group_id]
    member = _member(core, cmd, group)
    if member is None:
        return
    member.heartbeats_ignored = cmd.ignore
    _answer(core, cmd, member_ids=(member.member_id,))


def handle_trigger_rebalance(core: Core, cmd: TriggerRebalance) -> None:
    group = core.consumer_groups[cmd.group_id]
    if not group.members:
        return _answer(core, cmd, ErrorCode.INVALID_REQUEST,
                       f"group {cmd.group_id!r} is Empty: no members to rebalance")
    bump_group_epoch(core, group, "triggered")
    update_state(core, group)
    _answer(core, cmd, member_ids=tuple(group.members))


def handle_delete_group(core: Core, cmd: DeleteGroup) -> None:
    from .shared import remove

    group = core.consumer_groups[cmd.group_id]
    if group.state is not ConsumerGroupState.EMPTY and not cmd.force:
        return _answer(core, cmd, ErrorCode.NON_EMPTY_GROUP,
                       f"group {cmd.group_id!r} is {group.state.value} with {len(group.members)} "
                       "member(s); delete with force to remove them first")
    removed = tuple(group.members)
    for member in list(group.members.values()):
        fence(core, group, member, RemovalReason.GROUP_DELETED)
    remove(core, group, "control", keep_offsets=False)
    _answer(core, cmd, member_ids=removed)


def handle_set_offsets(core: Core, cmd: SetOffsets) -> None:
    for o in cmd.offsets:
        if o.offset < 0:
            return _answer(core, cmd, ErrorCode.INVALID_REQUEST,
                           f"offset {o.offset} for {o.topic}-{o.partition} is negative")
    for o in cmd.offsets:
        core.offsets.put(cmd.group_id, o.topic, o.partition, StoredOffset(
            offset=o.offset, leader_epoch=o.leader_epoch,
            metadata=o.metadata if o.metadata is not None else "", commit_timestamp_ms=core.now))
    if cmd.offsets and core.observing:
        core.emit(OffsetsCommitted(at_ms=core.now, group_id=cmd.group_id, member_id="",
                                   generation_id=-1,
                                   offsets=tuple((o.topic, o.partition, o.offset) for o in cmd.offsets)))
    _answer(core, cmd)


OPERATOR_HANDLERS = {
    ExpireMember: handle_expire_member,
    IgnoreHeartbeats: handle_ignore_heartbeats,
    TriggerRebalance: handle_trigger_rebalance,
    DeleteGroup: handle_delete_group,
    SetOffsets: handle_set_offsets,
}
