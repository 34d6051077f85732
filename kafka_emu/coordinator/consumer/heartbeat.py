"""ConsumerGroupHeartbeat in the pure coordinator (Kafka's GroupMetadataManager.consumerGroupHeartbeat).

One heartbeat, in order:
1. validate the request (validation.py: INVALID_REQUEST, UNSUPPORTED_ASSIGNOR,
   INVALID_REGULAR_EXPRESSION);
2. epoch -1 / -2: leave (fence the member, or keep a static member at epoch -2 until its
   session expires or its instance id rejoins);
3. find the group (epoch 0 creates it; an Empty classic group is replaced, a non-empty one is
   converted when group.consumer.migration.policy allows it (migration.py), else refused with
   GROUP_ID_NOT_FOUND) and the member
   (epoch 0 creates it; a static instance id left with -2 is taken over; otherwise the epoch must
   be the member's, or its previous one with owned partitions within its assignment, else
   FENCED_MEMBER_EPOCH; unknown ids get UNKNOWN_MEMBER_ID);
4. apply the changed fields; bump the group epoch if the subscription or the partition counts of
   subscribed topics changed;
5. if the group epoch is ahead of the assignment epoch, compute a new target assignment with the
   preferred assignor (the one most members ask for, else the first of group.consumer.assignors);
6. reconcile the member one step (reconcile.py), (re)arm the rebalance timeout while it is
   revoking, and re-arm its session timeout (the group's consumer.session.timeout.ms if it sets
   one, else the broker's);
7. answer with the member epoch, the heartbeat interval (the group's, else the broker's) and, for
   a full request or a changed assignment, the partitions the member may own now;
8. after the answer, resolve the group's regular expressions if one is new to the group or the
   catalogue's topics changed (regexes.py: once per group, as Kafka's background resolution);
   a changed resolution bumps the group epoch for the members' next heartbeats.

Deliberate choices where Kafka is asynchronous: topic metadata (partition counts) is read on each
heartbeat from the catalogue the broker passes, and a regex resolution runs right after the
heartbeat that asks for it, where Kafka's executor finishes it a little later. A known dynamic
member that heartbeats with epoch 0 again (a client rejoining after FENCED_MEMBER_EPOCH) skips
the epoch check and goes on from its current state, reporting no owned partitions, as Kafka does
since KAFKA-19233; a static member rejoining with epoch 0 without having left (-2) gets
UNRELEASED_INSTANCE_ID even under the same member id.
"""

from __future__ import annotations

from kafka_emu.errors import ErrorCode, KafkaError

from ..core import Core
from ..events import GroupCreated, MemberAdded, MemberRemoved, RemovalReason
from .commands import ConsumerGroupHeartbeat, ConsumerGroupHeartbeatResult, as_partitions
from .epochs import (CLASSIC_JOIN, CLASSIC_SYNC, REBALANCE, SESSION,  # noqa: F401 (re-exported)
                     bump_group_epoch, cancel_member_timers, classic_key, compute_target, fence, on_timer,
                     preferred_assignor, rebalance_key, reconcile, remove_member,
                     schedule_retention, session_key, update_state)
from . import migration
from .events import RegexResolved
from .model import (LEAVE_EPOCH, STATIC_LEAVE_EPOCH, ConsumerGroup, ConsumerMember, normalized)
from .regexes import change_regex, member_topics, refresh_due, resolve, set_subscribed
from .validation import new_member_id, validate

API = "ConsumerGroupHeartbeat"
# ----------------------------------------------------------------------------------- the door
def handle_heartbeat(core: Core, cmd: ConsumerGroupHeartbeat) -> None:
    try:
        _heartbeat(core, cmd)
    except KafkaError as exc:  # answered here so the error message reaches the client
        core.reply(cmd.request_id, API, cmd.group_id, ConsumerGroupHeartbeatResult(
            error=exc.code, error_message=exc.message))


