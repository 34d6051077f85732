"""The observation seam: structured events emitted through one observer callable.

``Coordinator(observer=fn)`` calls ``fn(event)`` synchronously for every event below, in the order
things happen. Every event is an attrs frozen class with ``at_ms`` (the coordinator's notion of
"now" when it happened: the command's ``now_ms``, or a timer's deadline for expiry work) and
``group_id`` (None only for replies to multi-group requests such as ListGroups).

With ``observer=None`` no event object is ever built: emitting code is guarded by a single
attribute check, so observation costs nothing when unused.

The observer must not call back into the coordinator (it is invoked mid-operation).
"""

from __future__ import annotations

import enum
import sys
from typing import Callable, Hashable, Union

import attrs

from kafka_emu.errors import ErrorCode

from .state import GroupState


class RemovalReason(enum.Enum):
    LEFT = "left"  # LeaveGroup naming the member (or its instance id)
    LEFT_HEARTBEAT = "left_heartbeat"  # ConsumerGroupHeartbeat with member epoch -1 (KIP-848)
    SESSION_EXPIRED = "session_expired"  # heartbeat timer fired (3.7)
    NEW_MEMBER_TIMEOUT = "new_member_timeout"  # new member's 300 s join timeout fired (3.7)
    REBALANCE_TIMEOUT = "rebalance_timeout"  # dynamic member missed the join phase (3.2 step 2)
    SYNC_TIMEOUT = "sync_timeout"  # never sent SyncGroup before the sync timer (3.7)
    REPLACED = "replaced"  # static member's old id replaced by a fresh one (3.8)
    GROUP_MAX_SIZE = "group_max_size"  # kicked out by the group.max.size check (3.9)
    PENDING_EXPIRED = "pending_expired"  # MEMBER_ID_REQUIRED id never came back (3.5)
    GROUP_DELETED = "group_deleted"  # pending ids dropped with their group


@attrs.frozen(kw_only=True)
class StateChanged:
    """A classic group moved between its states (Empty, PreparingRebalance, CompletingRebalance,
    Stable, Dead)."""

    at_ms: int
    group_id: str
    old: GroupState
    new: GroupState


@attrs.frozen(kw_only=True)
class GenerationChanged:
    """A classic group's rebalance completed: a new generation with its protocol, leader and
    members."""

    at_ms: int
    group_id: str
    generation: int
    protocol_name: str | None
    leader: str | None
    members: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class RebalanceTriggered:
    """Why a rebalance started (Kafka logs this; a timeline wants it)."""

    at_ms: int
    group_id: str
    reason: str


@attrs.frozen(kw_only=True)
class LeaderChanged:
    """A classic group's leader changed (None: no leader)."""

    at_ms: int
    group_id: str
    leader: str | None


@attrs.frozen(kw_only=True)
class MemberAdded:
    """A member joined a classic group (a static member that replaced an older one names it in
    ``replaces``)."""

    at_ms: int
    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    replaces: str | None = None  # static replacement: the member id this one took over


@attrs.frozen(kw_only=True)
class PendingMemberAdded:
    """A v4+ dynamic member was given an id with MEMBER_ID_REQUIRED (3.5); not yet a member."""

    at_ms: int
    group_id: str
    member_id: str
    client_id: str


@attrs.frozen(kw_only=True)
class MemberRemoved:
    """A member left a classic group: ``reason`` says whether it left, expired, was fenced or
    removed by an operator."""

    at_ms: int
    group_id: str
    member_id: str
    group_instance_id: str | None
    reason: RemovalReason
    pending: bool = False  # True when a pending (MEMBER_ID_REQUIRED) id was dropped


@attrs.frozen(kw_only=True)
class RequestParked:
    """A JoinGroup or SyncGroup is held until the rebalance completes (its ReplyEmitted answers
    it)."""

    at_ms: int
    group_id: str
    request_id: Hashable
    api: str


@attrs.frozen(kw_only=True)
class RequestDropped:
    """A parked request Kafka never answers: superseded by a newer JoinGroup/SyncGroup of the
    same member, or its member removed by LeaveGroup while its SyncGroup was parked."""

    at_ms: int
    group_id: str
    request_id: Hashable
    api: str
    reason: str


@attrs.frozen(kw_only=True)
class ReplyEmitted:
    """The coordinator answered a group request (``error``: the error code the reply carries)."""

    at_ms: int
    group_id: str | None
    request_id: Hashable
    api: str
    error: ErrorCode


@attrs.frozen(kw_only=True)
class GroupCreated:
    """A group came into existence in the coordinator."""

    at_ms: int
    group_id: str


@attrs.frozen(kw_only=True)
class GroupDeleted:
    """A group was deleted: by DeleteGroups, by offset retention, or by the control plane."""

    at_ms: int
    group_id: str
    reason: str  # "delete_groups", "retention" or "control" (the operator's DeleteGroup)


@attrs.frozen(kw_only=True)
class OffsetsCommitted:
    """A group committed offsets: (topic, partition, offset) each, with the committing member and
    generation."""

    at_ms: int
    group_id: str
    member_id: str
    generation_id: int
    offsets: tuple[tuple[str, int, int], ...]  # (topic, partition, offset)


@attrs.frozen(kw_only=True)
class OffsetsRemoved:
    """A group's committed offsets went away: expired, deleted by OffsetDelete, with the group, or
    with the topics' partitions."""

    at_ms: int
    group_id: str
    partitions: tuple[tuple[str, int], ...]
    reason: str  # "expired", "offset_delete", "group_deleted" or "partitions_deleted"


@attrs.frozen(kw_only=True)
class AssignmentsDistributed:
    """The leader's SyncGroup assignments went out for a generation (sinks decode them: for
    protocol type "consumer" the bytes are the consumer protocol's Assignment)."""

    at_ms: int
    group_id: str
    generation: int
    protocol_type: str | None
    protocol_name: str | None
    leader: str | None
    assignments: tuple[tuple[str, bytes], ...]  # (member_id, assignment bytes) per member


@attrs.frozen(kw_only=True)
class MemberSubscribed:
    """A member's join metadata for the chosen protocol in a completed join phase (sinks decode
    it: for protocol type "consumer" the bytes are the consumer protocol's Subscription)."""

    at_ms: int
    group_id: str
    generation: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str | None
    protocol_name: str | None
    metadata: bytes


Event = Union[
    StateChanged,
    GenerationChanged,
    RebalanceTriggered,
    LeaderChanged,
    MemberAdded,
    PendingMemberAdded,
    MemberRemoved,
    RequestParked,
    RequestDropped,
    ReplyEmitted,
    GroupCreated,
    GroupDeleted,
    OffsetsCommitted,
    OffsetsRemoved,
    AssignmentsDistributed,
    MemberSubscribed,
]

Observer = Callable[[Event], None]

# ReplyEmitted by reference (``Coordinator.set_observer(reply_refs=True)``): ``(REPLY_REFS, at_ms,
# group_id, request_id, api, result)`` -- the reply's result itself, frozen, instead of its
# summary error; the observer works the error out when somebody reads the event
# (``results.summary_error``, as the row would have held it: by value)
REPLY_REFS = sys.intern("ReplyEmitted/refs")  # (broker/event_rows.py interns the same)
