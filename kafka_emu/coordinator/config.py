"""Coordinator configuration under Kafka's broker config names (reference section 6).

Defaults are Kafka's except ``group.initial.rebalance.delay.ms``, which is 0 in kafka-emu so a test
suite's first rebalance does not sit idle for three seconds; pass 3000 to get Kafka's behaviour.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import attrs

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
}


@attrs.frozen(kw_only=True)
class CoordinatorConfig:
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 0
    group_max_size: int = INT32_MAX
    offsets_retention_minutes: int = 7 * 24 * 60
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    # Not a broker config in Kafka (a constant in GroupCoordinatorConfig, 3.7); exposed here only
    # so tests can shorten it. from_kafka does not accept it.
    new_member_join_timeout_ms: int = 300_000

    KAFKA_NAMES: ClassVar[frozenset[str]] = frozenset(_KAFKA_FIELDS)

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60_000

    @classmethod
    def from_kafka(cls, settings: Mapping[str, Any], **overrides: Any) -> "CoordinatorConfig":
        """Build from Kafka broker names, e.g. ``{"group.initial.rebalance.delay.ms": "3000"}``.

        Raises ValueError with a one-line message for an unknown name or a bad value.
        """
        kwargs: dict[str, Any] = dict(overrides)
        for name, raw in settings.items():
            if name not in _KAFKA_FIELDS:
                known = ", ".join(sorted(_KAFKA_FIELDS))
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
        return config