def _heartbeat(core: Core, cmd: ConsumerGroupHeartbeat) -> None:
    validate(core, cmd)
    if cmd.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
        return _leave(core, cmd)
    group = _get_or_create_group(core, cmd.group_id, create=cmd.member_epoch == 0,
                                 topics=cmd.topics)
    member_id = cmd.member_id or new_member_id(core)
    existing = group.members.get(member_id)
    if existing is None and cmd.instance_id is not None:
        existing = group.static_member(cmd.instance_id)
    if existing is None and len(group.members) >= core.config.group_consumer_max_size:
        raise KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                         f"The consumer group has reached its maximum capacity of "
                         f"{core.config.group_consumer_max_size} members.")
    member, is_new = _get_member(core, group, cmd, member_id)
    old_assigned = member.assigned
    old_subscription = (member.subscribed_topic_names, member.subscribed_topic_regex, is_new)

    if cmd.instance_id is not None:
        member.instance_id = cmd.instance_id
    if cmd.rack_id is not None:
        member.rack_id = cmd.rack_id
    if cmd.rebalance_timeout_ms != -1:
        member.rebalance_timeout_ms = cmd.rebalance_timeout_ms
    if cmd.server_assignor is not None:
        member.server_assignor = cmd.server_assignor
    if cmd.subscribed_topic_names is not None:
        member.subscribed_topic_names = tuple(sorted(set(cmd.subscribed_topic_names)))
    if cmd.subscribed_topic_regex is not None:
        member.subscribed_topic_regex = cmd.subscribed_topic_regex or None
    member.client_id = cmd.client_id
    member.client_host = cmd.client_host
    member.classic = None  # it speaks the consumer protocol now

    # As Kafka: new topic names bump the group epoch, so does a pattern the group has resolved
    # already; a pattern new to the group waits for its resolution (regexes.py).
    regex_bump, regex_requested = change_regex(group, old_subscription[1],
                                               member.subscribed_topic_regex)
    reason = None
    if (old_subscription[0] != member.subscribed_topic_names or regex_bump
            or group.group_epoch == 0):
        reason = "member_joined" if is_new else "subscription_changed"
    set_subscribed(group, member, member_topics(group, member))
    metadata = {t: cmd.topics[t] for t in group.topic_subscribers if t in cmd.topics}
    if metadata != group.subscription_metadata:
        group.subscription_metadata = metadata
        reason = reason or "metadata_changed"
    if reason is not None:
        bump_group_epoch(core, group, reason)
    retarget = group.group_epoch > group.assignment_epoch
    if retarget:
        compute_target(core, group, cmd.topics)

    owned = None if cmd.owned is None else {t: frozenset(ps) for t, ps in cmd.owned}
    if cmd.member_epoch == 0:
        owned = {}
    moved = reconcile(core, group, member, owned)
    # The group's configs as Kafka applies them: read on every heartbeat, so a change takes effect
    # at the member's next heartbeat (its next session deadline, the interval it is told).
    session_ms = cmd.session_timeout_ms or core.config.group_consumer_session_timeout_ms
    group.session_timeout_ms = session_ms
    if not member.heartbeats_ignored:
        core.timers.schedule(session_key(group.group_id, member.member_id), core.now + session_ms)
    if retarget or moved or is_new or group.state is not group.computed_state_if_quiet():
        update_state(core, group)

    full = cmd.member_epoch == 0 or (
        cmd.rebalance_timeout_ms != -1 and cmd.owned is not None
        and (cmd.subscribed_topic_names is not None or cmd.subscribed_topic_regex is not None))
    assignment = None
    if full or normalized(old_assigned) != normalized(member.assigned):
        assignment = as_partitions(member.assigned)
    core.reply(cmd.request_id, API, group.group_id, ConsumerGroupHeartbeatResult(
        error=ErrorCode.NONE, member_id=member.member_id, member_epoch=member.member_epoch,
        heartbeat_interval_ms=(cmd.heartbeat_interval_ms
                               or core.config.group_consumer_heartbeat_interval_ms),
        assignment=assignment))
    config = core.config
    if refresh_due(group, cmd.topics, core.now, requested=regex_requested,
                   min_interval_ms=config.group_consumer_regex_min_refresh_interval_ms,
                   refresh_interval_ms=config.group_consumer_regex_refresh_interval_ms):
        resolve_regexes(core, group, cmd.topics)


