"""The five classic-group states and the allowed-previous-state table (reference 3.1).

Every state change goes through ``Group.transition_to``, which consults ``VALID_PREVIOUS``; a
transition that is not in the table is a bug in the coordinator, never a client error, so it raises
``IllegalStateTransition`` (an ``AssertionError`` subclass, deliberately not a ``KafkaError``).
"""

from __future__ import annotations

import enum


class GroupState(enum.Enum):
    """Classic group state; ``.value`` is the wire string (ListGroups/DescribeGroups GroupState)."""

    EMPTY = "Empty"
    """No members. May still hold offsets; also "simple" groups created by offset commits.

    actions: JoinGroup from new members is handled normally; SyncGroup, Heartbeat, OffsetCommit
             with a generation >= 0 and LeaveGroup get UNKNOWN_MEMBER_ID; generation -1 commits
             and OffsetFetch are allowed.
    transitions: a member is added => PreparingRebalance (initial rebalance, 3.6)
                 DeleteGroups / offset retention removes the group => Dead
    """

    PREPARING_REBALANCE = "PreparingRebalance"
    """Collecting JoinGroup requests.

    actions: Heartbeat and SyncGroup get REBALANCE_IN_PROGRESS; JoinGroup requests are parked
             until every member (and no pending member) has joined or the join timer fires;
             LeaveGroup removes members; commits from the current generation are accepted.
    transitions: join phase completes with >= 1 member => CompletingRebalance
                 join phase completes with 0 members => Empty (generation still increments)
                 unload => Dead
    """

    COMPLETING_REBALANCE = "CompletingRebalance"
    """Join phase done, waiting for the leader's SyncGroup.

    actions: Heartbeat succeeds; OffsetCommit gets REBALANCE_IN_PROGRESS; follower SyncGroups are
             parked until the leader's assignment arrives; a JoinGroup with unchanged protocols
             is answered at once for the current generation.
    transitions: leader's SyncGroup stored => Stable
                 new member, changed protocols, static rejoin, member removed, pending-sync
                 expiry => PreparingRebalance (parked SyncGroups get REBALANCE_IN_PROGRESS, 3.11)
                 unload => Dead
    """

    STABLE = "Stable"
    """Assignment distributed.

    actions: Heartbeat succeeds; SyncGroup returns the stored assignment at once; a follower
             JoinGroup with unchanged protocols is answered for the current generation; member
             commits of the current generation are accepted.
    transitions: leader JoinGroup, follower JoinGroup with changed protocols, new member, member
                 removed (leave, session expiry, pending-sync expiry), static replacement that
                 changes the selected protocol => PreparingRebalance
                 unload => Dead
    """

    DEAD = "Dead"
    """Group being removed. Transient: the emulator passes through it when a group is deleted
    (DeleteGroups, retention) and ``Coordinator.mark_dead`` parks a group here to simulate a
    partition unload.

    actions: JoinGroup/SyncGroup/Heartbeat/LeaveGroup/OffsetCommit get COORDINATOR_NOT_AVAILABLE;
             OffsetFetch and DescribeGroups treat the group as absent.
    transitions: none (only Dead -> Dead is allowed, as in Kafka)
    """

    @property
    def lower(self) -> str:
        """Lower-case name used by the ListGroups state filter (3.15)."""
        return _LOWER[self]


_LOWER = {s: s.value.lower() for s in GroupState}

VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}
    ),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
}


def can_transition(old: GroupState, new: GroupState) -> bool:
    return old in VALID_PREVIOUS[new]


class IllegalStateTransition(AssertionError):
    """A coordinator bug: a transition outside ``VALID_PREVIOUS`` was attempted."""

    def __init__(self, group_id: str, old: GroupState, new: GroupState) -> None:
        super().__init__(f"group {group_id!r}: illegal transition {old.value} -> {new.value}")
        self.old = old
        self.new = new
