"""ShareGroupHeartbeat in the pure coordinator (Kafka 4.2's GroupMetadataManager.shareGroupHeartbeat).

One heartbeat, in order (the request checks of GroupCoordinatorService -- INVALID_REQUEST -- come
first, in ``validate``):
1. epoch -1: leave. The group must be a share group (GROUP_ID_NOT_FOUND "Group X not found." /
   "Group X is not a share group."), the member known (UNKNOWN_MEMBER_ID); it is fenced, the group
   epoch bumped, and the answer carries epoch -1.
2. find the group: epoch 0 creates it; any other epoch needs it ("Share group X not found."); an
   id held by a classic or consumer group is refused with GROUP_ID_NOT_FOUND "Group X is not a
   share group." (Kafka converts nothing to or from share groups).
3. group.share.max.size: a member new to a full group gets GROUP_MAX_SIZE_REACHED.
4. find the member: epoch 0 creates it (a known member rejoining with 0 goes on as it is); else it
   must exist (UNKNOWN_MEMBER_ID) and send its current epoch or the previous one (the answer that
   carried the new one may have been lost), else FENCED_MEMBER_EPOCH.
5. apply rack and subscription; a changed subscription, or a changed partition count of a
   subscribed topic, bumps the group epoch;
6. group epoch ahead of the assignment epoch: a new target with the simple assignor (assignor.py),
   from the previous target; the assignment epoch becomes the group epoch;
7. the member takes its target at the assignment epoch (no revocation in share groups);
8. (re)arm the member's session (the group's share.session.timeout.ms, else the broker's) and
   answer with the member epoch, the heartbeat interval (likewise) and, when it joined (epoch 0) or
   its partitions changed, its assignment.

Kafka initializes each newly assigned share-partition's state in the share coordinator before the
partition becomes assignable (the first heartbeat after a subscription often gets nothing, the next
one gets the partitions); kafka-emu's share-partitions need no initialization, so they are
assignable at once. Topic metadata is read on every heartbeat from the catalogue the broker passes
(Kafka refreshes it on a deadline or a bump).
"""

from __future__ import annotations

from kafka_emu.errors import ErrorCode, KafkaError

from ..consumer.events import (ConsumerGroupStateChanged, GroupEpochBumped, MemberReconciled,
                               TargetAssignmentComputed)
from ..consumer.validation import blank  # Kafka's throwIfEmptyString, as for consumer groups
from ..core import Core
from ..events import GroupCreated, MemberAdded, MemberRemoved, RemovalReason
from . import assignor
from .commands import ShareGroupHeartbeat, ShareGroupHeartbeatResult
from .model import LEAVE_EPOCH, ShareGroup, ShareMember, as_partitions, normalized

API = "ShareGroupHeartbeat"
SESSION = "sg_session"
TIMER_KINDS = frozenset({SESSION})


def session_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return (SESSION, group_id, member_id)


def groups(core: Core) -> dict[str, ShareGroup]:
    return core.share_groups


# ----------------------------------------------------------------------------------- the door
def handle_heartbeat(core: Core, cmd: ShareGroupHeartbeat) -> None:
    try:
        _heartbeat(core, cmd)
    except KafkaError as exc:  # answered here so the error message reaches the client
        core.reply(cmd.request_id, API, cmd.group_id, ShareGroupHeartbeatResult(
            error=exc.code, error_message=exc.message))


def validate(cmd: ShareGroupHeartbeat) -> None:
    """GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid, in its order."""
    def invalid(message: str) -> KafkaError:
        return KafkaError(ErrorCode.INVALID_REQUEST, message)

    if blank(cmd.member_id):
        raise invalid("MemberId can't be empty.")
    if blank(cmd.group_id):
        raise invalid("GroupId can't be empty.")
    if blank(cmd.rack_id):
        raise invalid("RackId can't be empty.")
    if cmd.member_epoch == 0:
        if not cmd.subscribed_topic_names:
            raise invalid("SubscribedTopicNames must be set in first request.")
    elif cmd.member_epoch < LEAVE_EPOCH:
        raise invalid("MemberEpoch is invalid.")