# ------------------------------------------------------------------------------ group / member
def _get_or_create_group(core: Core, group_id: str, *, create: bool, topics) -> ConsumerGroup:
    group = core.consumer_groups.get(group_id)
    if group is not None:
        return group
    classic = core.groups.get(group_id)
    if classic is not None:
        if classic.state.value == "Dead":  # unloaded (Coordinator.mark_dead)
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if create and classic.members:
            if migration.can_upgrade(core, classic):
                return migration.upgrade(core, classic, topics)
        if not create or classic.members:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        # An Empty classic group (or a "simple" group of offsets) is replaced; offsets stay. Its
        # MEMBER_ID_REQUIRED ids do not make it less empty (Kafka: isInState(EMPTY)).
        from .shared import replace_empty_classic  # shared imports this module
        replace_empty_classic(core, classic)
    elif not create:
        raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
    group = ConsumerGroup(group_id, created_at_ms=core.now, state_since_ms=core.now)
    core.consumer_groups[group_id] = group
    schedule_retention(core)
    if core.observing:
        core.emit(GroupCreated(at_ms=core.now, group_id=group_id))
    return group


def _unknown_member(group: ConsumerGroup, member_id: str) -> KafkaError:
    return KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                      f"Member {member_id} is not a member of group {group.group_id}.")


def _check_epoch(member: ConsumerMember, received: int, owned, owned_unknown: bool = False) -> None:
    if received > member.member_epoch:
        raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                         f"The consumer group member has a greater member epoch ({received}) than the "
                         f"one known by the group coordinator ({member.member_epoch}). The member "
                         "must abandon all its partitions and rejoin.")
    if received < member.member_epoch:
        # The previous epoch is accepted with a subset of the current assignment: the response
        # that carried the new epoch may have been lost. As Kafka's isSubset: a topic outside the
        # assignment (even with no partitions listed, or of an unknown id) is not a subset.
        subset = owned is not None and not owned_unknown and all(
            t in member.assigned and set(ps) <= member.assigned[t] for t, ps in owned)
        if received != member.previous_member_epoch or not subset:
            raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                             f"The consumer group member has a smaller member epoch ({received}) than "
                             f"the one known by the group coordinator ({member.member_epoch}). The "
                             "member must abandon all its partitions and rejoin.")


def _get_member(core: Core, group: ConsumerGroup, cmd: ConsumerGroupHeartbeat,
                member_id: str) -> tuple[ConsumerMember, bool]:
    joining = cmd.member_epoch == 0
    if cmd.instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            if not joining:
                raise _unknown_member(group, member_id)
            return _add_member(core, group, ConsumerMember(member_id, client_id=cmd.client_id)), True
        if not joining:  # epoch 0 from a known member: it rejoins as it is (KAFKA-19233)
            _check_epoch(member, cmd.member_epoch, cmd.owned, cmd.owned_unknown)
        return member, False

    old = group.static_member(cmd.instance_id)
    if joining:
        if old is None:
            return _add_member(core, group, ConsumerMember(member_id, instance_id=cmd.instance_id,
                                                           client_id=cmd.client_id)), True
        if old.member_epoch != STATIC_LEAVE_EPOCH and old.classic is None:
            # even under the same member id, as Kafka; a classic predecessor is replaced
            raise KafkaError(ErrorCode.UNRELEASED_INSTANCE_ID,
                             f"Static member {member_id} with instance id {cmd.instance_id} cannot join "
                             f"the group because the instance id is owned by {old.member_id} member.")
        return _replace_static(core, group, old, member_id, cmd.client_id), False
    if old is None:
        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {cmd.instance_id} is unknown.")
    if old.member_id != member_id:
        raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                         f"Static member {member_id} with instance id {cmd.instance_id} was fenced by "
                         f"member {old.member_id}.")
    _check_epoch(old, cmd.member_epoch, cmd.owned, cmd.owned_unknown)
    return old, False


def _add_member(core: Core, group: ConsumerGroup, member: ConsumerMember) -> ConsumerMember:
    group.members[member.member_id] = member
    if member.instance_id is not None:
        group.static_members[member.instance_id] = member.member_id
    if core.observing:
        core.emit(MemberAdded(at_ms=core.now, group_id=group.group_id, member_id=member.member_id,
                              group_instance_id=member.instance_id, client_id=member.client_id))
    return member


