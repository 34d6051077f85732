"""Configs as DescribeConfigs, AlterConfigs and IncrementalAlterConfigs see them.

Theory of operation. Three kinds of resource carry configs here, as in Kafka (ConfigResource):
- TOPIC (2): every topic-level name Kafka defines (``log.config.TOPIC_CONFIG_NAMES``), its value
  the topic's override (source DYNAMIC_TOPIC_CONFIG) or else the broker's value for its synonym
  (STATIC_BROKER_CONFIG when kafka-emu was started with it, e.g. ``log.retention.bytes``) or
  Kafka's default (DEFAULT_CONFIG). Overrides are validated and applied by the topic catalogue,
  so the data path (retention.ms and .bytes, max.message.bytes, cleanup.policy, timestamp type)
  follows.
- BROKER (4): the broker configs kafka-emu knows, with their current values; read-only, since
  kafka-emu does not change broker configs at run time (a listed difference).
- GROUP (32): Kafka 4.x's group-level overrides (consumer session/heartbeat), stored per group.
Kafka's own answers for what it refuses are kept: an unknown resource type is INVALID_REQUEST
"Unsupported resource type", a broker id other than ours INVALID_REQUEST, a missing topic
UNKNOWN_TOPIC_OR_PARTITION (ConfigHelper.describeConfigs, ConfigAdminManager).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

import attrs

from ..errors import ErrorCode, KafkaError
from ..log.catalogue import validate_topic_name
from ..log.config import TOPIC_CONFIG_NAMES


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigSource(enum.IntEnum):
    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ConfigType(enum.IntEnum):  # DescribeConfigs v3+ ConfigType (ConfigDef.Type)
    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class AlterOp(enum.IntEnum):  # IncrementalAlterConfigs ConfigOperation (KIP-339)
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


_MAX_LONG = str(2**63 - 1)

# Topic config -> (Kafka's default, type, the broker config that is its synonym). Kafka 4.x.
TOPIC_DEFAULTS: dict[str, tuple[str, ConfigType, str | None]] = {
    "cleanup.policy": ("delete", ConfigType.LIST, "log.cleanup.policy"),
    "compression.gzip.level": ("-1", ConfigType.INT, "compression.gzip.level"),
    "compression.lz4.level": ("9", ConfigType.INT, "compression.lz4.level"),
    "compression.type": ("producer", ConfigType.STRING, "compression.type"),
    "compression.zstd.level": ("3", ConfigType.INT, "compression.zstd.level"),
    "delete.retention.ms": ("86400000", ConfigType.LONG, "log.cleaner.delete.retention.ms"),
    "file.delete.delay.ms": ("60000", ConfigType.LONG, "log.segment.delete.delay.ms"),
    "flush.messages": (_MAX_LONG, ConfigType.LONG, "log.flush.interval.messages"),
    "flush.ms": (_MAX_LONG, ConfigType.LONG, "log.flush.interval.ms"),
    "follower.replication.throttled.replicas": ("", ConfigType.LIST, None),
    "index.interval.bytes": ("4096", ConfigType.INT, "log.index.interval.bytes"),
    "leader.replication.throttled.replicas": ("", ConfigType.LIST, None),
    "local.retention.bytes": ("-2", ConfigType.LONG, "log.local.retention.bytes"),
    "local.retention.ms": ("-2", ConfigType.LONG, "log.local.retention.ms"),
    "max.compaction.lag.ms": (_MAX_LONG, ConfigType.LONG, "log.cleaner.max.compaction.lag.ms"),
    "max.message.bytes": ("1048588", ConfigType.INT, "message.max.bytes"),
    "message.downconversion.enable": ("true", ConfigType.BOOLEAN, None),
    "message.format.version": ("3.0-IV1", ConfigType.STRING, "log.message.format.version"),
    "message.timestamp.after.max.ms": ("3600000", ConfigType.LONG,
                                       "log.message.timestamp.after.max.ms"),
    "message.timestamp.before.max.ms": (_MAX_LONG, ConfigType.LONG,
                                        "log.message.timestamp.before.max.ms"),
    "message.timestamp.difference.max.ms": (_MAX_LONG, ConfigType.LONG,
                                            "log.message.timestamp.difference.max.ms"),
    "message.timestamp.type": ("CreateTime", ConfigType.STRING, "log.message.timestamp.type"),
    "min.cleanable.dirty.ratio": ("0.5", ConfigType.DOUBLE, "log.cleaner.min.cleanable.ratio"),
    "min.compaction.lag.ms": ("0", ConfigType.LONG, "log.cleaner.min.compaction.lag.ms"),
    "min.insync.replicas": ("1", ConfigType.INT, "min.insync.replicas"),
    "preallocate": ("false", ConfigType.BOOLEAN, "log.preallocate"),
    "remote.log.copy.disable": ("false", ConfigType.BOOLEAN, None),
    "remote.log.delete.on.disable": ("false", ConfigType.BOOLEAN, None),
    "remote.storage.enable": ("false", ConfigType.BOOLEAN, None),
    "retention.bytes": ("-1", ConfigType.LONG, "log.retention.bytes"),
    "retention.ms": ("604800000", ConfigType.LONG, "log.retention.ms"),
    "segment.bytes": ("1073741824", ConfigType.INT, "log.segment.bytes"),
    "segment.index.bytes": ("10485760", ConfigType.INT, "log.index.size.max.bytes"),
    "segment.jitter.ms": ("0", ConfigType.LONG, "log.roll.jitter.ms"),
    "segment.ms": ("604800000", ConfigType.LONG, "log.roll.ms"),
    "unclean.leader.election.enable": ("false", ConfigType.BOOLEAN,
                                       "unclean.leader.election.enable"),
}
assert set(TOPIC_DEFAULTS) == set(TOPIC_CONFIG_NAMES), "one table of topic config names"

# Kafka 4.x group-level configs (GroupConfig) -> (default, type, broker synonym).
GROUP_DEFAULTS: dict[str, tuple[str, ConfigType, str | None]] = {
    "consumer.session.timeout.ms": ("45000", ConfigType.INT, "group.consumer.session.timeout.ms"),
    "consumer.heartbeat.interval.ms": ("5000", ConfigType.INT,
                                       "group.consumer.heartbeat.interval.ms"),
    "share.session.timeout.ms": ("45000", ConfigType.INT, "group.share.session.timeout.ms"),
    "share.heartbeat.interval.ms": ("5000", ConfigType.INT, "group.share.heartbeat.interval.ms"),
    "share.record.lock.duration.ms": ("30000", ConfigType.INT,
                                      "group.share.record.lock.duration.ms"),
    "share.auto.offset.reset": ("latest", ConfigType.STRING, None),
}


@attrs.frozen(kw_only=True)
class Synonym:
    name: str
    value: str | None
    source: ConfigSource


@attrs.frozen(kw_only=True)
class ConfigEntry:
    name: str
    value: str | None
    source: ConfigSource
    type: ConfigType
    read_only: bool = False
    sensitive: bool = False
    synonyms: tuple[Synonym, ...] = ()

    @property
    def is_default(self) -> bool:
        return self.source is ConfigSource.DEFAULT_CONFIG


def _entry(name: str, override: str | None, default: str, type_: ConfigType,
           synonym: str | None, broker_settings: Mapping[str, str],
           override_source: ConfigSource) -> ConfigEntry:
    synonyms = []
    if override is not None:
        synonyms.append(Synonym(name=name, value=override, source=override_source))
    static = broker_settings.get(synonym) if synonym else None
    if static is not None:
        synonyms.append(Synonym(name=synonym, value=static, source=ConfigSource.STATIC_BROKER_CONFIG))
    synonyms.append(Synonym(name=synonym or name, value=default, source=ConfigSource.DEFAULT_CONFIG))
    first = synonyms[0]
    return ConfigEntry(name=name, value=first.value, source=first.source, type=type_,
                       synonyms=tuple(synonyms))


def _pick(entries: Iterable[ConfigEntry], keys: list[str] | None) -> list[ConfigEntry]:
    entries = list(entries)
    if not keys:  # null or empty: all of them (ConfigHelper)
        return entries
    wanted = set(keys)
    return [e for e in entries if e.name in wanted]


class ResourceConfigs:
    """The config view of one broker: topics (through the catalogue), the broker, groups."""

    def __init__(self, broker) -> None:
        self.broker = broker
        self.group_overrides: dict[str, dict[str, str]] = {}

    # -- describing -------------------------------------------------------------------------
    def broker_settings(self) -> dict[str, str]:
        """Broker config name -> value for the names kafka-emu was started with (static)."""
        return dict(self.broker.config.explicit_settings)

    def describe(self, resource_type: int, name: str, keys: list[str] | None) -> list[ConfigEntry]:
        if resource_type == ResourceType.TOPIC:
            return _pick(self._topic_entries(name), keys)
        if resource_type == ResourceType.BROKER:
            self._check_broker(name)
            return _pick(self._broker_entries(), keys)
        if resource_type == ResourceType.GROUP:
            if not name:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
            return _pick(self._group_entries(name), keys)
        if resource_type == ResourceType.BROKER_LOGGER:
            self._check_broker(name, allow_empty=False)
            return []
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {_type_name(resource_type)}")

    def _check_broker(self, name: str, *, allow_empty: bool = True) -> None:
        node_id = self.broker.config.node_id
        if not name and allow_empty:
            return
        if not name:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
        if name.strip() != str(node_id) and not (
                self.broker.cluster.multi
                and name.strip() in {str(n) for n in self.broker.cluster.nodes}):
            # in a cluster every broker shares one configuration, so any node id answers
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected {node_id} "
                             f"or empty string, but received {name}")

    def _topic(self, name: str):
        validate_topic_name(name)
        topic = self.broker.topics.catalogue.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return topic

    def _topic_entries(self, name: str) -> list[ConfigEntry]:
        topic = self._topic(name)
        settings = self.broker_settings()
        return [_entry(n, topic.configs.get(n), default, type_, synonym, settings,
                       ConfigSource.DYNAMIC_TOPIC_CONFIG)
                for n, (default, type_, synonym) in sorted(TOPIC_DEFAULTS.items())]

    def _broker_entries(self) -> list[ConfigEntry]:
        settings = self.broker_settings()
        entries = []
        for name, value in sorted(self.broker.config.kafka_values().items()):
            source = (ConfigSource.STATIC_BROKER_CONFIG if name in settings
                      else ConfigSource.DEFAULT_CONFIG)
            entries.append(ConfigEntry(name=name, value=value, source=source,
                                       type=ConfigType.STRING, read_only=True,
                                       synonyms=(Synonym(name=name, value=value, source=source),)))
        return entries

    def _group_entries(self, group_id: str) -> list[ConfigEntry]:
        overrides = self.group_overrides.get(group_id, {})
        settings = self.broker_settings()
        return [_entry(n, overrides.get(n), settings.get(synonym or "", default), type_, synonym,
                       {}, ConfigSource.GROUP_CONFIG)
                for n, (default, type_, synonym) in sorted(GROUP_DEFAULTS.items())]

    # -- altering ---------------------------------------------------------------------------
    def current_overrides(self, resource_type: int, name: str) -> dict[str, str]:
        if resource_type == ResourceType.TOPIC:
            return dict(self._topic(name).configs)
        if resource_type == ResourceType.GROUP:
            if not name:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
            return dict(self.group_overrides.get(name, {}))
        if resource_type == ResourceType.BROKER:
            self._check_broker(name)
            return {}
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {_type_name(resource_type)}")

    def incremental(self, resource_type: int, name: str,
                    ops: list[tuple[str, int, str | None]]) -> dict[str, str]:
        """The overrides after applying IncrementalAlterConfigs ``ops`` (nothing stored yet)."""
        current = self.current_overrides(resource_type, name)
        defaults = TOPIC_DEFAULTS if resource_type == ResourceType.TOPIC else GROUP_DEFAULTS
        seen: set[str] = set()
        for config, op, value in ops:
            if config in seen:
                raise KafkaError(ErrorCode.INVALID_REQUEST,
                                 f"Error due to duplicate config keys: {config}")
            seen.add(config)
            if op == AlterOp.SET:
                current[config] = value  # type: ignore[assignment]  # None is refused on apply
            elif op == AlterOp.DELETE:
                current.pop(config, None)
            elif op in (AlterOp.APPEND, AlterOp.SUBTRACT):
                known = defaults.get(config)
                if known is None or known[1] is not ConfigType.LIST:
                    verb = "append" if op == AlterOp.APPEND else "subtract"
                    raise KafkaError(ErrorCode.INVALID_CONFIG,
                                     f"Config value {verb} is not allowed for config key: {config}")
                items = [v for v in current.get(config, known[0]).split(",") if v]
                given = [v.strip() for v in (value or "").split(",") if v.strip()]
                if op == AlterOp.APPEND:
                    items += [v for v in given if v not in items]
                else:
                    items = [v for v in items if v not in given]
                current[config] = ",".join(items)
            else:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown operation type {op}")
        return current

    def replace(self, resource_type: int, name: str, overrides: Mapping[str, str | None],
                validate_only: bool) -> None:
        """Make ``overrides`` the resource's whole set of overrides (validated first)."""
        if resource_type == ResourceType.TOPIC:
            self._topic(name)
            self.broker.topics.catalogue.set_topic_configs(name, overrides,
                                                           validate_only=validate_only)
        elif resource_type == ResourceType.GROUP:
            checked = _validate_group(overrides)
            if not validate_only:
                self.group_overrides[name] = checked
        elif resource_type == ResourceType.BROKER:
            if overrides:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "kafka-emu does not change broker "
                                 f"configs at run time: {', '.join(sorted(overrides))}")
        else:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Unsupported resource type: {_type_name(resource_type)}")


def _validate_group(overrides: Mapping[str, str | None]) -> dict[str, str]:
    checked = {}
    for name, value in overrides.items():
        known = GROUP_DEFAULTS.get(name)
        if known is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
        if value is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Null value not supported for group configs: {name}")
        if known[1] is ConfigType.INT:
            try:
                int(value)
            except ValueError:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for "
                                 f"configuration {name}: Not a number of type INT") from None
        checked[name] = value
    return checked


def _type_name(resource_type: int) -> str:
    try:
        return ResourceType(resource_type).name
    except ValueError:
        return "UNKNOWN"
