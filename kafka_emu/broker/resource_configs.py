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
- GROUP (32): Kafka 4.x's group-level configs (GroupConfig), stored per group and validated as
  GroupConfig validates them: a known name, an int, each within the broker's min/max
  (group.consumer.min/max.*), the session above the heartbeat interval -- the overrides merged
  over the broker's values first, as GroupConfigManager.validate does. A consumer group's
  coordinator applies its consumer.session.timeout.ms and consumer.heartbeat.interval.ms from the
  member's next heartbeat on (``consumer_timing``); a share group's coordinator likewise its
  share.session.timeout.ms and share.heartbeat.interval.ms (``share_timing``), and the
  share-partitions read the rest through ``share_settings(group_id)``. DescribeConfigs lists every group config with
  its effective value, GROUP_CONFIG where the group sets it, else DEFAULT_CONFIG with the broker's
  value (ConfigHelper.createGroupConfigEntry: one synonym, the entry itself).
Kafka's own answers for what it refuses are kept: an unknown resource type is INVALID_REQUEST
"Unsupported resource type", a broker id other than ours INVALID_REQUEST, a missing topic
UNKNOWN_TOPIC_OR_PARTITION (ConfigHelper.describeConfigs, ConfigAdminManager).
"""

from __future__ import annotations

import enum
import re
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

# Kafka 4.2 group-level configs (GroupConfig), in its definition order -> (type, the broker config
# that is its default (a CoordinatorConfig attribute path), that config's own default when
# kafka-emu has no such setting). The consumer ones act in the consumer coordinator, the share
# ones in the share coordinator (session, heartbeat) and the share-partitions (the rest).
GROUP_CONFIGS: dict[str, tuple[ConfigType, str | None, str]] = {
    "consumer.session.timeout.ms": (ConfigType.INT, "group.consumer.session.timeout.ms", ""),
    "consumer.heartbeat.interval.ms": (ConfigType.INT, "group.consumer.heartbeat.interval.ms", ""),
    "share.session.timeout.ms": (ConfigType.INT, "share.session_timeout_ms", ""),
    "share.heartbeat.interval.ms": (ConfigType.INT, "share.heartbeat_interval_ms", ""),
    "share.record.lock.duration.ms": (ConfigType.INT, "share.record_lock_duration_ms", ""),
    "share.delivery.count.limit": (ConfigType.INT, "share.delivery_count_limit", ""),
    "share.auto.offset.reset": (ConfigType.STRING, None, "latest"),
    "share.isolation.level": (ConfigType.STRING, None, "read_uncommitted"),
}
# GroupConfig's atLeast(...) per INT config (1 where not listed)
_AT_LEAST = {"share.record.lock.duration.ms": 1000, "share.delivery.count.limit": 2}
_SHARE_ISOLATION_LEVELS = ("read_committed", "read_uncommitted")
# ShareGroupAutoOffsetResetStrategy: earliest, latest, by_duration:<ISO-8601 duration, not negative>
_BY_DURATION = re.compile(
    r"by_duration:P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?"
    r"(?:(\d+(?:\.\d+)?)S)?)?\Z", re.IGNORECASE)


def _share_bounds(share) -> dict[str, tuple[str, int, str, int]]:
    """GroupConfig.validateValues' share bounds: the broker's group.share.min/max.* values."""
    return {
        "share.heartbeat.interval.ms": (
            "group.share.min.heartbeat.interval.ms", share.min_heartbeat_interval_ms,
            "group.share.max.heartbeat.interval.ms", share.max_heartbeat_interval_ms),
        "share.session.timeout.ms": (
            "group.share.min.session.timeout.ms", share.min_session_timeout_ms,
            "group.share.max.session.timeout.ms", share.max_session_timeout_ms),
        "share.record.lock.duration.ms": (
            "group.share.min.record.lock.duration.ms", share.min_record_lock_duration_ms,
            "group.share.max.record.lock.duration.ms", share.max_record_lock_duration_ms),
        "share.delivery.count.limit": (
            "group.share.min.delivery.count.limit", share.min_delivery_count_limit,
            "group.share.max.delivery.count.limit", share.max_delivery_count_limit),
    }


def _offset_reset_ok(text: str) -> bool:
    low = text.lower()
    if low in ("earliest", "latest"):
        return True
    match = _BY_DURATION.match(text)
    return bool(match) and text.upper() != "BY_DURATION:P" and not text.upper().endswith("T")
_INT = re.compile(r"[+-]?[0-9]+\Z")


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


def is_sensitive(name: str) -> bool:
    from ..security.config import is_sensitive as sensitive
    return sensitive(name)


class ResourceConfigs:
    """The config view of one broker: topics (through the catalogue), the broker, groups."""

    def __init__(self, broker) -> None:
        self.broker = broker
        self.group_overrides: dict[str, dict[str, str]] = {}
        # group id -> (consumer.session.timeout.ms, consumer.heartbeat.interval.ms) it sets, None
        # for one it leaves to the broker: read by every ConsumerGroupHeartbeat, so parsed once
        self.consumer_timing: dict[str, tuple[int | None, int | None]] = {}
        # the same for share groups: (share.session.timeout.ms, share.heartbeat.interval.ms)
        self.share_timing: dict[str, tuple[int | None, int | None]] = {}

    # -- describing -------------------------------------------------------------------------
    def broker_settings(self) -> dict[str, str]:
        """Broker config name -> value for the names kafka-emu was started with (static)."""
        return dict(self.broker.config.explicit_settings)

    def describe(self, resource_type: int, name: str, keys: list[str] | None) -> list[ConfigEntry]:
        if resource_type == ResourceType.TOPIC:
            return _pick(self._topic_entries(name), keys)
        if resource_type == ResourceType.BROKER:
            self._check_broker(name)
            if not name:  # the cluster-wide default: only dynamic defaults, never set here
                return []
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
        """ConfigHelper's broker-id checks: empty is the cluster-wide default resource (BROKER)
        or refused (BROKER_LOGGER); otherwise an integer (Integer.parseInt: no blanks) that
        names this broker -- in a cluster every broker shares one configuration, so any."""
        node_id = self.broker.config.node_id
        if not name and allow_empty:
            return
        if not name:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
        if not _INT.match(name) or not -2**31 <= int(name) < 2**31:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Broker id must be an integer, but it is: {name}")
        if int(name) != node_id and not (self.broker.cluster.multi
                                         and int(name) in self.broker.cluster.nodes):
            expected = f"{node_id} or empty string," if allow_empty else str(node_id)
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Unexpected broker id, expected {expected} but received {name}")

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
        """Kafka's names only (broker_config_types.py), with Kafka's types; always
        advertised.listeners (null until configured, as Kafka's default) and
        min.insync.replicas, which Kafka lists for every broker."""
        from .broker_config_types import INTERNAL, broker_config_type
        settings = self.broker_settings()
        values = self.broker.config.kafka_values()
        values.setdefault("advertised.listeners", None)
        values.setdefault("min.insync.replicas", "1")
        entries = []
        for name, value in sorted(values.items()):
            type_ = broker_config_type(name)
            if type_ is None or (name in INTERNAL and name not in settings):
                continue
            source = (ConfigSource.STATIC_BROKER_CONFIG if name in settings
                      else ConfigSource.DEFAULT_CONFIG)
            sensitive = type_ is ConfigType.PASSWORD or is_sensitive(name)
            shown = None if sensitive else value  # a password: no value, as Kafka
            entries.append(ConfigEntry(name=name, value=shown, source=source,
                                       type=ConfigType.PASSWORD if sensitive else type_,
                                       read_only=True, sensitive=sensitive,
                                       synonyms=(Synonym(name=name, value=shown, source=source),)))
        return entries

    def group_defaults(self) -> dict[str, str]:
        """Every group config's value where a group does not set it: the broker's (for the
        consumer ones, kafka-emu's group.consumer.* settings in force)."""
        coordinator = self.broker.config.coordinator
        return {name: str(_broker_value(coordinator, synonym)) if synonym else default
                for name, (_, synonym, default) in GROUP_CONFIGS.items()}

    def share_settings(self, group_id: str):
        """A share group's effective configs: its overrides over the broker's group.share.*."""
        from ..coordinator.share.config import ShareSettings
        values = {**self.group_defaults(), **self.group_overrides.get(group_id, {})}
        share = self.broker.config.coordinator.share
        return ShareSettings(
            session_timeout_ms=int(values["share.session.timeout.ms"]),
            heartbeat_interval_ms=int(values["share.heartbeat.interval.ms"]),
            record_lock_duration_ms=int(values["share.record.lock.duration.ms"]),
            delivery_count_limit=int(values["share.delivery.count.limit"]),
            partition_max_record_locks=share.partition_max_record_locks,
            auto_offset_reset=values["share.auto.offset.reset"].lower(),
            isolation_level=values["share.isolation.level"].lower())

    def _group_entries(self, group_id: str) -> list[ConfigEntry]:
        overrides = self.group_overrides.get(group_id, {})
        entries = []
        for name, value in sorted(self.group_defaults().items()):
            source = ConfigSource.DEFAULT_CONFIG
            if name in overrides:
                value, source = overrides[name], ConfigSource.GROUP_CONFIG
            entries.append(ConfigEntry(name=name, value=value, source=source,
                                       type=GROUP_CONFIGS[name][0],
                                       synonyms=(Synonym(name=name, value=value, source=source),)))
        return entries

    # -- altering ---------------------------------------------------------------------------
    def current_overrides(self, resource_type: int, name: str) -> dict[str, str]:
        if resource_type == ResourceType.TOPIC:
            # a missing topic has no overrides: its absence is reported after the new configs
            # are validated, as ConfigurationControlManager.validateAlterConfig does
            validate_topic_name(name)
            topic = self.broker.topics.catalogue.get(name)
            return {} if topic is None else dict(topic.configs)
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
        defaults = (TOPIC_DEFAULTS if resource_type == ResourceType.TOPIC
                    else {n: (d, t, None) for n, (t, _, d) in GROUP_CONFIGS.items()})
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
                    # ConfigurationControlManager (topics and groups go to the controller)
                    raise KafkaError(ErrorCode.INVALID_CONFIG,
                                     f"Can't {AlterOp(op).name} to key {config} because its "
                                     "type is not LIST.")
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
            validate_topic_name(name)
            catalogue = self.broker.topics.catalogue
            if all(n in TOPIC_DEFAULTS and v is not None for n, v in overrides.items()):
                check_types(overrides, TOPIC_DEFAULTS)  # after names and nulls, as LogConfig
            catalogue.default_config.with_overrides(overrides)  # names, nulls, ranges
            if catalogue.get(name) is None:  # QuorumController's existence check comes last
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                 f"The topic '{name}' does not exist.")
            catalogue.set_topic_configs(name, overrides, validate_only=validate_only)
        elif resource_type == ResourceType.GROUP:
            checked = _validate_group(overrides, self.group_defaults(),
                                      self.broker.config.coordinator)
            if not validate_only:
                self.group_overrides[name] = checked
                session = checked.get("consumer.session.timeout.ms")
                interval = checked.get("consumer.heartbeat.interval.ms")
                if session is None and interval is None:
                    self.consumer_timing.pop(name, None)
                else:
                    self.consumer_timing[name] = (None if session is None else int(session),
                                                  None if interval is None else int(interval))
                session = checked.get("share.session.timeout.ms")
                interval = checked.get("share.heartbeat.interval.ms")
                if session is None and interval is None:
                    self.share_timing.pop(name, None)
                else:
                    self.share_timing[name] = (None if session is None else int(session),
                                               None if interval is None else int(interval))
        elif resource_type == ResourceType.BROKER:
            if overrides:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "kafka-emu does not change broker "
                                 f"configs at run time: {', '.join(sorted(overrides))}")
        else:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Unsupported resource type: {_type_name(resource_type)}")


