"""One reconciliation step of a member towards its target (Kafka's CurrentAssignmentBuilder).

Rules, applied on every heartbeat of a member not yet reconciled to the assignment epoch:

- STABLE at an older epoch, or UNRELEASED_PARTITIONS: compute the next step from what it holds.
- UNREVOKED_PARTITIONS: if the heartbeat still reports (or does not report, ``owned is None``) a
  partition pending revocation, nothing changes; once they are gone, compute the next step.

The next step from the member's assigned partitions A and its target T (per topic):
kept = A & T; revoke = A - T; new = T - A minus partitions another member still holds.
1. revoke is non-empty and the member may still own some of it: UNREVOKED_PARTITIONS, the member
   keeps its epoch and holds only ``kept`` (revoke first, assign after).
2. else it moves to the target epoch holding kept + new: UNRELEASED_PARTITIONS if some of T is
   still held elsewhere, else STABLE.
"""

from __future__ import annotations

from typing import Callable

from .model import Assignment, ConsumerMember, MemberState

Owned = dict[str, frozenset[int]] | None


def _owns_any(owned: Owned, revoking: Assignment) -> bool:
    if owned is None:
        return True  # not reported: assume it still owns them
    return any(owned.get(t, frozenset()) & ps for t, ps in revoking.items())


def next_assignment(member: ConsumerMember, target_epoch: int, target: Assignment,
                    partition_epoch: Callable[[str, int], int], owned: Owned
                    ) -> tuple[int, MemberState, Assignment, Assignment]:
    """(member epoch, state, assigned, pending revocation) after this heartbeat."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member.member_epoch, state, member.assigned, member.pending_revocation
        return _compute(member.member_epoch, member.assigned, target_epoch, target,
                        partition_epoch, owned)
    if state is MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return member.member_epoch, state, member.assigned, member.pending_revocation
        return _compute(member.member_epoch + 1, member.assigned, target_epoch, target,
                        partition_epoch, owned)
    return _compute(member.member_epoch, member.assigned, target_epoch, target,
                    partition_epoch, owned)


def _compute(epoch: int, assigned: Assignment, target_epoch: int, target: Assignment,
             partition_epoch: Callable[[str, int], int], owned: Owned
             ) -> tuple[int, MemberState, Assignment, Assignment]:
    unreleased = False
    kept: Assignment = {}
    revoking: Assignment = {}
    adding: Assignment = {}
    for topic in sorted(set(target) | set(assigned)):
        want = target.get(topic, frozenset())
        have = assigned.get(topic, frozenset())
        keep = have & want
        if keep:
            kept[topic] = keep
        if have - keep:
            revoking[topic] = have - keep
        free = set()
        for p in want - keep:
            if partition_epoch(topic, p) == -1:
                free.add(p)
            else:
                unreleased = True
        if free:
            adding[topic] = frozenset(free)
    if revoking and _owns_any(owned, revoking):
        return epoch, MemberState.UNREVOKED_PARTITIONS, kept, revoking
    merged = dict(kept)
    for topic, ps in adding.items():
        merged[topic] = merged.get(topic, frozenset()) | ps
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return target_epoch, state, merged, {}
