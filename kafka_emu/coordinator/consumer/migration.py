"""Online migration between the classic and the consumer group types (Kafka 4.x's
``group.consumer.migration.policy``: disabled, upgrade, downgrade, bidirectional).

**Upgrade** (GroupMetadataManager.convertToConsumerGroup): the first ConsumerGroupHeartbeat
(epoch 0) to a non-empty classic group converts it when the policy allows an upgrade, the group
uses the ``consumer`` protocol type and it has at most ``group.consumer.max.size`` members
(validateOnlineUpgrade); otherwise GROUP_ID_NOT_FOUND, as before. Parked JoinGroups and SyncGroups
are answered REBALANCE_IN_PROGRESS. Every classic member becomes a consumer-group member that keeps
using the classic protocol (``ConsumerMember.classic``): its member epoch, and the group and
assignment epochs, are the classic generation; its assignment and its target are its last
classic assignment (decoded from the ConsumerProtocol bytes; an empty one is accepted, one with
assignor user data is refused with UNSUPPORTED_VERSION as Kafka refuses it: the data would be
lost); it is Stable; its session timer runs with its classic session timeout. The heartbeat that
converted the group then adds its member, which bumps the group epoch, so the classic members
learn of the rebalance from their next Heartbeat (REBALANCE_IN_PROGRESS) and rejoin
(classic_members.py).

**Downgrade** (convertToClassicGroup): when a consumer-protocol member is fenced (it leaves with
epoch -1, or a session or rebalance timeout fences it) and every other member uses the classic
protocol, the policy allows a downgrade and at most ``group.max.size`` remain, the group becomes a
classic group in Stable at generation = the group epoch, each member with its classic protocols,
session and rebalance timeouts and its *target* assignment encoded in the version of its
subscription; then a rebalance starts at once ("Downgrade group g from consumer to classic."), so
the members rejoin through JoinGroup. A classic JoinGroup that takes over the static instance id
of the last consumer-protocol member converts the group too, the joiner holding its
predecessor's target, without a rebalance. The last member leaving leaves an Empty consumer group,
which a classic JoinGroup replaces whatever the policy (shared.py), as Kafka converts empty groups
regardless of it. Committed offsets stay where they are: they are keyed by group id.

On the observer seam each conversion shows as GroupDeleted (reason ``converted_to_consumer`` or
``converted_to_classic``), GroupCreated, and MemberAdded for each member carried over; an upgrade
also shows the carried-over targets (TargetAssignmentComputed at the classic generation, with no
assignor: none computed them, and a group converted mid-rebalance leaves a departed member's
partitions unassigned until the joiner's epoch) and each member's partitions (MemberReconciled).
"""

from __future__ import annotations

from typing import Mapping

from kafka_emu.errors import ErrorCode, KafkaError
from kafka_emu.protocol.errors import DecodeError
from kafka_emu.protocol.messages.consumer_protocol import (
    HIGHEST_VERSION, ConsumerProtocolAssignment, TopicPartition, decode_assignment,
    decode_subscription, encode_assignment)

from ..core import Core, heartbeat_key, join_key, sync_key
from ..events import GroupCreated, GroupDeleted, MemberAdded
from ..group import CONSUMER_PROTOCOL_TYPE, Group, StoredGroup
from ..rebalance import JOIN, SYNC, prepare_rebalance
from ..results import JoinGroupResult, SyncGroupResult
from ..state import GroupState
from .commands import as_partitions
from .epochs import cancel_member_timers, schedule_retention, session_key, update_state
from .events import MemberReconciled, TargetAssignmentComputed
from .model import Assignment, ClassicMetadata, ConsumerGroup, ConsumerMember, MemberState
from .regexes import member_topics, set_subscribed

EMPTY_ASSIGNMENT = b""


# ------------------------------------------------------------------------ the embedded protocol
def protocol_version(metadata: bytes) -> int:
    """The ConsumerProtocol version a member's subscription was written in (Kafka's
    deserializeVersion), bounded to what we can write, as serializeAssignment bounds it."""
    if len(metadata) < 2:
        return 0
    version = int.from_bytes(metadata[:2], "big", signed=True)
    return min(max(version, 0), HIGHEST_VERSION)


def assignment_bytes(assigned: Assignment, protocols: tuple[tuple[str, bytes], ...],
                     protocol_name: str | None = None) -> bytes:
    """A member's partitions as a classic SyncGroup assignment, in its subscription's version."""
    metadata = protocols[0][1]
    if protocol_name is not None:
        metadata = next((m for n, m in protocols if n == protocol_name), metadata)
    msg = ConsumerProtocolAssignment(assigned_partitions=[
        TopicPartition(topic=t, partitions=sorted(ps)) for t, ps in sorted(assigned.items()) if ps])
    return encode_assignment(msg, protocol_version(metadata))