# Java's number syntax for ConfigDef.parseType (Integer.parseInt etc. on the trimmed text)
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)"
                          r"[fFdD]?\Z")
_INTEGER_BITS = {ConfigType.SHORT: 16, ConfigType.INT: 32, ConfigType.LONG: 64}


def check_types(overrides: Mapping[str, str | None],
                table: Mapping[str, tuple[str, ConfigType, str | None]]) -> None:
    """ConfigDef.parseType's checks of each value against its config's type, with its
    ConfigException message (INVALID_CONFIG); ranges and enumerations are not checked here."""
    for name, value in overrides.items():
        known = table.get(name)
        if known is None or value is None:
            continue
        type_, text = known[1], value.strip()
        bits = _INTEGER_BITS.get(type_)
        if bits is not None:
            if not _JAVA_INTEGER.match(text) or not -(1 << bits - 1) <= int(text) < 1 << bits - 1:
                raise _config_error(name, value, f"Not a number of type {type_.name}")
        elif type_ is ConfigType.DOUBLE and not _JAVA_DOUBLE.match(text):
            raise _config_error(name, value, "Not a number of type DOUBLE")
        elif type_ is ConfigType.BOOLEAN and text.lower() not in ("true", "false"):
            raise _config_error(name, value, "Expected value to be either true or false")


