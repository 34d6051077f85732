"""Version-free commands and results of the consumer group protocol (KIP-848).

Topics are named, never by id: the broker maps the wire's topic ids to names and back, and hands
the coordinator the catalogue it needs (``topics``: name -> partition count, internal topics
excluded) so the coordinator stays pure. ``owned`` is None when the heartbeat did not send its
owned partitions (the field is null on the wire).
"""

from __future__ import annotations

from typing import Hashable, Mapping

import attrs

from kafka_emu.errors import ErrorCode

Partitions = tuple[tuple[str, tuple[int, ...]], ...]  # ((topic, (partition, ...)), ...)


@attrs.frozen(kw_only=True)
class ConsumerGroupHeartbeat:
    request_id: Hashable
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Partitions | None = None
    # Entries of the wire's TopicPartitions, those of topic ids the broker does not know (dropped
    # from ``owned``) included: a join must send none at all.
    owned_entries: int = 0
    # Some entry named a topic id the broker does not know: such a partition is in no assignment,
    # so a heartbeat with the previous epoch reporting it is fenced (Kafka's isSubset).
    owned_unknown: bool = False
    client_id: str = ""
    client_host: str = ""
    topics: Mapping[str, int] = attrs.field(factory=dict, eq=False, hash=False)
    # v1+ (KIP-1082): the client generates its member id, so an empty one is invalid.
    member_id_required: bool = True
    # The group's own consumer.session.timeout.ms / consumer.heartbeat.interval.ms (group configs
    # set with IncrementalAlterConfigs), None where the group has none: the broker's then apply.
    session_timeout_ms: int | None = None
    heartbeat_interval_ms: int | None = None


@attrs.frozen(kw_only=True)
class ConsumerGroupDescribe:
    request_id: Hashable
    group_ids: tuple[str, ...]


@attrs.frozen(kw_only=True)
class ConsumerGroupHeartbeatResult:
    error: ErrorCode
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Partitions | None = None


@attrs.frozen(kw_only=True)
class DescribedConsumerMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: Partitions
    target_assignment: Partitions
    member_type: int = 1  # KIP-1099: 1 = a member using the consumer protocol


@attrs.frozen(kw_only=True)
class DescribedConsumerGroup:
    error: ErrorCode
    group_id: str
    error_message: str | None = None
    state: str = "Dead"
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[DescribedConsumerMember, ...] = ()


@attrs.frozen(kw_only=True)
class ConsumerGroupDescribeResult:
    groups: tuple[DescribedConsumerGroup, ...]


def as_partitions(assignment) -> Partitions:
    return tuple((t, tuple(sorted(ps))) for t, ps in sorted(assignment.items()) if ps)