def _replace_static(core: Core, group: ConsumerGroup, old: ConsumerMember,
                    member_id: str, client_id: str) -> ConsumerMember:
    """A static member left with -2 and its instance id is back under a new member id: the new
    member takes over the old one's subscription, assignment and target, at epoch 0 (Kafka's
    replaceMember), so no group epoch bump and no partition moves."""
    group.release(old)
    del group.members[old.member_id]
    cancel_member_timers(core, group.group_id, old.member_id)
    new = ConsumerMember(
        member_id, instance_id=old.instance_id, rack_id=old.rack_id, client_id=client_id,
        rebalance_timeout_ms=old.rebalance_timeout_ms, server_assignor=old.server_assignor,
        subscribed_topic_names=old.subscribed_topic_names,
        subscribed_topic_regex=old.subscribed_topic_regex, subscribed_topics=old.subscribed_topics,
        member_epoch=0, previous_member_epoch=0, state=old.state,
        assigned=dict(old.assigned), pending_revocation={},
        assignment_epochs=dict(old.assignment_epochs))
    group.members[member_id] = new
    group.static_members[old.instance_id] = member_id
    if old.member_id in group.target:
        group.target[member_id] = group.target.pop(old.member_id)
    group.claim(new)
    if core.observing:
        core.emit(MemberRemoved(at_ms=core.now, group_id=group.group_id, member_id=old.member_id,
                                group_instance_id=old.instance_id, reason=RemovalReason.REPLACED))
        core.emit(MemberAdded(at_ms=core.now, group_id=group.group_id, member_id=member_id,
                              group_instance_id=old.instance_id, client_id=client_id,
                              replaces=old.member_id))
    return new


def resolve_regexes(core: Core, group: ConsumerGroup, topics) -> None:
    """The group's patterns resolved after a heartbeat's answer, as Kafka's background
    resolution lands between heartbeats; a changed resolution or partition count bumps the group
    epoch, and members are assigned from it at their next heartbeat."""
    changed, patterns = resolve(group, topics, core.now)
    metadata = {t: topics[t] for t in group.topic_subscribers if t in topics}
    if metadata != group.subscription_metadata:
        group.subscription_metadata = metadata
        changed = True
    if core.observing:
        for pattern in patterns:
            resolved = group.resolved_regexes[pattern]
            core.emit(RegexResolved(at_ms=core.now, group_id=group.group_id, regex=pattern,
                                    topics=tuple(sorted(resolved.topics)),
                                    version=resolved.version))
    if changed:
        bump_group_epoch(core, group, "regex_resolved")
        update_state(core, group)


# ------------------------------------------------------------------------------- leave / fence
def _leave(core: Core, cmd: ConsumerGroupHeartbeat) -> None:
    group = core.consumer_groups.get(cmd.group_id)
    if group is None:
        raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {cmd.group_id} not found.")
    if cmd.instance_id is None:
        member = group.members.get(cmd.member_id)
        if member is None:
            raise _unknown_member(group, cmd.member_id)
        fence(core, group, member, RemovalReason.LEFT_HEARTBEAT)
        epoch = cmd.member_epoch
    else:
        member = group.static_member(cmd.instance_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {cmd.instance_id} is unknown.")
        if member.member_id != cmd.member_id:
            raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                             f"Static member {cmd.member_id} with instance id {cmd.instance_id} was "
                             f"fenced by member {member.member_id}.")
        if cmd.member_epoch == STATIC_LEAVE_EPOCH:
            # Temporarily gone: keep its assignment for its replacement; partitions it was
            # revoking are free now. Its session timer keeps running and fences it if nobody
            # takes the instance id over in time.
            group.release(member)
            member.member_epoch = STATIC_LEAVE_EPOCH
            member.pending_revocation = {}
            # its replacement holds the partitions from epoch 0 (KIP-1251: Kafka resets the
            # assignment epochs of a static member that leaves for a while)
            member.assignment_epochs = dict.fromkeys(member.assignment_epochs, 0)
            group.claim(member)
            core.timers.cancel(rebalance_key(group.group_id, member.member_id))
            epoch = STATIC_LEAVE_EPOCH
        else:
            fence(core, group, member, RemovalReason.LEFT_HEARTBEAT)
            epoch = cmd.member_epoch
    update_state(core, group)
    core.reply(cmd.request_id, API, group.group_id, ConsumerGroupHeartbeatResult(
        error=ErrorCode.NONE, member_id=cmd.member_id, member_epoch=epoch))