def _validate_group(overrides: Mapping[str, str | None], defaults: Mapping[str, str],
                    coordinator) -> dict[str, str]:
    """Kafka's checks, in its order: null values (ControllerConfigurationValidator), names
    (GroupConfig.validateNames), each value parsed in definition order (ConfigDef.parse), then
    the bounds (GroupConfig.validateValues) on the overrides merged over the broker's values."""
    nulls = [name for name, value in overrides.items() if value is None]
    if nulls:
        raise KafkaError(ErrorCode.INVALID_CONFIG,
                         f"Null value not supported for group configs: {','.join(nulls)}")
    for name in overrides:
        if name not in GROUP_CONFIGS:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
    merged = {**defaults, **overrides}
    values: dict[str, int] = {}
    texts: dict[str, str] = {}
    for name, (type_, _, _) in GROUP_CONFIGS.items():
        raw = str(merged[name])
        if type_ is ConfigType.INT:
            text = raw.strip()
            number = int(text) if _INT.match(text) else None
            if number is None or not -2**31 <= number < 2**31:
                raise _config_error(name, raw, "Not a number of type INT")
            least = _AT_LEAST.get(name, 1)
            if number < least:
                raise _config_error(name, str(number), f"Value must be at least {least}")
            values[name] = number
        elif name == "share.isolation.level":
            if raw.strip() not in _SHARE_ISOLATION_LEVELS:
                raise _config_error(name, raw,
                                    f"String must be one of: {', '.join(_SHARE_ISOLATION_LEVELS)}")
            texts[name] = raw.strip()
        else:  # share.auto.offset.reset (ShareGroupAutoOffsetResetStrategy.Validator)
            if not _offset_reset_ok(raw.strip()):
                raise _config_error(name, raw, "Invalid value for share.auto.offset.reset; "
                                    "expected earliest, latest or by_duration:<ISO-8601 duration>")
            texts[name] = raw.strip()
    bounds = {
        "consumer.heartbeat.interval.ms": (
            "group.consumer.min.heartbeat.interval.ms",
            coordinator.group_consumer_min_heartbeat_interval_ms,
            "group.consumer.max.heartbeat.interval.ms",
            coordinator.group_consumer_max_heartbeat_interval_ms),
        "consumer.session.timeout.ms": (
            "group.consumer.min.session.timeout.ms",
            coordinator.group_consumer_min_session_timeout_ms,
            "group.consumer.max.session.timeout.ms",
            coordinator.group_consumer_max_session_timeout_ms),
        **_share_bounds(coordinator.share)}
    order = ("consumer.heartbeat.interval.ms", "consumer.session.timeout.ms",
             "share.heartbeat.interval.ms", "share.session.timeout.ms",
             "share.record.lock.duration.ms", "share.delivery.count.limit")
    for name in order:
        low_name, low, high_name, high = bounds[name]
        if values[name] < low:
            raise KafkaError(ErrorCode.INVALID_CONFIG,
                             f"{name} must be greater than or equal to {low_name}")
        if values[name] > high:
            raise KafkaError(ErrorCode.INVALID_CONFIG,
                             f"{name} must be less than or equal to {high_name}")
    for kind in ("consumer", "share"):
        if values[f"{kind}.session.timeout.ms"] <= values[f"{kind}.heartbeat.interval.ms"]:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"{kind}.session.timeout.ms must be "
                             f"greater than {kind}.heartbeat.interval.ms")
    # stored as Kafka describes them: the parsed value written back (" 500" is "500")
    return {name: str(values[name]) if name in values else texts[name] for name in overrides}


def _broker_value(coordinator, synonym: str):
    """A group config's broker default: group.consumer.x.y (CoordinatorConfig's attribute
    group_consumer_x_y) or share.attr (CoordinatorConfig.share's)."""
    if synonym.startswith("share."):
        return getattr(coordinator.share, synonym[len("share."):])
    return getattr(coordinator, synonym.replace(".", "_"))


def _config_error(name: str, value: str, why: str) -> KafkaError:
    # ConfigDef's ConfigException, answered INVALID_CONFIG with its message
    return KafkaError(ErrorCode.INVALID_CONFIG,
                      f"Invalid value {value} for configuration {name}: {why}")


def _type_name(resource_type: int) -> str:
    try:
        return ResourceType(resource_type).name
    except ValueError:
        return "UNKNOWN"