def decode_classic_assignment(group_id: str, data: bytes, topics: Mapping[str, int]) -> Assignment:
    if data == EMPTY_ASSIGNMENT:  # a member that joined but never synced
        return {}
    try:
        decoded = decode_assignment(data)
    except DecodeError:
        raise _malformed(group_id) from None
    if decoded.user_data:
        raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, "userData from a custom assignor would be lost")
    out: dict[str, set[int]] = {}
    for tp in decoded.assigned_partitions:
        if tp.topic in topics:  # Kafka maps names to ids through its metadata image
            out.setdefault(tp.topic, set()).update(tp.partitions)
    return {t: frozenset(ps) for t, ps in out.items() if ps}


def _malformed(group_id: str) -> KafkaError:
    return KafkaError(ErrorCode.GROUP_ID_NOT_FOUND,
                      f"Cannot upgrade the classic group {group_id} to consumer group because the "
                      "embedded consumer protocol is malformed.")


# ------------------------------------------------------------------------------------- upgrade
def can_upgrade(core: Core, classic: Group) -> bool:
    """validateOnlineUpgrade."""
    return (core.config.migration_upgrade_enabled
            and classic.protocol_type == CONSUMER_PROTOCOL_TYPE
            and len(classic.members) <= core.config.group_consumer_max_size)


def upgrade(core: Core, classic: Group, topics: Mapping[str, int]) -> ConsumerGroup:
    """Convert a non-empty classic group the caller has checked with ``can_upgrade``."""
    gid = classic.group_id
    name = classic.protocol_name
    if name is None:
        # Kafka reads the group's protocol name unconditionally (Optional.get()): a group still in
        # its first join phase has none and the heartbeat fails with an unexpected error.
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)
    generation = classic.generation
    converted = []
    for m in classic.members.values():  # decode everything first: a refusal changes nothing
        assigned = decode_classic_assignment(gid, m.assignment, topics)
        try:
            subscription = decode_subscription(m.metadata(name))
        except DecodeError:
            raise _malformed(gid) from None
        converted.append(ConsumerMember(
            m.member_id, instance_id=m.group_instance_id, rack_id=subscription.rack_id,
            client_id=m.client_id, client_host=m.client_host,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            subscribed_topic_names=tuple(sorted(set(subscription.topics))),
            member_epoch=generation, previous_member_epoch=generation, state=MemberState.STABLE,
            assigned=assigned,
            classic=ClassicMetadata(session_timeout_ms=m.session_timeout_ms, protocols=m.protocols)))

    # The classic group goes: its parked requests are told to rejoin, its timers stop.
    for m in classic.members.values():
        request = classic.take_join(m)
        if request is not None:
            core.reply(request, JOIN, gid, JoinGroupResult(error=ErrorCode.REBALANCE_IN_PROGRESS,
                                                           member_id=m.member_id))
        if m.sync_request is not None:
            request, m.sync_request = m.sync_request, None
            core.reply(request, SYNC, gid, SyncGroupResult(error=ErrorCode.REBALANCE_IN_PROGRESS))
        core.timers.cancel(heartbeat_key(gid, m.member_id))
    for pending in classic.pending_members:
        core.timers.cancel(heartbeat_key(gid, pending))
    core.timers.cancel(join_key(gid))
    core.timers.cancel(sync_key(gid))
    classic.transition_to(GroupState.DEAD)
    del core.groups[gid]
    if core.observing:
        core.emit(GroupDeleted(at_ms=core.now, group_id=gid, reason="converted_to_consumer"))

    group = ConsumerGroup(gid, created_at_ms=core.now, state_since_ms=core.now,
                          group_epoch=generation, assignment_epoch=generation)
    core.consumer_groups[gid] = group
    schedule_retention(core)
    if core.observing:
        core.emit(GroupCreated(at_ms=core.now, group_id=gid))
    for member in converted:
        # A partition two classic members were given (a faulty client-side assignor) stays with
        # the first: the consumer group never lets two members hold one partition.
        member.assigned = {t: frozenset(p for p in ps if (t, p) not in group.owners)
                           for t, ps in member.assigned.items()}
        member.assigned = {t: ps for t, ps in member.assigned.items() if ps}
        group.members[member.member_id] = member
        if member.instance_id is not None:
            group.static_members[member.instance_id] = member.member_id
        group.target[member.member_id] = dict(member.assigned)
        group.claim(member)
        set_subscribed(group, member, member_topics(group, member))
        core.timers.schedule(session_key(gid, member.member_id),
                             core.now + member.classic.session_timeout_ms)  # type: ignore[union-attr]
        if core.observing:
            core.emit(MemberAdded(at_ms=core.now, group_id=gid, member_id=member.member_id,
                                  group_instance_id=member.instance_id, client_id=member.client_id))
    group.subscription_metadata = {t: topics[t] for t in group.topic_subscribers if t in topics}
    group.target_metadata = dict(group.subscription_metadata)
    if core.observing:
        # The carried-over targets and assignments are on the timeline as the assignor's are
        # (Kafka writes them as the converted group's target assignment records): a group
        # converted mid-rebalance keeps its members' last classic partitions, and a reader of
        # the timeline would otherwise see only the joiner's target after the next epoch.
        core.emit(TargetAssignmentComputed(
            at_ms=core.now, group_id=gid, assignment_epoch=generation, assignor="",
            changed=tuple((c.member_id, as_partitions(c.assigned)) for c in converted)))
        for c in converted:
            core.emit(MemberReconciled(
                at_ms=core.now, group_id=gid, member_id=c.member_id, member_epoch=generation,
                state=c.state.value, assigned=as_partitions(c.assigned), pending_revocation=()))
    update_state(core, group)
    return group


