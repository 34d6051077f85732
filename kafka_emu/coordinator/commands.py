"""Version-free commands: what the broker handlers hand to ``Coordinator.handle``.

Each command carries an opaque, hashable ``request_id`` chosen by the caller; every reply the
coordinator produces names the request it answers by that id. Version quirks arrive as explicit
booleans (``require_known_member_id`` = JoinGroup v4+, ``supports_skip_assignment`` = v9+,
``missing_group_is_not_found`` = OffsetCommit v9+, ``not_found_is_error`` = DescribeGroups v6+),
so the coordinator never sees an API version.
"""

from __future__ import annotations

from typing import Hashable

import attrs

Protocols = tuple[tuple[str, bytes], ...]


@attrs.frozen(kw_only=True)
class JoinGroup:
    request_id: Hashable
    group_id: str
    member_id: str
    group_instance_id: str | None
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    client_id: str
    client_host: str
    reason: str | None = None
    require_known_member_id: bool = True
    supports_skip_assignment: bool = True


@attrs.frozen(kw_only=True)
class SyncGroup:
    request_id: Hashable
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str | None
    protocol_name: str | None
    assignments: tuple[tuple[str, bytes], ...]


@attrs.frozen(kw_only=True)
class Heartbeat:
    request_id: Hashable
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None


@attrs.frozen(kw_only=True)
class LeaveMember:
    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@attrs.frozen(kw_only=True)
class LeaveGroup:
    request_id: Hashable
    group_id: str
    members: tuple[LeaveMember, ...]


@attrs.frozen(kw_only=True)
class CommitOffset:
    topic: str
    partition: int
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""


@attrs.frozen(kw_only=True)
class OffsetCommit:
    request_id: Hashable
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None
    offsets: tuple[CommitOffset, ...]
    retention_time_ms: int = -1
    missing_group_is_not_found: bool = True
    # v9+: may commit for a consumer group (KIP-848) member; older versions get UNSUPPORTED_VERSION
    supports_member_epochs: bool = True


@attrs.frozen(kw_only=True)
class OffsetFetch:
    request_id: Hashable
    group_id: str
    topics: tuple[tuple[str, tuple[int, ...]], ...] | None
    require_stable: bool = False
    # v9+ (KIP-848): checked against consumer groups only, as Kafka does
    member_id: str | None = None
    member_epoch: int = -1


@attrs.frozen(kw_only=True)
class ListGroups:
    request_id: Hashable
    states_filter: tuple[str, ...] = ()
    types_filter: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class DescribeGroups:
    request_id: Hashable
    group_ids: tuple[str, ...]
    not_found_is_error: bool = True


@attrs.frozen(kw_only=True)
class DeleteGroups:
    request_id: Hashable
    group_ids: tuple[str, ...]


@attrs.frozen(kw_only=True)
class OffsetDelete:
    request_id: Hashable
    group_id: str
    partitions: tuple[tuple[str, int], ...]


Command = (
    JoinGroup
    | SyncGroup
    | Heartbeat
    | LeaveGroup
    | OffsetCommit
    | OffsetFetch
    | ListGroups
    | DescribeGroups
    | DeleteGroups
    | OffsetDelete
)
