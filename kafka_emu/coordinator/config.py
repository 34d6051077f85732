"""Coordinator configuration under Kafka's broker config names (reference section 6).

Defaults are Kafka's except two, both chosen by measurement so a test suite does not sit idle:

- ``group.initial.rebalance.delay.ms``: 100 ms in kafka-emu (Kafka: 3000), so a test suite's first
  rebalance does not wait three seconds, yet consumers that start together still land in one
  generation and clients get their first Metadata answer before the first assignment.
  bench/bench_initial_delay.py runs the examples and the quickstart at candidate
  delays, and 100 is the lowest at which every one passes every time (kafka-python 3 loses
  records at 0-50, see docs/explanation/differences-from-kafka.md). Pass 3000 for Kafka's behaviour, 0 for the
  fastest joins.
- ``group.consumer.heartbeat.interval.ms``: 250 ms (Kafka: 5000), its minimum 50 (Kafka: 5000).
  A consumer-protocol member learns of a new target assignment only from its next heartbeat, so
  a group forms and recovers in about one interval: at Kafka's 5000 three confluent-kafka
  consumers took a median 5.05 s to share a topic against 0.28 s on the classic protocol.
  bench/bench_consumer_protocol.py times candidates: 250 is the largest within 1.5x of the
  classic protocol (0.31 s to form, 0.25 s to recover from a member leaving), at four heartbeats
  a second per member. Pass 5000 (with the minimum 5000) for Kafka's behaviour.

And one of kafka-emu's own: ``emu.group.consumer.regex.min.refresh.interval.ms``, 0 (Kafka's
constant REGEX_BATCH_REFRESH_MIN_INTERVAL_MS is 10 s). A group resolves its regular expressions
again when a pattern is new or the topics changed, but on Kafka never twice within 10 s: a topic
created a few seconds after a group's resolution reaches a regex subscriber only 10 s later, a
test suite's whole wait. At 0 it reaches the members at their next heartbeats (after the
resolution that the next heartbeat triggers). Pass 10000 for Kafka's pace.
``group.consumer.regex.refresh.interval.ms`` (a resolution that is this old is redone even with
no topic change) keeps Kafka's 600000 and its minimum 10000.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import attrs

from ..frozen import lazy_dunders
from .share.config import ShareGroupConfig

INT32_MAX = 2**31 - 1

# Kafka name -> (attribute, minimum value). Minimums follow Kafka's ConfigDef validators
# (GroupCoordinatorConfig: atLeast(1) for group.max.size, offsets.retention.minutes and
# offsets.retention.check.interval.ms); the others are unbounded there but negative values make
# no sense for an emulator, so they are rejected as well.
_KAFKA_FIELDS: dict[str, tuple[str, int]] = {
    "group.min.session.timeout.ms": ("group_min_session_timeout_ms", 0),
    "group.max.session.timeout.ms": ("group_max_session_timeout_ms", 0),
    "group.initial.rebalance.delay.ms": ("group_initial_rebalance_delay_ms", 0),
    "group.max.size": ("group_max_size", 1),
    "offsets.retention.minutes": ("offsets_retention_minutes", 1),
    "offsets.retention.check.interval.ms": ("offsets_retention_check_interval_ms", 1),
    "offset.metadata.max.bytes": ("offset_metadata_max_bytes", 0),
    # Consumer groups (KIP-848); Kafka validates these with atLeast(1).
    "group.consumer.heartbeat.interval.ms": ("group_consumer_heartbeat_interval_ms", 1),
    "group.consumer.min.heartbeat.interval.ms": ("group_consumer_min_heartbeat_interval_ms", 1),
    "group.consumer.max.heartbeat.interval.ms": ("group_consumer_max_heartbeat_interval_ms", 1),
    "group.consumer.session.timeout.ms": ("group_consumer_session_timeout_ms", 1),
    "group.consumer.min.session.timeout.ms": ("group_consumer_min_session_timeout_ms", 1),
    "group.consumer.max.session.timeout.ms": ("group_consumer_max_session_timeout_ms", 1),
    "group.consumer.max.size": ("group_consumer_max_size", 1),
    # Kafka: an internal config, atLeast(10 * 1000), default 10 minutes.
    "group.consumer.regex.refresh.interval.ms": (
        "group_consumer_regex_refresh_interval_ms", 10_000),
    # Kafka's constant REGEX_BATCH_REFRESH_MIN_INTERVAL_MS (10 s); kafka-emu's own, see above.
    "emu.group.consumer.regex.min.refresh.interval.ms": (
        "group_consumer_regex_min_refresh_interval_ms", 0),
}

# Comma-separated list configs (Kafka's LIST type): name -> (attribute, allowed values).
_KAFKA_LISTS: dict[str, tuple[str, tuple[str, ...]]] = {
    # "share" is accepted as Kafka 4.2 accepts it; the share.version feature governs share groups
    "group.coordinator.rebalance.protocols": ("group_coordinator_rebalance_protocols",
                                              ("classic", "consumer", "share")),
    "group.consumer.assignors": ("group_consumer_assignors", ("uniform", "range")),
}
_ASSIGNOR_CLASSES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}
# Kafka's ConsumerGroupMigrationPolicy: which online conversions of a non-empty group between the
# classic and the consumer type are allowed (empty groups convert whatever the policy). Parsed
# case-insensitively, as Kafka's parse does.
_MIGRATION_POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")

# Kafka's default of each name whose kafka-emu default differs (see the module doc); every other
# default above is Kafka's. The reference page (docs/reference/configuration.md) shows both.
KAFKA_DEFAULTS: dict[str, str] = {
    "group.initial.rebalance.delay.ms": "3000",
    "group.consumer.heartbeat.interval.ms": "5000",
    "group.consumer.min.heartbeat.interval.ms": "5000",
    "emu.group.consumer.regex.min.refresh.interval.ms": "10000 (a constant)",
}


@lazy_dunders  # __repr__, __eq__, __hash__ made on first use
@attrs.frozen(kw_only=True, repr=False, eq=False)
class CoordinatorConfig:
    """The group coordinator's settings (Kafka's group.* and offsets.* broker configs); build
    it from Kafka's names with ``CoordinatorConfig.from_kafka``."""

    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 100  # Kafka: 3000; measured, see the docstring
    group_max_size: int = INT32_MAX
    offsets_retention_minutes: int = 7 * 24 * 60
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    # Not a broker config in Kafka (a constant in GroupCoordinatorConfig, 3.7); exposed here only
    # so tests can shorten it. from_kafka does not accept it.
    new_member_join_timeout_ms: int = 300_000
    # Consumer groups (KIP-848), Kafka 4.x defaults.
    group_coordinator_rebalance_protocols: tuple[str, ...] = ("classic", "consumer")
    group_consumer_heartbeat_interval_ms: int = 250  # Kafka: 5000; measured, see the docstring
    group_consumer_min_heartbeat_interval_ms: int = 50  # Kafka: 5000
    group_consumer_max_heartbeat_interval_ms: int = 15000
    group_consumer_session_timeout_ms: int = 45000
    group_consumer_min_session_timeout_ms: int = 45000
    group_consumer_max_session_timeout_ms: int = 60000
    group_consumer_assignors: tuple[str, ...] = ("uniform", "range")
    group_consumer_max_size: int = INT32_MAX
    group_consumer_regex_refresh_interval_ms: int = 600_000
    group_consumer_regex_min_refresh_interval_ms: int = 0  # Kafka: 10000; see the docstring
    group_consumer_migration_policy: str = "bidirectional"  # Kafka 4.x's default

    @property
    def migration_upgrade_enabled(self) -> bool:
        return self.group_consumer_migration_policy in ("upgrade", "bidirectional")

    @property
    def migration_downgrade_enabled(self) -> bool:
        return self.group_consumer_migration_policy in ("downgrade", "bidirectional")

    # Share groups (KIP-932): group.share.* and the share.version feature (share/config.py).
    share: ShareGroupConfig = attrs.field(factory=ShareGroupConfig)

    KAFKA_NAMES: ClassVar[frozenset[str]] = frozenset(
        [*_KAFKA_FIELDS, *_KAFKA_LISTS, "group.consumer.migration.policy",
         *ShareGroupConfig.KAFKA_NAMES])

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60_000

    @classmethod
    def from_kafka(cls, settings: Mapping[str, Any], **overrides: Any) -> "CoordinatorConfig":
        """Build from Kafka broker names, e.g. ``{"group.initial.rebalance.delay.ms": "3000"}``.

        Raises ValueError with a one-line message for an unknown name or a bad value.
        """
        kwargs: dict[str, Any] = dict(overrides)
        share = {n: v for n, v in settings.items() if ShareGroupConfig.handles(n)}
        if share:
            kwargs["share"] = ShareGroupConfig.from_kafka(share)
        for name, raw in settings.items():
            if ShareGroupConfig.handles(name):
                continue
            if name in _KAFKA_LISTS or name == "group.consumer.migration.policy":
                kwargs.update(_parse_text_config(name, raw))
                continue
            if name not in _KAFKA_FIELDS:
                known = ", ".join(sorted(cls.KAFKA_NAMES))
                raise ValueError(f"unknown coordinator config {name!r} (known: {known})")
            attr, minimum = _KAFKA_FIELDS[name]
            try:
                value = int(str(raw).strip())
            except ValueError:
                raise ValueError(f"config {name}: expected an integer, got {raw!r}") from None
            if value < minimum:
                raise ValueError(f"config {name}: value {value} is below the minimum {minimum}")
            kwargs[attr] = value
        config = cls(**kwargs)
        if config.group_min_session_timeout_ms > config.group_max_session_timeout_ms:
            raise ValueError(
                "config group.min.session.timeout.ms "
                f"({config.group_min_session_timeout_ms}) exceeds group.max.session.timeout.ms "
                f"({config.group_max_session_timeout_ms})"
            )
        _check_consumer_group_config(config)
        return config


