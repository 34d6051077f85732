"""Version-free commands and results of share groups (KIP-932).

Topics are named, never by id: the broker maps ids to names and back and hands the coordinator
the catalogue it needs (``topics``: name -> partition count, internal topics excluded), so the
coordinator stays pure. The group's own share.session.timeout.ms / share.heartbeat.interval.ms
(group configs) ride on the heartbeat, None where the group sets none.
"""

from __future__ import annotations

from typing import Hashable, Mapping

import attrs

from kafka_emu.errors import ErrorCode

Partitions = tuple[tuple[str, tuple[int, ...]], ...]  # ((topic, (partition, ...)), ...)


@attrs.frozen(kw_only=True)
class ShareGroupHeartbeat:
    request_id: Hashable
    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] | None = None
    client_id: str = ""
    client_host: str = ""
    topics: Mapping[str, int] = attrs.field(factory=dict, eq=False, hash=False)
    session_timeout_ms: int | None = None
    heartbeat_interval_ms: int | None = None


@attrs.frozen(kw_only=True)
class ShareGroupHeartbeatResult:
    error: ErrorCode
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Partitions | None = None


@attrs.frozen(kw_only=True)
class ShareGroupDescribe:
    request_id: Hashable
    group_ids: tuple[str, ...]


@attrs.frozen(kw_only=True)
class DescribedShareMember:
    member_id: str
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    assignment: Partitions


@attrs.frozen(kw_only=True)
class DescribedShareGroup:
    error: ErrorCode
    group_id: str
    error_message: str | None = None
    state: str = "Dead"
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[DescribedShareMember, ...] = ()


@attrs.frozen(kw_only=True)
class ShareGroupDescribeResult:
    groups: tuple[DescribedShareGroup, ...]
