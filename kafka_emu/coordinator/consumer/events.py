"""Observation events of consumer groups, emitted through the coordinator's one observer seam
(``core.emit``) beside the shared ones (GroupCreated, MemberAdded, MemberRemoved, ReplyEmitted).
"""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class ConsumerGroupStateChanged:
    """A KIP-848 consumer group moved between its states (Empty, Assigning, Reconciling, Stable,
    Dead)."""

    at_ms: int
    group_id: str
    old: str
    new: str


@attrs.frozen(kw_only=True)
class GroupEpochBumped:
    """A consumer group's epoch went up: a member joined or left, a subscription, the topics'
    metadata or a regex resolution changed (``reason``)."""

    at_ms: int
    group_id: str
    group_epoch: int
    # "member_joined", "subscription_changed", "metadata_changed", "member_removed",
    # "regex_resolved"
    reason: str


@attrs.frozen(kw_only=True)
class TargetAssignmentComputed:
    """The server-side assignor computed a new target assignment for a consumer group's epoch;
    or a classic group's upgrade carried its members' last assignments over as their targets
    (``assignor`` is then empty, ``changed`` every member, and the target may leave partitions
    unassigned: those of a member that left during the classic group's last rebalance)."""

    at_ms: int
    group_id: str
    assignment_epoch: int
    assignor: str
    # (member id, ((topic, (partition, ...)), ...)) for each member whose target changed (all of
    # them the first time); a large group's unchanged members are not repeated on every join
    changed: tuple[tuple[str, tuple[tuple[str, tuple[int, ...]], ...]], ...]


@attrs.frozen(kw_only=True)
class MemberReconciled:
    """A member's epoch, state or partitions changed in one heartbeat."""

    at_ms: int
    group_id: str
    member_id: str
    member_epoch: int
    state: str  # "stable", "unrevoked_partitions", "unreleased_partitions"
    assigned: tuple[tuple[str, tuple[int, ...]], ...]
    pending_revocation: tuple[tuple[str, tuple[int, ...]], ...]


@attrs.frozen(kw_only=True)
class RegexResolved:
    """A subscribed regex resolved once for its whole group (Kafka's ResolvedRegularExpression)."""

    at_ms: int
    group_id: str
    regex: str
    topics: tuple[str, ...]
    version: int