def _parse_text_config(name: str, raw: Any) -> dict[str, Any]:
    if name == "group.consumer.migration.policy":
        value = str(raw).strip().lower()
        if value not in _MIGRATION_POLICIES:
            raise ValueError(f"config {name}: expected one of disabled, downgrade, upgrade, "
                             f"bidirectional, got {raw!r}")
        return {"group_consumer_migration_policy": value}
    attr, allowed = _KAFKA_LISTS[name]
    items = raw if isinstance(raw, (list, tuple)) else str(raw).split(",")
    values = []
    for item in items:
        item = str(item).strip()
        if not item:
            continue
        item = _ASSIGNOR_CLASSES.get(item, item) if attr == "group_consumer_assignors" else item.lower()
        if item not in allowed:
            raise ValueError(f"config {name}: unknown value {item!r} (known: {', '.join(allowed)})")
        if item not in values:
            values.append(item)
    if not values:
        raise ValueError(f"config {name}: needs at least one value")
    if attr == "group_coordinator_rebalance_protocols" and "classic" not in values:
        raise ValueError(f"config {name}: must contain 'classic' (as Kafka requires)")
    return {attr: tuple(values)}


def _check_consumer_group_config(config: "CoordinatorConfig") -> None:
    """The cross-checks of Kafka's GroupCoordinatorConfig for the consumer group settings."""
    for what in ("session_timeout", "heartbeat_interval"):
        low = getattr(config, f"group_consumer_min_{what}_ms")
        value = getattr(config, f"group_consumer_{what}_ms")
        high = getattr(config, f"group_consumer_max_{what}_ms")
        name = "group.consumer." + what.replace("_", ".") + ".ms"
        if not low <= value <= high:
            raise ValueError(f"config {name} ({value}) must be between its min ({low}) and "
                             f"max ({high})")
    if config.group_consumer_heartbeat_interval_ms >= config.group_consumer_session_timeout_ms:
        raise ValueError("config group.consumer.heartbeat.interval.ms must be less than "
                         "group.consumer.session.timeout.ms")
