"""Consumer groups (KIP-848): the group and member entities and their states.

A consumer group has three epochs. The **group epoch** is bumped whenever what the assignor would
see changes (a member joins, leaves or changes its subscription; a subscribed topic's partition
count changes). The **assignment epoch** is the group epoch for which the **target assignment**
was last computed. Each member has a **member epoch**: the assignment epoch it has reconciled to.

A member converges to its target one heartbeat at a time (``reconcile.next_assignment``): it
first gives up partitions the target takes away (UNREVOKED_PARTITIONS, epoch unchanged), then
takes the target epoch and the partitions that are free (STABLE), or waits for partitions another
member still owns (UNRELEASED_PARTITIONS, new epoch). ``ConsumerGroup.owners`` records, for every
partition some member holds or is revoking, who holds it and at which member epoch (Kafka's
``currentPartitionEpoch``); a partition is never held by two members at once.

Each member also keeps, per partition it holds or is revoking, its **assignment epoch** (KIP-1251,
Kafka 4.3): the member epoch at which the partition was given to it. ``ConsumerGroup.claim``
stamps a newly held partition with the member's epoch and keeps the stamp of one it already held
(a partition moved to pending revocation keeps it); a partition it no longer holds loses it. A
commit with a lagging member epoch is checked against these stamps (commit_fence.py).

Group state is derived, as Kafka does (ConsumerGroup.maybeUpdateGroupState): Empty without members,
Assigning while the group epoch is ahead of the assignment epoch, Reconciling while some member has
not reached the target, else Stable.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from .regexes import ResolvedRegex

Assignment = dict[str, frozenset[int]]  # topic name -> partitions

LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2


class MemberState(enum.Enum):
    STABLE = "stable"
    UNREVOKED_PARTITIONS = "unrevoked_partitions"
    UNRELEASED_PARTITIONS = "unreleased_partitions"


class ConsumerGroupState(enum.Enum):
    """``.value`` is the wire string (ListGroups, ConsumerGroupDescribe)."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"

    @property
    def lower(self) -> str:
        return self.value.lower()


@attrs.frozen(kw_only=True)
class ClassicMetadata:
    """What a consumer group keeps of a member that speaks the classic protocol (JoinGroup,
    SyncGroup, Heartbeat) inside it (Kafka's ClassicMemberMetadata): its session timeout and the
    protocols of its last JoinGroup, (name, metadata) in its order."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        return self.protocols[0][0]


@attrs.define(eq=False)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    # The topics the member's names and regex resolve to in the current catalogue.
    subscribed_topics: frozenset[str] = frozenset()
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = attrs.field(factory=dict)
    pending_revocation: Assignment = attrs.field(factory=dict)
    heartbeats_ignored: bool = False  # control plane: heartbeats no longer re-arm the session
    classic: ClassicMetadata | None = None  # set while the member uses the classic protocol
    # (topic, partition) -> the member epoch it was assigned at, for assigned and pending-revocation
    # partitions (KIP-1251); kept up to date by ConsumerGroup.claim
    assignment_epochs: dict[tuple[str, int], int] = attrs.field(factory=dict)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch


@attrs.define(eq=False)
class ConsumerGroup:
    group_id: str
    created_at_ms: int = 0
    group_epoch: int = 0
    assignment_epoch: int = 0
    state: ConsumerGroupState = ConsumerGroupState.EMPTY
    state_since_ms: int = 0
    members: dict[str, ConsumerMember] = attrs.field(factory=dict)  # insertion order
    static_members: dict[str, str] = attrs.field(factory=dict)  # instance id -> member id
    target: dict[str, Assignment] = attrs.field(factory=dict)  # member id -> target assignment
    # (topic, partition) -> (member id, member epoch) for assigned and pending-revocation ones
    owners: dict[tuple[str, int], tuple[str, int]] = attrs.field(factory=dict)
    # how many members subscribe to each topic (resolved), and the partition counts last seen
    topic_subscribers: dict[str, int] = attrs.field(factory=dict)
    subscription_metadata: dict[str, int] = attrs.field(factory=dict)
    target_metadata: dict[str, int] | None = None  # the metadata the target was computed with
    unloaded: bool = False  # its coordinator moved and the new one has not loaded it yet
    # The session timeout its last heartbeat applied (the group config's or the broker's), so a
    # reload re-arms its members' sessions with it (Kafka reads the group config on load).
    session_timeout_ms: int | None = None
    # The group's regular expressions (regexes.py): members per pattern, each pattern's last
    # resolution, and the resolution count, catalogue and time of the last one.
    regex_subscribers: dict[str, int] = attrs.field(factory=dict)
    resolved_regexes: dict[str, "ResolvedRegex"] = attrs.field(factory=dict)
    regex_version: int = 0
    regex_catalogue: frozenset[str] | None = None
    regex_resolved_at_ms: int | None = None

    def classic_members(self) -> int:
        return sum(1 for m in self.members.values() if m.classic is not None)

    def partition_epoch(self, topic: str, partition: int) -> int:
        owner = self.owners.get((topic, partition))
        return -1 if owner is None else owner[1]

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return self.topic_subscribers.get(topic, 0) > 0

    def computed_state(self) -> ConsumerGroupState:
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        epoch = self.assignment_epoch
        for member in self.members.values():
            if not member.is_reconciled_to(epoch):
                return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def computed_state_if_quiet(self) -> ConsumerGroupState:
        """The state, assuming no member changed since it was last derived: only the cheap
        checks (a heartbeat that moved nothing cannot change Reconciling/Stable)."""
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        return self.state

    # ------------------------------------------------------------ ownership bookkeeping
    def release(self, member: ConsumerMember) -> None:
        """Forget every partition ``member`` holds or is revoking."""
        owners = self.owners
        for assignment in (member.assigned, member.pending_revocation):
            for topic, partitions in assignment.items():
                for p in partitions:
                    if owners.get((topic, p), (None,))[0] == member.member_id:
                        del owners[(topic, p)]

    def claim(self, member: ConsumerMember) -> None:
        """Record ``member``'s assigned and pending partitions at its epoch. Two members holding one
        partition is a coordinator bug (Kafka throws IllegalStateException), never a client error."""
        owners = self.owners
        entry = (member.member_id, member.member_epoch)
        # Kafka never stamps a negative epoch (a static member gone with -2 keeps stamps of 0)
        stamp = max(member.member_epoch, 0)
        old_epochs = member.assignment_epochs
        epochs: dict[tuple[str, int], int] = {}
        for assignment in (member.assigned, member.pending_revocation):
            for topic, partitions in assignment.items():
                for p in partitions:
                    held = owners.get((topic, p))
                    if held is not None and held[0] != member.member_id:
                        raise AssertionError(
                            f"{topic}-{p} given to {member.member_id} while {held[0]} holds it")
                    owners[(topic, p)] = entry
                    epochs[(topic, p)] = old_epochs.get((topic, p), stamp)
        member.assignment_epochs = epochs


def count(assignment: Assignment) -> int:
    return sum(len(p) for p in assignment.values())


def normalized(assignment: Assignment) -> Assignment:
    """Drop topics with no partitions, so equal assignments compare equal."""
    return {t: frozenset(p) for t, p in assignment.items() if p}
