"""The pure, deterministic classic group coordinator.

Theory of operation
-------------------
``Coordinator.handle(command, now_ms)`` takes a version-free command (``JoinGroup``,
``SyncGroup``, ...) and returns ``Reply(request_id, result)`` values: the command's own answer,
unless the request is parked, plus answers to requests parked earlier (a join that completes a
rebalance answers every parked JoinGroup; a leader's SyncGroup answers every parked follower).
Time is an argument: deadlines are absolute integers in keyed timers, ``next_deadline()`` says
when to call ``expire(now_ms)``, which returns what expiry causes. Nothing here reads a clock,
does I/O or imports trio; the only randomness is ``new_member_uuid`` (uuid4 by default).

Module map: ``state`` (the five states and the allowed-previous table), ``group`` (Group/Member
entities, ``transition_to``), ``timers`` (keyed heap), ``rebalance`` (start/complete/expire
rebalances), ``join`` / ``membership`` / ``offsets`` / ``admin`` (one handler per API),
``coordinator`` (the doors), ``events`` (the observation seam).

Every request id is answered at most once. Kafka never answers two kinds of parked request, and
neither do we: a JoinGroup or SyncGroup superseded by a newer one from the same member (sent on
another connection), and a parked SyncGroup whose member is removed by LeaveGroup. Both are
reported to the observer as ``RequestDropped``.

Deterministic choices where Kafka uses hash-map order (reference 3.3, 3.4, 3.14):
- members are kept in insertion order (a static replacement moves the member to the end); this is
  the order of the leader's JoinGroup member list and of DescribeGroups members;
- when the leader leaves, the earliest-added remaining member becomes leader;
- at join completion a leader that did not rejoin is replaced by the earliest-added member with a
  parked JoinGroup;
- protocol selection: most votes wins; a tie goes as in Kafka, to the first of the tied names in
  its vote HashMap's iteration order, which depends only on the names (``java_order``);
- ListGroups lists groups in creation order; OffsetFetch "all" sorts by topic, then partition.
"""

# Imported on first use of a name (PEP 562): the broker imports this package at start for its
# config, and the coordinator itself (state machine, commands, results, events: about a hundred
# attrs classes) only when the first group request arrives, which shortens a serve's start.
import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .commands import (
        Command,
        CommitOffset,
        DeleteGroup,
        DeleteGroups,
        DescribeGroups,
        ExpireMember,
        Heartbeat,
        IgnoreHeartbeats,
        JoinGroup,
        LeaveGroup,
        LeaveMember,
        ListGroups,
        OffsetCommit,
        OffsetDelete,
        OffsetFetch,
        SetOffsets,
        SyncGroup,
        TriggerRebalance,
    )
    from .config import CoordinatorConfig
    from .coordinator import DEADLINE_KINDS, Coordinator, Deadline, error_result
    from .events import (
        Event,
        GenerationChanged,
        GroupCreated,
        GroupDeleted,
        LeaderChanged,
        MemberAdded,
        MemberRemoved,
        Observer,
        OffsetsCommitted,
        OffsetsRemoved,
        AssignmentsDistributed,
        MemberSubscribed,
        PendingMemberAdded,
        RebalanceTriggered,
        RemovalReason,
        ReplyEmitted,
        RequestDropped,
        RequestParked,
        StateChanged,
    )
    from .results import (
        DeleteGroupsResult,
        DescribedGroup,
        DescribedMember,
        DescribeGroupsResult,
        FetchedOffset,
        HeartbeatResult,
        JoinGroupMember,
        JoinGroupResult,
        LeaveGroupResult,
        LeaveMemberResult,
        ListedGroup,
        ListGroupsResult,
        OffsetCommitResult,
        OffsetDeleteResult,
        OffsetFetchResult,
        OperatorResult,
        PartitionError,
        Reply,
        Result,
        SyncGroupResult,
    )
    from .state import VALID_PREVIOUS, GroupState, IllegalStateTransition
    from .txn_offsets import CompleteTxnOffsets, TxnOffsetCommit