def _heartbeat(core: Core, cmd: ShareGroupHeartbeat) -> None:
    validate(cmd)
    if cmd.member_epoch == LEAVE_EPOCH:
        return _leave(core, cmd)
    joining = cmd.member_epoch == 0
    group = _get_or_create_group(core, cmd.group_id, create=joining)
    member = group.members.get(cmd.member_id)
    max_size = core.config.share.max_size
    if member is None and len(group.members) >= max_size:
        raise KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                         f"The share group has reached its maximum capacity of {max_size} members.")
    is_new = False
    if member is None:
        if not joining:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {cmd.member_id} is not a member "
                             f"of group {group.group_id}.")
        member = _add_member(core, group, ShareMember(cmd.member_id, client_id=cmd.client_id))
        is_new = True
    elif not joining:
        _check_epoch(member, cmd.member_epoch)
    old_assigned = normalized(member.assigned)
    old_names = member.subscribed_topic_names

    if cmd.rack_id is not None:
        member.rack_id = cmd.rack_id
    if cmd.subscribed_topic_names is not None:
        group.set_subscription(member, tuple(sorted(set(cmd.subscribed_topic_names))))
    member.client_id, member.client_host = cmd.client_id, cmd.client_host

    reason = None
    if old_names != member.subscribed_topic_names:
        reason = "member_joined" if is_new else "subscription_changed"
    metadata = {t: cmd.topics[t] for t in sorted(group.topic_subscribers) if t in cmd.topics}
    if metadata != group.subscription_metadata:
        group.subscription_metadata = metadata
        reason = reason or "metadata_changed"
    if reason is not None:
        bump_group_epoch(core, group, reason)
    if group.group_epoch > group.assignment_epoch:
        compute_target(core, group)
    reconcile(core, group, member)

    session_ms = cmd.session_timeout_ms or core.config.share.session_timeout_ms
    group.session_timeout_ms = session_ms
    if not member.heartbeats_ignored:
        core.timers.schedule(session_key(group.group_id, member.member_id), core.now + session_ms)
    update_state(core, group)
    assignment = None
    if joining or normalized(member.assigned) != old_assigned:
        assignment = as_partitions(member.assigned)
    core.reply(cmd.request_id, API, group.group_id, ShareGroupHeartbeatResult(
        error=ErrorCode.NONE, member_id=member.member_id, member_epoch=member.member_epoch,
        heartbeat_interval_ms=cmd.heartbeat_interval_ms or core.config.share.heartbeat_interval_ms,
        assignment=assignment))


# ------------------------------------------------------------------------------ group / member
def other_type_message(core: Core, group_id: str) -> str | None:
    """Kafka's message for an id held by a group of another type, None if it is not."""
    if group_id in core.groups or group_id in core.consumer_groups:
        return f"Group {group_id} is not a share group."
    return None


def _get_or_create_group(core: Core, group_id: str, *, create: bool) -> ShareGroup:
    group = core.share_groups.get(group_id)
    if group is not None:
        return group
    message = other_type_message(core, group_id)
    if message is not None:
        raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, message)
    if not create:
        raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
    group = ShareGroup(group_id, created_at_ms=core.now, state_since_ms=core.now)
    core.share_groups[group_id] = group
    if core.observing:
        core.emit(GroupCreated(at_ms=core.now, group_id=group_id))
    return group


def _check_epoch(member: ShareMember, received: int) -> None:
    if received > member.member_epoch:
        raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                         f"The share group member has a greater member epoch ({received}) than the "
                         f"one known by the group coordinator ({member.member_epoch}). The member "
                         "must abandon all its partitions and rejoin.")
    if received < member.member_epoch and received != member.previous_member_epoch:
        raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                         f"The share group member has a smaller member epoch ({received}) than the "
                         f"one known by the group coordinator ({member.member_epoch}). The member "
                         "must abandon all its partitions and rejoin.")


def _add_member(core: Core, group: ShareGroup, member: ShareMember) -> ShareMember:
    group.members[member.member_id] = member
    if core.observing:
        core.emit(MemberAdded(at_ms=core.now, group_id=group.group_id, member_id=member.member_id,
                              group_instance_id=None, client_id=member.client_id))
    return member


# ----------------------------------------------------------------------- epochs and assignment
def bump_group_epoch(core: Core, group: ShareGroup, reason: str) -> None:
    group.group_epoch += 1
    if core.observing:
        core.emit(GroupEpochBumped(at_ms=core.now, group_id=group.group_id,
                                   group_epoch=group.group_epoch, reason=reason))


