"""Classic-protocol members inside a consumer group (Kafka's classicGroupJoinToConsumerGroup,
classicGroupSyncToConsumerGroup, classicGroupHeartbeatToConsumerGroup,
classicGroupLeaveToConsumerGroup).

A consumer that speaks JoinGroup/SyncGroup/Heartbeat joins a non-empty consumer group as a member
like any other, whatever the migration policy (the policy governs conversions only): its
subscription and owned partitions come from its JoinGroup's first protocol (ConsumerProtocol
bytes), the server-side assignor computes its target, and it is reconciled one step per
JoinGroup (reconcile.py) with the owned partitions it reports -- an eager client reports none, a
cooperative one keeps reporting the partitions it still owns, so a partition is never given to a
second member before the first has given it up.

- **JoinGroup**: an unknown dynamic member on v4+ gets MEMBER_ID_REQUIRED with a new id (Kafka
  keeps no pending member here); the protocol type must be ``consumer`` and one of its protocol
  names must be supported by every classic member (else INCONSISTENT_GROUP_PROTOCOL); the group
  must have room (``group.consumer.max.size``). The answer comes at once: generation = the
  member epoch, the member's first protocol name, no leader and no member list (the client does
  not assign). Its session timer (its JoinGroup session timeout) and a sync timer (its rebalance
  timeout) start.
- **SyncGroup**: UNKNOWN_MEMBER_ID for an unknown member or one using the consumer protocol,
  FENCED_INSTANCE_ID, ILLEGAL_GENERATION if the generation is not its epoch,
  INCONSISTENT_GROUP_PROTOCOL for another protocol type or name, REBALANCE_IN_PROGRESS if the
  group epoch moved on (unless it is still revoking); else its assigned partitions, encoded in
  its subscription's version.
- **Heartbeat**: the same member checks, re-arms the session; REBALANCE_IN_PROGRESS when its
  epoch is behind the group epoch, it must revoke, or partitions it waited for are free now, so
  the client rejoins; a join timer (its rebalance timeout) then fences it if it does not.
- **LeaveGroup**: classic members only, by member id or instance id; one group epoch bump for
  the batch. A classic member leaving never converts the group back (Kafka converts only when a
  consumer-protocol member is fenced, migration.py).
- **OffsetCommit / OffsetFetch** (shared.py): a classic member's generation must equal its epoch
  (ILLEGAL_GENERATION where a consumer-protocol member gets STALE_MEMBER_EPOCH), any version.
"""

from __future__ import annotations

from kafka_emu.errors import ErrorCode, KafkaError
from kafka_emu.protocol.errors import DecodeError
from kafka_emu.protocol.messages.consumer_protocol import decode_subscription

from ..commands import Heartbeat, JoinGroup, LeaveGroup, SyncGroup
from ..core import Core
from ..events import RemovalReason
from ..group import CONSUMER_PROTOCOL_TYPE
from ..results import (HeartbeatResult, JoinGroupResult, LeaveGroupResult, LeaveMemberResult,
                       SyncGroupResult)
from .epochs import (CLASSIC_JOIN, CLASSIC_SYNC, bump_group_epoch, cancel_member_timers,
                     classic_key, compute_target, reconcile, remove_member, session_key,
                     update_state)
from .heartbeat import _add_member, _replace_static
from .migration import assignment_bytes, maybe_downgrade_replaced
from .model import ClassicMetadata, ConsumerGroup, ConsumerMember, MemberState
from .regexes import member_topics, set_subscribed
from .validation import new_member_id


def _find(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
    """validateConsumerGroupMember + throwIfMemberDoesNotUseClassicProtocol."""
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {member_id} is not a member of group {group.group_id}.")
    else:
        member = group.static_member(instance_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member with instance id {instance_id} is not a member of group "
                             f"{group.group_id}.")
        if member.member_id != member_id:
            raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                             f"Static member {member_id} with instance id {instance_id} was fenced "
                             f"by member {member.member_id}.")
    if member.classic is None:
        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                         f"Member {member.member_id} does not use the classic protocol.")
    return member


def _check_generation(member: ConsumerMember, generation_id: int) -> None:
    if member.member_epoch != generation_id:
        raise KafkaError(ErrorCode.ILLEGAL_GENERATION,
                         f"The request generation id {generation_id} is not equal to the member "
                         f"epoch {member.member_epoch} of member {member.member_id}.")


def _join_timer_if_absent(core: Core, group: ConsumerGroup, member: ConsumerMember) -> None:
    key = classic_key(CLASSIC_JOIN, group.group_id, member.member_id)
    if key not in core.timers:
        core.timers.schedule(key, core.now + max(member.rebalance_timeout_ms, 0))