_MODULE_NAMES = {  # module -> the names it gives this package
    "commands": (
        "Command", "CommitOffset", "DeleteGroup", "DeleteGroups", "DescribeGroups",
        "ExpireMember", "Heartbeat", "IgnoreHeartbeats", "JoinGroup", "LeaveGroup",
        "LeaveMember", "ListGroups", "OffsetCommit", "OffsetDelete", "OffsetFetch",
        "SetOffsets", "SyncGroup", "TriggerRebalance",
    ),
    "config": (
        "CoordinatorConfig",
    ),
    "coordinator": (
        "Coordinator", "DEADLINE_KINDS", "Deadline", "error_result",
    ),
    "events": (
        "AssignmentsDistributed", "Event", "GenerationChanged", "GroupCreated",
        "GroupDeleted", "LeaderChanged", "MemberAdded", "MemberRemoved", "MemberSubscribed",
        "Observer", "OffsetsCommitted", "OffsetsRemoved", "PendingMemberAdded",
        "RebalanceTriggered", "RemovalReason", "ReplyEmitted", "RequestDropped",
        "RequestParked", "StateChanged",
    ),
    "results": (
        "DeleteGroupsResult", "DescribeGroupsResult", "DescribedGroup", "DescribedMember",
        "FetchedOffset", "HeartbeatResult", "JoinGroupMember", "JoinGroupResult",
        "LeaveGroupResult", "LeaveMemberResult", "ListGroupsResult", "ListedGroup",
        "OffsetCommitResult", "OffsetDeleteResult", "OffsetFetchResult", "OperatorResult",
        "PartitionError", "Reply", "Result", "SyncGroupResult",
    ),
    "state": (
        "GroupState", "IllegalStateTransition", "VALID_PREVIOUS",
    ),
    "txn_offsets": (
        "CompleteTxnOffsets", "TxnOffsetCommit",
    ),
}
_WHERE = {name: module for module, names in _MODULE_NAMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CompleteTxnOffsets",
    "TxnOffsetCommit",
    "DEADLINE_KINDS",
    "Deadline",
    "DeleteGroup",
    "ExpireMember",
    "IgnoreHeartbeats",
    "OperatorResult",
    "SetOffsets",
    "TriggerRebalance",
    "Command",
    "CommitOffset",
    "Coordinator",
    "CoordinatorConfig",
    "DeleteGroups",
    "DeleteGroupsResult",
    "DescribeGroups",
    "DescribeGroupsResult",
    "DescribedGroup",
    "DescribedMember",
    "Event",
    "FetchedOffset",
    "GenerationChanged",
    "GroupCreated",
    "GroupDeleted",
    "GroupState",
    "Heartbeat",
    "HeartbeatResult",
    "IllegalStateTransition",
    "JoinGroup",
    "JoinGroupMember",
    "JoinGroupResult",
    "LeaderChanged",
    "LeaveGroup",
    "LeaveGroupResult",
    "LeaveMember",
    "LeaveMemberResult",
    "ListGroups",
    "ListGroupsResult",
    "ListedGroup",
    "MemberAdded",
    "MemberRemoved",
    "Observer",
    "OffsetCommit",
    "OffsetCommitResult",
    "OffsetDelete",
    "OffsetDeleteResult",
    "OffsetFetch",
    "OffsetFetchResult",
    "OffsetsCommitted",
    "OffsetsRemoved",
    "AssignmentsDistributed",
    "MemberSubscribed",
    "PartitionError",
    "PendingMemberAdded",
    "RebalanceTriggered",
    "RemovalReason",
    "Reply",
    "ReplyEmitted",
    "RequestDropped",
    "RequestParked",
    "Result",
    "StateChanged",
    "SyncGroup",
    "SyncGroupResult",
    "VALID_PREVIOUS",
    "error_result",
]
