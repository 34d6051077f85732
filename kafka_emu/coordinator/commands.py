"""Version-free commands: what the broker handlers hand to ``Coordinator.handle``.

Each command carries an opaque, hashable ``request_id`` chosen by the caller; every reply the
coordinator produces names the request it answers by that id. Version quirks arrive as explicit
booleans (``require_known_member_id`` = JoinGroup v4+, ``supports_skip_assignment`` = v9+,
``missing_group_is_not_found`` = OffsetCommit v9+, ``not_found_is_error`` = DescribeGroups v6+),
so the coordinator never sees an API version.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Hashable, Mapping

import attrs

from kafka_emu.frozen import fast_init_module

Protocols = tuple[tuple[str, bytes], ...]
_NO_TOPICS: Mapping[str, int] = MappingProxyType({})


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
    # The topic catalogue (name -> partition count), read only when the group is a consumer
    # group: its classic members' subscriptions are assigned server-side (KIP-848 migration).
    topics: Mapping[str, int] = attrs.field(default=_NO_TOPICS, eq=False, hash=False)


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
    # Set by the request path for a commit it can record with its request's frames (one broker,
    # no fault rule: handlers/offset_commit.py): while the trace is the only sink, the
    # coordinator (a classic group's commit, or a consumer group's) then leaves a one-partition
    # commit's OffsetsCommitted to that record (broker/event_rows.py's COMMIT_FRAME) instead of
    # making its row.
    by_frame: bool = False


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


# -- operator commands: what a test or an administrator does to a group beyond the wire APIs
# (the control plane's group operations; see ``operator.py``). Members are named by member id or
# by group.instance.id; exactly one of the two is given.


@attrs.frozen(kw_only=True)
class ExpireMember:
    """Expire a member now, exactly as its session (or new-member) timeout would."""

    request_id: Hashable
    group_id: str
    member_id: str | None = None
    group_instance_id: str | None = None


@attrs.frozen(kw_only=True)
class IgnoreHeartbeats:
    """Stop (or resume) honouring a member's heartbeats: they are answered as usual but no longer
    reset its session, so it expires when its session timeout runs out."""

    request_id: Hashable
    group_id: str
    member_id: str | None = None
    group_instance_id: str | None = None
    ignore: bool = True


@attrs.frozen(kw_only=True)
class TriggerRebalance:
    request_id: Hashable
    group_id: str
    reason: str = "rebalance triggered by the control plane"


@attrs.frozen(kw_only=True)
class DeleteGroup:
    """Delete one group. Without ``force`` only an Empty group (as DeleteGroups); with it, every
    member is removed first (parked JoinGroups get UNKNOWN_MEMBER_ID)."""

    request_id: Hashable
    group_id: str
    force: bool = False


@attrs.frozen(kw_only=True)
class SetOffsets:
    """Write committed offsets as an administrator would, in any group state; an unknown group
    is created Empty (as an admin commit with generation -1 creates it)."""

    request_id: Hashable
    group_id: str
    offsets: tuple[CommitOffset, ...]


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
    | ExpireMember
    | IgnoreHeartbeats
    | TriggerRebalance
    | DeleteGroup
    | SetOffsets
)


# a command is built for every request: the cheaper frozen __init__ (kafka_emu/frozen.py)
fast_init_module(globals())