def compute_target(core: Core, group: ShareGroup) -> None:
    old = group.target
    members = {m.member_id: m.subscribed_topic_names for m in group.members.values()}
    group.target = assignor.assign(members, group.subscription_metadata, old)
    group.assignment_epoch = group.group_epoch
    if core.observing:
        core.emit(TargetAssignmentComputed(
            at_ms=core.now, group_id=group.group_id, assignment_epoch=group.assignment_epoch,
            assignor=assignor.NAME,
            changed=tuple((m, as_partitions(a)) for m, a in group.target.items()
                          if old.get(m) != a)))


def reconcile(core: Core, group: ShareGroup, member: ShareMember) -> None:
    """Kafka's ShareGroupAssignmentBuilder: a member not at the assignment epoch takes its target
    and the epoch at once."""
    epoch = group.assignment_epoch
    if member.member_epoch == epoch:
        return
    member.previous_member_epoch = member.member_epoch
    member.member_epoch = epoch
    member.assigned = dict(group.target.get(member.member_id, {}))
    if core.observing:
        core.emit(MemberReconciled(
            at_ms=core.now, group_id=group.group_id, member_id=member.member_id,
            member_epoch=epoch, state="stable", assigned=as_partitions(member.assigned),
            pending_revocation=()))


def update_state(core: Core, group: ShareGroup) -> None:
    new = group.computed_state()
    if new is not group.state:
        old, group.state, group.state_since_ms = group.state, new, core.now
        if core.observing:
            core.emit(ConsumerGroupStateChanged(at_ms=core.now, group_id=group.group_id,
                                                old=old.value, new=new.value))


# ------------------------------------------------------------------------------- leave / fence
def _leave(core: Core, cmd: ShareGroupHeartbeat) -> None:
    group = core.share_groups.get(cmd.group_id)
    if group is None:
        raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, other_type_message(core, cmd.group_id)
                         or f"Group {cmd.group_id} not found.")
    member = group.members.get(cmd.member_id)
    if member is None:
        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {cmd.member_id} is not a member of "
                         f"group {group.group_id}.")
    fence(core, group, member, RemovalReason.LEFT_HEARTBEAT)
    core.reply(cmd.request_id, API, group.group_id, ShareGroupHeartbeatResult(
        error=ErrorCode.NONE, member_id=cmd.member_id, member_epoch=LEAVE_EPOCH))


def fence(core: Core, group: ShareGroup, member: ShareMember, reason: RemovalReason) -> None:
    """Remove a member and bump the group epoch (Kafka's shareGroupFenceMember); the others get
    a new target at their next heartbeat."""
    del group.members[member.member_id]
    group.set_subscription(member, ())
    group.target.pop(member.member_id, None)
    topics = group.topic_subscribers
    group.subscription_metadata = {t: n for t, n in group.subscription_metadata.items()
                                   if t in topics}
    core.timers.cancel(session_key(group.group_id, member.member_id))
    if core.share_departures is not None:
        core.share_departures.append((group.group_id, member.member_id, core.now))
    if core.observing:
        core.emit(MemberRemoved(at_ms=core.now, group_id=group.group_id, member_id=member.member_id,
                                group_instance_id=None, reason=reason))
    bump_group_epoch(core, group, "member_removed")
    update_state(core, group)


def unload(core: Core, group: ShareGroup) -> None:
    """The group's coordinator moved away: its session timers stop (the group's records keep
    its members, epochs and assignments; the broker answers NOT_COORDINATOR meanwhile)."""
    for member_id in group.members:
        core.timers.cancel(session_key(group.group_id, member_id))


def load(core: Core, group: ShareGroup) -> None:
    """A new coordinator loaded the group: every member's session restarts in full, as Kafka
    schedules the session timeouts of the members it replays."""
    session_ms = group.session_timeout_ms or core.config.share.session_timeout_ms
    for member_id, member in group.members.items():
        if not member.heartbeats_ignored:
            core.timers.schedule(session_key(group.group_id, member_id), core.now + session_ms)


def on_timer(core: Core, key, payload) -> None:
    _, group_id, member_id = key
    group = core.share_groups.get(group_id)
    member = None if group is None else group.members.get(member_id)
    if member is not None:
        fence(core, group, member, RemovalReason.SESSION_EXPIRED)
