"""Version-free results and the ``Reply`` envelope that addresses them to a request id.

Shapes follow the Java coordinator's response data (reference section 2) minus everything that is
version-specific framing (throttle time, header fields); the broker maps nulls to "" where an old
version needs it.
"""

from __future__ import annotations

from typing import Hashable, Union

import attrs

from kafka_emu.errors import ErrorCode
from kafka_emu.frozen import fast_init_module


@attrs.frozen(kw_only=True)
class JoinGroupMember:
    member_id: str
    group_instance_id: str | None
    metadata: bytes


@attrs.frozen(kw_only=True)
class JoinGroupResult:
    error: ErrorCode
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = ""
    members: tuple[JoinGroupMember, ...] = ()
    skip_assignment: bool = False


@attrs.frozen(kw_only=True)
class SyncGroupResult:
    error: ErrorCode
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@attrs.frozen(kw_only=True)
class HeartbeatResult:
    error: ErrorCode


@attrs.frozen(kw_only=True)
class LeaveMemberResult:
    member_id: str
    group_instance_id: str | None
    error: ErrorCode


@attrs.frozen(kw_only=True)
class LeaveGroupResult:
    error: ErrorCode
    members: tuple[LeaveMemberResult, ...] = ()


@attrs.frozen(kw_only=True)
class PartitionError:
    topic: str
    partition: int
    error: ErrorCode


@attrs.frozen(kw_only=True)
class OffsetCommitResult:
    partitions: tuple[PartitionError, ...]


@attrs.frozen(kw_only=True)
class FetchedOffset:
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str
    error: ErrorCode = ErrorCode.NONE


@attrs.frozen(kw_only=True)
class OffsetFetchResult:
    error: ErrorCode
    partitions: tuple[FetchedOffset, ...] = ()


@attrs.frozen(kw_only=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = "classic"


@attrs.frozen(kw_only=True)
class ListGroupsResult:
    error: ErrorCode
    groups: tuple[ListedGroup, ...] = ()


@attrs.frozen(kw_only=True)
class DescribedMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@attrs.frozen(kw_only=True)
class DescribedGroup:
    error: ErrorCode
    group_id: str
    state: str
    protocol_type: str = ""
    protocol_data: str = ""
    members: tuple[DescribedMember, ...] = ()
    error_message: str | None = None


@attrs.frozen(kw_only=True)
class DescribeGroupsResult:
    groups: tuple[DescribedGroup, ...]


@attrs.frozen(kw_only=True)
class DeleteGroupsResult:
    results: tuple[tuple[str, ErrorCode], ...]


@attrs.frozen(kw_only=True)
class OffsetDeleteResult:
    error: ErrorCode
    partitions: tuple[PartitionError, ...] = ()


@attrs.frozen(kw_only=True)
class OperatorResult:
    """The answer to an operator command: NONE, or why nothing was changed (GROUP_ID_NOT_FOUND,
    UNKNOWN_MEMBER_ID, NON_EMPTY_GROUP, COORDINATOR_NOT_AVAILABLE for a Dead group, ...), with a
    sentence for people and the member ids it acted on."""

    error: ErrorCode
    detail: str = ""
    member_ids: tuple[str, ...] = ()


Result = Union[
    JoinGroupResult,
    SyncGroupResult,
    HeartbeatResult,
    LeaveGroupResult,
    OffsetCommitResult,
    OffsetFetchResult,
    ListGroupsResult,
    DescribeGroupsResult,
    DeleteGroupsResult,
    OffsetDeleteResult,
    OperatorResult,
]


@attrs.frozen
class Reply:
    """One answer to one request: ``request_id`` is the id the caller put on the command."""

    request_id: Hashable
    result: Result


def summary_error(result: Result) -> ErrorCode:
    """The one code an observer sees for a reply: the top-level error if the result has one,
    else the first non-NONE per-item error, else NONE."""
    error = getattr(result, "error", None)
    if error:  # None and ErrorCode.NONE (0) are false
        return error
    if type(result) not in _ITEMIZED:  # most results (one per heartbeat): no per-item errors
        return _NONE
    items = ()
    if isinstance(result, (OffsetCommitResult, OffsetFetchResult, OffsetDeleteResult)):
        items = tuple(p.error for p in result.partitions)
    elif isinstance(result, LeaveGroupResult):
        items = tuple(m.error for m in result.members)
    elif isinstance(result, DescribeGroupsResult):
        items = tuple(g.error for g in result.groups)
    elif isinstance(result, DeleteGroupsResult):
        items = tuple(code for _, code in result.results)
    for code in items:
        if code != ErrorCode.NONE:
            return code
    return ErrorCode.NONE


_NONE = ErrorCode.NONE  # read once: an enum member looked up on its class costs a lookup each time

# The results whose items carry errors of their own (``summary_error`` looks at them).
_ITEMIZED = ITEMIZED = frozenset({OffsetCommitResult, OffsetFetchResult, OffsetDeleteResult,
                                  LeaveGroupResult, DescribeGroupsResult, DeleteGroupsResult})


# a result and its Reply are built for every request: the cheaper frozen __init__ (kafka_emu/frozen.py)
fast_init_module(globals())
