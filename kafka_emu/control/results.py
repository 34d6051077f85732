"""What each control operation returns, declared once as TypedDicts.

Theory of operation. An operation's function names its result type in its return annotation
(``def advance(broker, params: AdvanceParams) -> Advanced``). From that one declaration:

- the Python handles (``kafka_emu.testing``) are typed: ``emu.advance(5000)`` is an
  ``Advanced`` to a type checker, ``await async_emu.advance(5000)`` too;
- the OpenAPI document (``/openapi.json``) describes each operation's ``result`` with the JSON
  Schema derived from it (``control/openapi.py``), which the schemathesis test checks every
  answer against;
- ``kafka-emu ctl OPERATION --help`` names the result and its keys (read from that document).

An operation whose function declares no result type has ``Any`` as its result; a test
(tests/control/test_control_results.py) refuses that, and checks every declared result against
what the operation really returns.

The values stay what they always were on every surface: plain JSON-able dicts and lists (a
TypedDict is a dict at run time), so reading ``result["members_expired"]`` works unchanged.

Keys that only some results carry (a fault rule's ``error`` exists for ``action="error"``
only) live in a ``total=False`` part, so type checkers know they may be missing.

Timeline events differ by event type (one field set per event class of ``broker/events.py`` and
``coordinator/events.py``), so they are typed ``dict[str, Any]`` with ``seq`` and ``type``
always present; ``EVENT_SCHEMA`` says so in the OpenAPI document.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

# -- events -------------------------------------------------------------------------------------


class JsonSchema:
    """Metadata for ``Annotated``: the JSON Schema of a value whose Python type says less."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema


EVENT_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["type"],
    "properties": {
        "seq": {"type": "integer", "description": "the event's sequence number (timeline reads)"},
        "type": {"type": "string", "description": "the event class, e.g. RequestHandled, "
                 "MemberAdded, MemberRemoved, RebalanceTriggered, GenerationChanged, "
                 "TimeAdvanced, FaultFired; its fields follow (enums by value, error codes as "
                 "integers, bytes as hex)"},
        "at_ms": {"type": "integer"},
    },
}

# One recorded event: {"seq", "type", <the event's own fields>}. The fields depend on the type.
Event = Annotated[dict[str, Any], JsonSchema(EVENT_SCHEMA)]

# -- what an operation caused (control/plane.py what_happened) ----------------------------------


class MemberGone(TypedDict):
    group_id: str
    member_id: str
    group_instance_id: str | None
    reason: str  # RemovalReason's value, e.g. "session_expired", "leave_group"
    at_ms: int


class RebalanceStarted(TypedDict):
    group_id: str
    reason: str
    at_ms: int


class GenerationCompleted(TypedDict):
    group_id: str
    generation: int
    leader: str | None
    members: list[str]
    at_ms: int


class GroupGone(TypedDict):
    group_id: str
    reason: str  # "delete_groups", "retention" or "control"
    at_ms: int


class Consequences(TypedDict):
    """What an operation caused, from the events emitted while it ran (in order)."""

    members_expired: list[MemberGone]  # by a timeout (session, rebalance, new member, ...)
    members_removed: list[MemberGone]  # any other way (left, removed, fenced, ...)
    rebalances_started: list[RebalanceStarted]
    generations: list[GenerationCompleted]
    groups_deleted: list[GroupGone]
    events: list[Event]


# -- time ---------------------------------------------------------------------------------------

DeadlineKind = Literal["session", "new_member", "pending_member", "rebalance", "initial_delay",
                       "pending_sync", "retention", "log_retention"]


class Deadline(TypedDict):
    deadline_ms: int
    in_ms: int  # from the coordinator's now
    kind: DeadlineKind
    group_id: str | None  # None for the retention sweep
    member_id: str | None


class LogTrimmed(TypedDict):
    """A partition a log retention run deleted batches from (``broker/log_retention.py``)."""

    topic: str
    partition: int
    batches: int
    log_start_offset: int


class Advanced(Consequences):
    """``advance``: the clock moved from ``from_ms`` to ``now_ms`` and what that caused."""

    from_ms: int
    now_ms: int
    advanced_ms: int
    logs_trimmed: list[LogTrimmed]


class AdvancedToDeadline(Advanced):
    """``advance_to_next_deadline``: as ``advance``, plus the deadline it moved to."""

    deadline: Deadline


class Clock(TypedDict):
    now_ms: int  # ms since the epoch, as the coordinator sees it
    mode: Literal["real", "manual"]
    advanced_ms: int  # how far the control plane has moved it in all


