"""A consumer group's epochs, target assignment, reconciliation steps, fencing and timers: what
ConsumerGroupHeartbeat (heartbeat.py), classic members (classic_members.py), the migrations
(migration.py) and the control plane (operator.py) share.

Timers, keyed (kind, group id, member id): a member's session (``cg_session``), a revocation's
deadline at the member epoch it started in (``cg_rebalance``, consumer-protocol members), and a
classic member's deadlines to rejoin after REBALANCE_IN_PROGRESS and to send SyncGroup after its
JoinGroup (``cg_classic_join``, ``cg_classic_sync``, Kafka's join and sync timeouts). Any of them
firing fences the member; fencing the last consumer-protocol member among classic ones converts
the group back to a classic group when the migration policy allows it (migration.py).
"""

from __future__ import annotations

from ..core import RETENTION_KEY, Core
from ..events import MemberRemoved, RemovalReason
from .assignors import ASSIGNORS
from .commands import as_partitions
from .events import (ConsumerGroupStateChanged, GroupEpochBumped, MemberReconciled,
                     TargetAssignmentComputed)
from .model import ConsumerGroup, ConsumerMember, MemberState
from .reconcile import next_assignment
from .regexes import change_regex, set_subscribed

SESSION = "cg_session"
REBALANCE = "cg_rebalance"
# A classic member's deadlines inside a consumer group (classic_members.py): to rejoin after
# REBALANCE_IN_PROGRESS, and to send SyncGroup after its JoinGroup (Kafka's join/sync timeouts).
CLASSIC_JOIN = "cg_classic_join"
CLASSIC_SYNC = "cg_classic_sync"


def classic_key(kind: str, group_id: str, member_id: str) -> tuple[str, str, str]:
    return (kind, group_id, member_id)


def session_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return (SESSION, group_id, member_id)


def rebalance_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return (REBALANCE, group_id, member_id)


def cancel_member_timers(core: Core, group_id: str, member_id: str) -> None:
    for kind in (SESSION, REBALANCE, CLASSIC_JOIN, CLASSIC_SYNC):
        core.timers.cancel((kind, group_id, member_id))


def schedule_retention(core: Core) -> None:
    if RETENTION_KEY not in core.timers:
        core.timers.schedule(RETENTION_KEY, core.now + core.config.offsets_retention_check_interval_ms)



# ----------------------------------------------------------------------- epochs and assignment
def bump_group_epoch(core: Core, group: ConsumerGroup, reason: str) -> None:
    group.group_epoch += 1
    if core.observing:
        core.emit(GroupEpochBumped(at_ms=core.now, group_id=group.group_id,
                                   group_epoch=group.group_epoch, reason=reason))


def preferred_assignor(core: Core, group: ConsumerGroup) -> str:
    """The server assignor most members ask for; ties go to the earlier one in
    group.consumer.assignors; with no request the first configured one (Kafka's default)."""
    configured = core.config.group_consumer_assignors
    votes: dict[str, int] = {}
    for member in group.members.values():
        if member.server_assignor is not None:
            votes[member.server_assignor] = votes.get(member.server_assignor, 0) + 1
    if not votes:
        return configured[0]
    return max(votes, key=lambda name: (votes[name], -configured.index(name)))


def compute_target(core: Core, group: ConsumerGroup, topics) -> None:
    name = preferred_assignor(core, group)
    metadata = group.subscription_metadata
    members = {m.member_id: m.subscribed_topics for m in group.members.values()}
    trusted = group.target_metadata == metadata
    old = group.target
    instance_ids = {m.member_id: m.instance_id for m in group.members.values()
                    if m.instance_id is not None}
    group.target = ASSIGNORS[name](members, metadata, old, trusted=trusted,
                                   instance_ids=instance_ids)
    group.target_metadata = dict(metadata)
    group.assignment_epoch = group.group_epoch
    if core.observing:
        core.emit(TargetAssignmentComputed(
            at_ms=core.now, group_id=group.group_id, assignment_epoch=group.assignment_epoch,
            assignor=name,
            changed=tuple((m, as_partitions(a)) for m, a in group.target.items()
                          if old.get(m) is not a and old.get(m) != a)))