def _supports(group: ConsumerGroup, protocol_type: str, names: set[str]) -> bool:
    """ConsumerGroup.supportsClassicProtocols (the group is not empty here)."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        return False
    classic = [m.classic for m in group.members.values() if m.classic is not None]
    return any(all(any(n == name for n, _ in c.protocols) for c in classic) for name in names)


# ------------------------------------------------------------------------------------ JoinGroup
def handle_join(core: Core, group: ConsumerGroup, cmd: JoinGroup) -> None:
    try:
        _join(core, group, cmd)
    except KafkaError as exc:
        core.reply(cmd.request_id, "JoinGroup", cmd.group_id,
                   JoinGroupResult(error=exc.code, member_id=cmd.member_id))


def _join(core: Core, group: ConsumerGroup, cmd: JoinGroup) -> None:
    config = core.config
    # Kafka checks the session timeout before it looks at the group (GroupCoordinatorService)
    if not config.group_min_session_timeout_ms <= cmd.session_timeout_ms <= config.group_max_session_timeout_ms:
        raise KafkaError(ErrorCode.INVALID_SESSION_TIMEOUT)
    unknown = cmd.member_id == ""
    member_id = new_member_id(core) if unknown else cmd.member_id
    if (member_id not in group.members and len(group.members) >= core.config.group_consumer_max_size):
        raise KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                         f"The consumer group has reached its maximum capacity of "
                         f"{core.config.group_consumer_max_size} members.")
    if not _supports(group, cmd.protocol_type, {n for n, _ in cmd.protocols}):
        raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                         f"Member {member_id}'s protocols are not supported.")
    if unknown and cmd.require_known_member_id and cmd.group_instance_id is None:
        return core.reply(cmd.request_id, "JoinGroup", cmd.group_id, JoinGroupResult(
            error=ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id))
    try:
        subscription = decode_subscription(cmd.protocols[0][1])
    except DecodeError:  # Kafka: IllegalStateException, an unexpected error to the client
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR) from None

    member, is_new, replaced = _get_member(core, group, cmd, member_id, unknown)
    old_names = member.subscribed_topic_names
    if cmd.group_instance_id is not None:
        member.instance_id = cmd.group_instance_id
    if subscription.rack_id is not None:
        member.rack_id = subscription.rack_id
    member.rebalance_timeout_ms = cmd.rebalance_timeout_ms
    member.subscribed_topic_names = tuple(sorted(set(subscription.topics)))
    member.client_id, member.client_host = cmd.client_id, cmd.client_host
    member.classic = ClassicMetadata(session_timeout_ms=cmd.session_timeout_ms,
                                     protocols=tuple(cmd.protocols))

    reason = None
    if is_new:
        reason = "member_joined"
    elif old_names != member.subscribed_topic_names:
        reason = "subscription_changed"
    set_subscribed(group, member, member_topics(group, member))
    topics = cmd.topics
    metadata = {t: topics[t] for t in group.topic_subscribers if t in topics}
    if metadata != group.subscription_metadata:
        group.subscription_metadata = metadata
        reason = reason or "metadata_changed"
    if reason is not None:
        bump_group_epoch(core, group, reason)
    if group.group_epoch > group.assignment_epoch:
        compute_target(core, group, topics)
    owned: dict[str, frozenset[int]] = {}
    for tp in subscription.owned_partitions or ():
        owned[tp.topic] = owned.get(tp.topic, frozenset()) | frozenset(tp.partitions)
    reconcile(core, group, member, owned)
    update_state(core, group)

    gid = group.group_id
    core.timers.cancel(classic_key(CLASSIC_JOIN, gid, member.member_id))
    if replaced is not None and maybe_downgrade_replaced(core, group, replaced):
        pass  # a classic group now: its own heartbeat timers run (migration.py)
    else:
        core.timers.schedule(session_key(gid, member.member_id), core.now + cmd.session_timeout_ms)
        core.timers.schedule(classic_key(CLASSIC_SYNC, gid, member.member_id),
                             core.now + max(cmd.rebalance_timeout_ms, 0))
    core.reply(cmd.request_id, "JoinGroup", gid, JoinGroupResult(
        error=ErrorCode.NONE, generation_id=member.member_epoch,
        protocol_type=CONSUMER_PROTOCOL_TYPE, protocol_name=member.classic.protocol_name,
        leader="", member_id=member.member_id, members=()))


def _get_member(core: Core, group: ConsumerGroup, cmd: JoinGroup, member_id: str,
                unknown: bool) -> tuple[ConsumerMember, bool, ConsumerMember | None]:
    """(the member, whether it is new, the static member it replaced if any)."""
    instance_id = cmd.group_instance_id
    if instance_id is None:
        member = group.members.get(member_id)
        if member is not None:
            return member, False, None
        new = ConsumerMember(member_id, client_id=cmd.client_id)
        return _add_member(core, group, new), True, None
    old = group.static_member(instance_id)
    if unknown:
        if old is None:
            return _add_member(core, group, ConsumerMember(
                member_id, instance_id=instance_id, client_id=cmd.client_id)), True, None
        # A static member restarting under a new id takes its predecessor's place, whichever
        # protocol the predecessor used (no UNRELEASED_INSTANCE_ID check for classic joins).
        cancel_member_timers(core, group.group_id, old.member_id)
        return _replace_static(core, group, old, member_id, cmd.client_id), False, old
    if old is None:
        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
    if old.member_id != member_id:
        raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                         f"Static member {member_id} with instance id {instance_id} was fenced by "
                         f"member {old.member_id}.")
    return old, False, None


# ------------------------------------------------------------------------------------ SyncGroup
def handle_sync(core: Core, group: ConsumerGroup, cmd: SyncGroup) -> None:
    try:
        member = _find(group, cmd.member_id, cmd.group_instance_id)
        _check_generation(member, cmd.generation_id)
        name = member.classic.protocol_name  # type: ignore[union-attr]
        if cmd.protocol_type is not None and cmd.protocol_type != CONSUMER_PROTOCOL_TYPE:
            raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if cmd.protocol_name is not None and cmd.protocol_name != name:
            raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if (group.group_epoch > member.member_epoch
                and member.state is not MemberState.UNREVOKED_PARTITIONS):
            _join_timer_if_absent(core, group, member)
            raise KafkaError(ErrorCode.REBALANCE_IN_PROGRESS)
    except KafkaError as exc:
        return core.reply(cmd.request_id, "SyncGroup", cmd.group_id, SyncGroupResult(error=exc.code))
    gid = group.group_id
    core.timers.cancel(classic_key(CLASSIC_SYNC, gid, member.member_id))
    core.timers.schedule(session_key(gid, member.member_id),
                         core.now + member.classic.session_timeout_ms)  # type: ignore[union-attr]
    core.reply(cmd.request_id, "SyncGroup", gid, SyncGroupResult(
        error=ErrorCode.NONE, protocol_type=cmd.protocol_type, protocol_name=cmd.protocol_name,
        assignment=assignment_bytes(member.assigned, member.classic.protocols)))  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------ Heartbeat
def handle_heartbeat(core: Core, group: ConsumerGroup, cmd: Heartbeat) -> None:
    try:
        member = _find(group, cmd.member_id, cmd.group_instance_id)
        _check_generation(member, cmd.generation_id)
    except KafkaError as exc:
        return core.reply(cmd.request_id, "Heartbeat", cmd.group_id, HeartbeatResult(error=exc.code))
    if not member.heartbeats_ignored:
        core.timers.schedule(session_key(group.group_id, member.member_id),
                             core.now + member.classic.session_timeout_ms)  # type: ignore[union-attr]
    error = ErrorCode.NONE
    if (member.member_epoch < group.group_epoch
            or member.state is MemberState.UNREVOKED_PARTITIONS
            or (member.state is MemberState.UNRELEASED_PARTITIONS
                and not _waiting_on_unreleased(group, member))):
        error = ErrorCode.REBALANCE_IN_PROGRESS
        _join_timer_if_absent(core, group, member)
    core.reply(cmd.request_id, "Heartbeat", group.group_id, HeartbeatResult(error=error))


def _waiting_on_unreleased(group: ConsumerGroup, member: ConsumerMember) -> bool:
    for topic, partitions in group.target.get(member.member_id, {}).items():
        have = member.assigned.get(topic, frozenset())
        for p in partitions:
            if p not in have and group.partition_epoch(topic, p) != -1:
                return True
    return False


# ----------------------------------------------------------------------------------- LeaveGroup
def handle_leave(core: Core, group: ConsumerGroup, cmd: LeaveGroup) -> None:
    results = []
    removed = False
    for identity in cmd.members:
        member_id, instance_id = identity.member_id, identity.group_instance_id
        try:
            if instance_id is None:
                member = _find(group, member_id, None)
            else:
                static = group.static_member(instance_id)
                if static is None:
                    raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
                member = static
                # An admin removal names the instance id alone (empty member id).
                if member_id != "" and member.member_id != member_id:
                    raise KafkaError(ErrorCode.FENCED_INSTANCE_ID)
                if member.classic is None:
                    raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
                member_id = member.member_id
        except KafkaError as exc:
            results.append(LeaveMemberResult(member_id=member_id, group_instance_id=instance_id,
                                             error=exc.code))
            continue
        remove_member(core, group, member, RemovalReason.LEFT)
        removed = True
        results.append(LeaveMemberResult(member_id=member_id, group_instance_id=instance_id,
                                         error=ErrorCode.NONE))
    if removed:
        bump_group_epoch(core, group, "member_removed")
        update_state(core, group)
    core.reply(cmd.request_id, "LeaveGroup", group.group_id,
               LeaveGroupResult(error=ErrorCode.NONE, members=tuple(results)))