# ----------------------------------------------------------------------------------- downgrade
def maybe_downgrade(core: Core, group: ConsumerGroup, leaving: ConsumerMember) -> bool:
    """validateOnlineDowngradeWithFencedMember, then convertToClassicGroup. True if converted
    (the caller then does not remove the member itself)."""
    if leaving.classic is not None or len(group.members) <= 1:
        return False
    if group.classic_members() != len(group.members) - 1:
        return False
    if not core.config.migration_downgrade_enabled:
        return False
    if len(group.members) - 1 > core.config.group_max_size:
        return False
    downgrade(core, group, leaving)
    return True


def maybe_downgrade_replaced(core: Core, group: ConsumerGroup, replaced: ConsumerMember) -> bool:
    """validateOnlineDowngradeWithReplacedMemberId: a classic JoinGroup took over the static
    instance id of the group's last consumer-protocol member (already replaced in ``group``).
    The group becomes classic with the joiner holding its predecessor's target, without a
    rebalance (convertToClassicGroup with a joining member)."""
    if replaced.classic is not None or group.classic_members() != len(group.members):
        return False
    if not core.config.migration_downgrade_enabled:
        return False
    if len(group.members) > core.config.group_max_size:
        return False
    downgrade(core, group, None, rebalance=False)
    return True


def downgrade(core: Core, group: ConsumerGroup, leaving: ConsumerMember | None, *,
              rebalance: bool = True) -> Group:
    gid = group.group_id
    for member in group.members.values():
        cancel_member_timers(core, gid, member.member_id)
    del core.consumer_groups[gid]
    if core.observing:
        core.emit(GroupDeleted(at_ms=core.now, group_id=gid, reason="converted_to_classic"))
    remaining = [m for m in group.members.values() if m is not leaving]
    classic = core.create_group(gid)
    # Kafka builds the classic group directly in Stable (not a transition), as a reload does.
    classic.load(StoredGroup(
        generation=group.group_epoch, protocol_type=CONSUMER_PROTOCOL_TYPE, protocol_name=None,
        leader_id=remaining[0].member_id,
        members=tuple((m.member_id, m.instance_id, m.client_id, m.client_host,
                       m.rebalance_timeout_ms, m.classic.session_timeout_ms,  # type: ignore[union-attr]
                       CONSUMER_PROTOCOL_TYPE, m.classic.protocols, b"")  # type: ignore[union-attr]
                      for m in remaining)))
    classic.protocol_name = classic.select_protocol()
    classic.subscribed_topics = classic.compute_subscribed_topics()
    for m in remaining:
        classic.members[m.member_id].assignment = assignment_bytes(
            group.target.get(m.member_id, {}), m.classic.protocols,  # type: ignore[union-attr]
            classic.protocol_name)
    classic.store()
    for cm in classic.members.values():
        if core.observing:
            core.emit(MemberAdded(at_ms=core.now, group_id=gid, member_id=cm.member_id,
                                  group_instance_id=cm.group_instance_id, client_id=cm.client_id))
        core.schedule_heartbeat(classic, cm.member_id, cm.session_timeout_ms)
    if rebalance:  # a member left: the rest rejoin for a new assignment
        prepare_rebalance(core, classic, f"Downgrade group {gid} from consumer to classic.")
    return classic
