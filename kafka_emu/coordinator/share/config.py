"""Share group settings under Kafka 4.2's broker config names (GroupCoordinatorConfig's
group.share.* and ShareGroupConfig), and the feature that turns share groups on.

Share groups are on when the ``share.version`` feature is finalized at 1 or more (Kafka 4.2's
ShareVersion.SV_1, the latest production level: a newly formatted 4.2 cluster gets it; the
internal ``group.share.enable`` forces them on too). kafka-emu has no feature tool, so the level
is a start-up setting, ``emu.share.version`` (default 1; 0 turns share groups off: their APIs
answer UNSUPPORTED_VERSION and ApiVersions finalizes no share.version).
``group.coordinator.rebalance.protocols`` no longer governs share groups in 4.2 (it accepts
``share`` and ignores it for this purpose).

Defaults and validators are Kafka's (``between``/``atLeast``), with one exception chosen as the
consumer protocol's was (coordinator/config.py): ``group.share.heartbeat.interval.ms`` is 250 ms
(Kafka: 5000) and its minimum 50 (Kafka: 5000), because a share consumer learns its assignment only
from its next heartbeat; pass 5000 (with the minimum 5000) for Kafka's pace.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import attrs

INT32_MAX = 2**31 - 1

# Kafka name -> (attribute, minimum, maximum): ConfigDef's between(...) / atLeast(...)
_FIELDS: dict[str, tuple[str, int, int]] = {
    "group.share.max.size": ("max_size", 1, 1000),
    "group.share.session.timeout.ms": ("session_timeout_ms", 1, INT32_MAX),
    "group.share.min.session.timeout.ms": ("min_session_timeout_ms", 1, INT32_MAX),
    "group.share.max.session.timeout.ms": ("max_session_timeout_ms", 1, INT32_MAX),
    "group.share.heartbeat.interval.ms": ("heartbeat_interval_ms", 1, INT32_MAX),
    "group.share.min.heartbeat.interval.ms": ("min_heartbeat_interval_ms", 1, INT32_MAX),
    "group.share.max.heartbeat.interval.ms": ("max_heartbeat_interval_ms", 1, INT32_MAX),
    "group.share.record.lock.duration.ms": ("record_lock_duration_ms", 1000, 3_600_000),
    "group.share.min.record.lock.duration.ms": ("min_record_lock_duration_ms", 1000, 30_000),
    "group.share.max.record.lock.duration.ms": ("max_record_lock_duration_ms", 30_000, 3_600_000),
    "group.share.delivery.count.limit": ("delivery_count_limit", 2, 10),
    "group.share.min.delivery.count.limit": ("min_delivery_count_limit", 2, 5),
    "group.share.max.delivery.count.limit": ("max_delivery_count_limit", 5, 25),
    "group.share.partition.max.record.locks": ("partition_max_record_locks", 100, 10_000),
    "group.share.max.share.sessions": ("max_share_sessions", 1, INT32_MAX),
    "emu.share.version": ("share_version", 0, 1),
}
_ASSIGNORS = {"simple": "simple",
              "org.apache.kafka.coordinator.group.assignor.SimpleAssignor": "simple"}
# Kafka's default of each name whose kafka-emu default differs (see the module doc)
KAFKA_DEFAULTS: dict[str, str] = {
    "group.share.heartbeat.interval.ms": "5000",
    "group.share.min.heartbeat.interval.ms": "5000",
}


@attrs.frozen(kw_only=True)
class ShareGroupConfig:
    max_size: int = 200
    session_timeout_ms: int = 45000
    min_session_timeout_ms: int = 45000
    max_session_timeout_ms: int = 60000
    heartbeat_interval_ms: int = 250  # Kafka: 5000; see the docstring
    min_heartbeat_interval_ms: int = 50  # Kafka: 5000
    max_heartbeat_interval_ms: int = 15000
    record_lock_duration_ms: int = 30000
    min_record_lock_duration_ms: int = 15000
    max_record_lock_duration_ms: int = 60000
    delivery_count_limit: int = 5
    min_delivery_count_limit: int = 2
    max_delivery_count_limit: int = 10
    partition_max_record_locks: int = 2000
    max_share_sessions: int = 2000
    assignor: str = "simple"  # group.share.assignors: one entry, used by every group
    share_version: int = 1  # the finalized share.version feature level (emu.share.version)
    force_enable: bool = False  # group.share.enable (Kafka's internal switch)

    KAFKA_NAMES: ClassVar[frozenset[str]] = frozenset(
        [*_FIELDS, "group.share.assignors", "group.share.enable"])

    @property
    def enabled(self) -> bool:
        """Kafka's isShareGroupProtocolEnabled: share.version >= 1 or group.share.enable."""
        return self.share_version >= 1 or self.force_enable

    @classmethod
    def handles(cls, name: str) -> bool:
        return name in cls.KAFKA_NAMES

    @classmethod
    def from_kafka(cls, settings: Mapping[str, Any]) -> "ShareGroupConfig":
        """From Kafka names; ValueError, one line, for a bad value or a broken cross-check."""
        kwargs: dict[str, Any] = {}
        for name, raw in settings.items():
            text = str(raw).strip()
            if name == "group.share.enable":
                if text.lower() not in ("true", "false"):
                    raise ValueError(f"config {name}: expected true or false, got {raw!r}")
                kwargs["force_enable"] = text.lower() == "true"
                continue
            if name == "group.share.assignors":
                items = [i.strip() for i in text.split(",") if i.strip()]
                if len(items) != 1 or items[0] not in _ASSIGNORS:
                    raise ValueError(f"config {name}: must be exactly one of: simple, got {raw!r}")
                kwargs["assignor"] = _ASSIGNORS[items[0]]
                continue
            attr, low, high = _FIELDS[name]
            try:
                value = int(text)
            except ValueError:
                raise ValueError(f"config {name}: expected an integer, got {raw!r}") from None
            if not low <= value <= high:
                raise ValueError(f"config {name}: value {value} must be in [{low}, {high}]")
            kwargs[attr] = value
        config = cls(**kwargs)
        config.check()
        return config

    def check(self) -> None:
        """The cross-checks of Kafka's GroupCoordinatorConfig and ShareGroupConfig.validate."""
        for what, name in (("session_timeout", "session.timeout"),
                           ("heartbeat_interval", "heartbeat.interval"),
                           ("record_lock_duration", "record.lock.duration"),
                           ("delivery_count_limit", "delivery.count.limit")):
            suffix = "" if what == "delivery_count_limit" else "_ms"
            unit = "" if what == "delivery_count_limit" else ".ms"
            low = getattr(self, f"min_{what}{suffix}")
            value = getattr(self, f"{what}{suffix}")
            high = getattr(self, f"max_{what}{suffix}")
            if not low <= value <= high:
                raise ValueError(f"config group.share.{name}{unit} ({value}) must be between "
                                 f"group.share.min.{name}{unit} ({low}) and "
                                 f"group.share.max.{name}{unit} ({high})")
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError("config group.share.heartbeat.interval.ms must be less than "
                             "group.share.session.timeout.ms")
        if self.max_share_sessions < self.max_size:
            raise ValueError("config group.share.max.share.sessions must be greater than or "
                             "equal to group.share.max.size")

    def kafka_values(self) -> dict[str, str]:
        values = {name: str(getattr(self, attr)) for name, (attr, _, _) in _FIELDS.items()}
        values["group.share.assignors"] = self.assignor
        values["group.share.enable"] = str(self.force_enable).lower()
        return values


@attrs.frozen(kw_only=True)
class ShareSettings:
    """A share group's effective configs: its group configs (IncrementalAlterConfigs, resource
    type GROUP) over the broker's group.share.* values. What SHARE-B's delivery state reads."""

    session_timeout_ms: int
    heartbeat_interval_ms: int
    record_lock_duration_ms: int
    delivery_count_limit: int
    partition_max_record_locks: int
    auto_offset_reset: str = "latest"  # "latest" | "earliest" | "by_duration:<ISO-8601>"
    isolation_level: str = "read_uncommitted"  # | "read_committed"