def reconcile(core: Core, group: ConsumerGroup, member: ConsumerMember, owned) -> bool:
    """One reconciliation step; True if the member's epoch, state or partitions changed."""
    epoch = group.assignment_epoch
    if member.is_reconciled_to(epoch):
        return False
    target = group.target.get(member.member_id, {})
    new_epoch, state, assigned, pending = next_assignment(
        member, epoch, target, group.partition_epoch, owned)
    if (new_epoch, state, assigned, pending) == (member.member_epoch, member.state,
                                                 member.assigned, member.pending_revocation):
        return False
    group.release(member)
    member.previous_member_epoch = member.member_epoch
    member.member_epoch, member.state = new_epoch, state
    member.assigned, member.pending_revocation = assigned, pending
    group.claim(member)
    key = rebalance_key(group.group_id, member.member_id)
    if member.classic is not None:
        pass  # a classic member has join and sync deadlines instead (classic_members.py)
    elif state is MemberState.UNREVOKED_PARTITIONS:
        core.timers.schedule(key, core.now + max(member.rebalance_timeout_ms, 0), new_epoch)
    else:
        core.timers.cancel(key)
    if core.observing:
        core.emit(MemberReconciled(
            at_ms=core.now, group_id=group.group_id, member_id=member.member_id,
            member_epoch=new_epoch, state=state.value, assigned=as_partitions(assigned),
            pending_revocation=as_partitions(pending)))
    return True


def update_state(core: Core, group: ConsumerGroup) -> None:
    if core.consumer_groups.get(group.group_id) is not group:
        return  # converted to a classic group (migration.py)
    new = group.computed_state()
    if new is not group.state:
        old, group.state, group.state_since_ms = group.state, new, core.now
        if core.observing:
            core.emit(ConsumerGroupStateChanged(at_ms=core.now, group_id=group.group_id,
                                                old=old.value, new=new.value))



# ------------------------------------------------------------------------------- fence
def fence(core: Core, group: ConsumerGroup, member: ConsumerMember, reason: RemovalReason) -> None:
    """Remove a member and bump the group epoch (Kafka's consumerGroupFenceMember); its partitions
    become free for the others' next reconciliation. If it was the last consumer-protocol member
    among classic ones, the group becomes a classic group instead (migration.py)."""
    if member.classic is None and group.classic_members():
        from .migration import maybe_downgrade  # migration imports this module
        if maybe_downgrade(core, group, member):
            return
    remove_member(core, group, member, reason)
    bump_group_epoch(core, group, "member_removed")


def remove_member(core: Core, group: ConsumerGroup, member: ConsumerMember,
                  reason: RemovalReason) -> None:
    """Forget a member, its partitions, subscription and timers (no epoch bump)."""
    group.release(member)
    change_regex(group, member.subscribed_topic_regex, None)
    set_subscribed(group, member, frozenset())
    del group.members[member.member_id]
    if member.instance_id is not None and group.static_members.get(member.instance_id) == member.member_id:
        del group.static_members[member.instance_id]
    group.target.pop(member.member_id, None)
    group.subscription_metadata = {t: n for t, n in group.subscription_metadata.items()
                                   if t in group.topic_subscribers}
    cancel_member_timers(core, group.group_id, member.member_id)
    if core.observing:
        core.emit(MemberRemoved(at_ms=core.now, group_id=group.group_id, member_id=member.member_id,
                                group_instance_id=member.instance_id, reason=reason))


def on_timer(core: Core, key, payload) -> None:
    kind, group_id, member_id = key
    group = core.consumer_groups.get(group_id)
    member = None if group is None else group.members.get(member_id)
    if member is None:
        return
    if kind == SESSION:
        fence(core, group, member, RemovalReason.SESSION_EXPIRED)
    elif kind == CLASSIC_JOIN:  # a classic member told to rejoin did not
        fence(core, group, member, RemovalReason.REBALANCE_TIMEOUT)
    elif kind == CLASSIC_SYNC:  # a classic member joined but sent no SyncGroup
        fence(core, group, member, RemovalReason.SYNC_TIMEOUT)
    elif member.member_epoch == payload:  # still stuck revoking in that epoch
        fence(core, group, member, RemovalReason.REBALANCE_TIMEOUT)
    update_state(core, group)