# -- groups -------------------------------------------------------------------------------------


class GroupSummary(TypedDict):
    group_id: str
    type: str  # "classic" or "consumer" (KIP-848)
    state: str
    protocol_type: str | None
    generation: int | None  # None for a consumer group
    members: int | None


class Subscription(TypedDict):
    """A consumer-protocol Subscription, decoded."""

    topics: list[str]
    owned_partitions: dict[str, list[int]]
    generation_id: int
    rack_id: str | None
    user_data: str | None  # hex


class Assignment(TypedDict):
    """A consumer-protocol Assignment, decoded."""

    partitions: dict[str, list[int]]
    user_data: str | None  # hex


class MemberView(TypedDict):
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    is_leader: bool
    awaiting_join: bool
    awaiting_sync: bool
    heartbeats_ignored: bool
    session_deadline_ms: int | None
    subscription: Subscription | None  # consumer groups
    assignment: Assignment | None  # consumer groups, once assigned
    metadata: str | None  # hex, other protocol types
    raw_assignment: str | None  # hex, other protocol types
    # consumer (KIP-848) and share groups; None in a classic group
    member_epoch: int | None
    member_state: str | None  # consumer groups: stable, unrevoked_partitions, unreleased_partitions
    target_assignment: dict[str, list[int]] | None  # consumer groups: what the coordinator wants
    pending_revocation: dict[str, list[int]] | None  # consumer groups: still to be given up
    subscribed_topic_regex: str | None
    uses_classic_protocol: bool  # JoinGroup/SyncGroup (always, in a classic group)


class PartitionOffsets(TypedDict):
    """One partition as ``kafka-consumer-groups.sh --describe`` shows it."""

    topic: str
    partition: int
    committed_offset: int | None  # None: nothing committed
    log_end_offset: int | None  # None: no such partition
    lag: int | None
    metadata: str | None
    member_id: str | None  # the member it is assigned to (a share group's first, if several)
    start_offset: int | None  # share groups: the share-partition start offset (KIP-1226 lag)


class GroupView(TypedDict):
    """Any group: classic, consumer (KIP-848) or share (KIP-932). For the two modern types
    ``generation`` is the group epoch, ``protocol`` the server-side assignor, ``leader`` None."""

    group_id: str
    state: str
    generation: int
    protocol_type: str | None
    protocol: str | None
    leader: str | None
    members: list[MemberView]
    pending_members: list[str]
    offsets: list[PartitionOffsets]
    total_lag: int
    type: str  # "classic", "consumer" or "share"
    group_epoch: int | None  # consumer and share groups
    assignment_epoch: int | None  # consumer and share groups


class OperatorDone(Consequences):
    """A group operation's answer: the members it acted on and what followed."""

    member_ids: list[str]
    detail: str  # a sentence when there was nothing to do, else ""


class OffsetsSet(TypedDict):
    group_id: str
    offsets: list[PartitionOffsets]


# -- faults -------------------------------------------------------------------------------------


class FaultMatch(TypedDict, total=False):
    """What a rule matches; a key that is absent matches anything."""

    api: str
    min_version: int
    max_version: int
    client_id: str
    group_id: str
    member_id: str
    topic: str
    principal: str
    listener: str


class _FaultRuleKeys(TypedDict):
    id: int
    action: str  # error, delay, close_before, close_after, blackhole, throttle
    match: FaultMatch
    count: int | None  # None: always
    skip: int
    probability: float | None
    seed: int | None  # with a probability only
    matched: int
    fired: int
    active: bool


class FaultRule(_FaultRuleKeys, total=False):
    """A fault rule as listed, with how often it matched and fired."""

    error: str  # action "error": the error code's name ...
    error_code: int  # ... and number
    message: str
    delay_ms: int  # action "delay"
    throttle_ms: int  # action "throttle"


class Removed(TypedDict):
    removed: int


# -- topics and the cluster ---------------------------------------------------------------------


class TopicInfo(TypedDict):
    name: str
    topic_id: str
    partitions: int


class BrokerInfo(TypedDict):
    node_id: int
    port: int
    rack: str | None
    running: bool


class PartitionInfo(TypedDict):
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]


class CoordinatorInfo(TypedDict):
    group_id: str
    coordinator: int  # node id
    partition: int  # of __consumer_offsets
    loading: bool


class CoordinatorMoved(PartitionInfo):
    """The group's new coordinator and its __consumer_offsets partition afterwards."""

    group_id: str
    coordinator: int


class LeadersElected(TypedDict):
    moved: int
