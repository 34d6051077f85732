"""Broker configuration, with Kafka's broker config names and defaults.

``BrokerConfig.from_kafka({"num.partitions": "3", ...})`` is what the CLI's ``-c key=value`` and
the fixtures use. Group-coordinator settings are forwarded to ``CoordinatorConfig.from_kafka``;
a name neither knows, or a value that does not parse, raises ValueError with a one-line message.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import attrs

from ..coordinator import CoordinatorConfig
from ..frozen import lazy_dunders
from ..protocol import BY_NAME
from ..security.config import SecurityConfig

DEFAULT_PORT = 9092


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise ValueError(f"expected true or false, got {text!r}")


def _int(lo: int, hi: int = 2**63 - 1) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"expected an integer, got {text!r}") from None
        if not lo <= value <= hi:
            raise ValueError(f"{value} is outside [{lo}, {hi}]")
        return value
    return parse


def _caps(text: str) -> dict[str, int]:
    """"JoinGroup:4,Metadata:9" -> {"JoinGroup": 4, "Metadata": 9}."""
    caps: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, version = item.partition(":")
        if not sep:
            raise ValueError(f"expected ApiName:maxVersion, got {item!r}")
        name = name.strip()
        if name not in BY_NAME:  # a typo would otherwise cap nothing, silently
            raise ValueError(f"unknown API name {name!r} (API names as Kafka spells them, "
                             "e.g. JoinGroup, Metadata)")
        caps[name] = _int(-1, 32767)(version)
    return caps


def _clock(text: str) -> str:
    mode = text.strip().lower()
    if mode not in ("real", "manual"):
        raise ValueError(f"expected real or manual, got {text!r}")
    return mode


def _listener(text: str) -> tuple[str, int]:
    """advertised.listeners: take the first PLAINTEXT://host:port entry."""
    first = text.split(",")[0].strip()
    _, _, hostport = first.rpartition("://")
    host, sep, port = hostport.rpartition(":")
    if not sep:
        raise ValueError(f"expected NAME://host:port, got {text!r}")
    return host, _int(0, 65535)(port)


# authorizer.class.name: Kafka's KRaft authorizer turns ACLs on (kafka_emu/security/acls.py);
# no other authorizer can be loaded into the emulator
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

# Kafka's default of each name whose kafka-emu default differs (the others are Kafka's)
KAFKA_DEFAULTS: dict[str, str] = {
    "node.id": "none (required)",
    "broker.id": "-1",
    "advertised.listeners": "the listeners' addresses",
}


def _authorizer(text: str) -> str:
    name = text.strip()
    if name not in ("", STANDARD_AUTHORIZER):
        raise ValueError(f"kafka-emu has only {STANDARD_AUTHORIZER}, not {text!r}")
    return name


def _acls(text: str) -> str:
    from ..security.acls import parse_acl_specs
    parse_acl_specs(text)  # refused here, with its reason, rather than at start
    return text


@lazy_dunders  # __repr__, __eq__, __hash__ made on first use
@attrs.frozen(kw_only=True, repr=False, eq=False)
class BrokerConfig:
    """Everything a broker is started with, under Python names; build it from Kafka's names
    with ``BrokerConfig.from_kafka`` (or ``kafka_emu.testing.make_config``). Group settings
    live in ``coordinator`` (:class:`CoordinatorConfig`)."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    node_id: int = 1
    cluster_id: str = attrs.field(factory=lambda: "kafka-emu-" + uuid.uuid4().hex[:12])
    advertised_host: str | None = None  # None: the host clients connected to
    advertised_port: int | None = None  # None: the bound port
    socket_request_max_bytes: int = 104857600
    connections_max_idle_ms: int = 600000  # Kafka's default: 10 minutes
    frame_read_timeout_ms: int = 60000  # kafka-emu's own: a started frame must finish in time
    max_connections: int = 2**31 - 1  # Kafka's default: no cap
    max_connections_per_ip: int = 2**31 - 1
    # KIP-227 fetch sessions a broker keeps (broker/fetch_sessions.py); 0: none, every fetch full
    fetch_session_cache_slots: int = 1000
    num_partitions: int = 1
    auto_create_topics_enable: bool = True
    log_retention_bytes: int = -1
    log_retention_ms: int = 7 * 24 * 3600 * 1000  # log.retention.hours=168; -1: forever
    log_retention_check_interval_ms: int = 300_000  # how often retention runs (broker/log_retention.py)
    log_initial_task_delay_ms: int = 30_000  # when it first runs after start
    api_max_versions: Mapping[str, int] = attrs.field(factory=dict)  # emulate older brokers
    topics: tuple[tuple[str, int], ...] = ()  # created at start: (name, partitions)
    # A cluster in one process (broker/cluster.py): how many brokers, node ids node_id.., ports
    # port, port+1, .. (all 0 when port is 0), and each broker's rack (empty: none).
    brokers: int = 1
    racks: tuple[str | None, ...] = ()
    offsets_topic_num_partitions: int = 50
    offsets_topic_replication_factor: int = 3  # capped at the number of brokers
    default_replication_factor: int = 1
    coordinator_load_time_ms: int = 100  # a moved coordinator answers LOAD_IN_PROGRESS this long
    coordinator: CoordinatorConfig = attrs.field(factory=CoordinatorConfig)
    # "real": the coordinator's time follows the wall clock (plus any control-plane advance);
    # "manual": it moves only when the control plane advances it.
    clock: str = attrs.field(default="real", validator=attrs.validators.in_(("real", "manual")))
    timeline_max_events: int = 10000  # the control plane's in-memory timeline; 0 = off
    # KIP-890 part 1: a transactional Produce (or TxnOffsetCommit) for a partition (or group)
    # not yet in the producer's transaction is checked with the transaction coordinator
    transaction_partition_verification_enable: bool = True
    # the transaction coordinator (kafka_emu/transactions/config.py reads these)
    transaction_max_timeout_ms: int = 900_000
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int = 10_000
    transactional_id_expiration_ms: int = 604_800_000
    transaction_remove_expired_transaction_cleanup_interval_ms: int = 3_600_000
    transaction_state_log_num_partitions: int = 50
    # the finalized transaction.version feature (emu.transaction.version; Kafka 4.x formats 2)
    transaction_version: int = 2
    # ACLs (kafka_emu/security/): off unless authorizer.class.name names StandardAuthorizer
    authorizer_class_name: str = ""
    super_users: str = ""  # "User:alice;User:bob", as Kafka's super.users
    allow_everyone_if_no_acl_found: bool = False
    acls: str = ""  # emu.acls: ACLs present from the start (security/acls.py parse_acl_specs)
    # The Kafka-named settings this config was built from, as given (DescribeConfigs reports
    # them as STATIC_BROKER_CONFIG and the others as Kafka's defaults).
    explicit_settings: Mapping[str, str] = attrs.field(factory=dict)
    # listeners by security protocol, TLS, SASL (kafka_emu/security/config.py)
    security: SecurityConfig = attrs.field(factory=SecurityConfig)

    # Kafka config name -> (BrokerConfig attribute, parser)
    KAFKA_NAMES: ClassVar[dict[str, tuple[str, Callable[[str], Any]]]] = {
        "node.id": ("node_id", _int(0, 2**31 - 1)),
        "broker.id": ("node_id", _int(0, 2**31 - 1)),
        "cluster.id": ("cluster_id", str),
        "advertised.host.name": ("advertised_host", str),
        "advertised.port": ("advertised_port", _int(1, 65535)),
        "socket.request.max.bytes": ("socket_request_max_bytes", _int(1, 2**31 - 1)),
        "connections.max.idle.ms": ("connections_max_idle_ms", _int(1, 2**63 - 1)),
        "emu.frame.read.timeout.ms": ("frame_read_timeout_ms", _int(1, 2**63 - 1)),
        "max.connections": ("max_connections", _int(1, 2**31 - 1)),
        "max.connections.per.ip": ("max_connections_per_ip", _int(1, 2**31 - 1)),
        "max.incremental.fetch.session.cache.slots": ("fetch_session_cache_slots",
                                                      _int(0, 2**31 - 1)),
        "num.partitions": ("num_partitions", _int(1, 100000)),
        "auto.create.topics.enable": ("auto_create_topics_enable", _bool),
        "log.retention.bytes": ("log_retention_bytes", _int(-1)),
        "log.retention.ms": ("log_retention_ms", _int(-1)),
        "log.retention.check.interval.ms": ("log_retention_check_interval_ms", _int(1)),
        "log.initial.task.delay.ms": ("log_initial_task_delay_ms", _int(0)),
        "emu.api.max.versions": ("api_max_versions", _caps),
        "emu.clock": ("clock", _clock),
        "emu.timeline.max.events": ("timeline_max_events", _int(0, 10**8)),
        "emu.brokers": ("brokers", _int(1, 64)),
        "broker.rack": ("racks", lambda text: tuple(r.strip() or None for r in text.split(","))),
        "offsets.topic.num.partitions": ("offsets_topic_num_partitions", _int(1, 10000)),
        "offsets.topic.replication.factor": ("offsets_topic_replication_factor", _int(1, 32767)),
        "default.replication.factor": ("default_replication_factor", _int(1, 32767)),
        "emu.coordinator.load.time.ms": ("coordinator_load_time_ms", _int(0, 2**31 - 1)),
        "transaction.partition.verification.enable": (
            "transaction_partition_verification_enable", _bool),
        "transaction.max.timeout.ms": ("transaction_max_timeout_ms", _int(1, 2**31 - 1)),
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": (
            "transaction_abort_timed_out_transaction_cleanup_interval_ms", _int(1, 2**31 - 1)),
        "transactional.id.expiration.ms": ("transactional_id_expiration_ms", _int(1, 2**31 - 1)),
        "transaction.remove.expired.transaction.cleanup.interval.ms": (
            "transaction_remove_expired_transaction_cleanup_interval_ms", _int(1, 2**31 - 1)),
        "transaction.state.log.num.partitions": (
            "transaction_state_log_num_partitions", _int(1, 10000)),
        "emu.transaction.version": ("transaction_version", _int(0, 2)),
        "authorizer.class.name": ("authorizer_class_name", _authorizer),
        "super.users": ("super_users", str),
        "allow.everyone.if.no.acl.found": ("allow_everyone_if_no_acl_found", _bool),
        "emu.acls": ("acls", _acls),
    }

    @classmethod
    def from_kafka(cls, settings: Mapping[str, str], **overrides: Any) -> "BrokerConfig":
        """A config from Kafka broker config names (``{"num.partitions": "3"}``), values as
        strings; ``overrides`` set attributes directly (host, port, topics). ValueError, one
        line, for an unknown name or a bad value."""
        values: dict[str, Any] = {}
        group: dict[str, str] = {}
        security: dict[str, str] = {}
        for name, raw in settings.items():
            if SecurityConfig.handles(name):
                security[name] = str(raw)
                if name != "advertised.listeners":
                    continue
            if name == "advertised.listeners":
                try:
                    values["advertised_host"], values["advertised_port"] = _listener(str(raw))
                except ValueError as exc:
                    raise ValueError(f"{name}: {exc}") from None
                continue
            known = cls.KAFKA_NAMES.get(name)
            if known is None:
                if name in CoordinatorConfig.KAFKA_NAMES:
                    group[name] = str(raw)
                    continue
                raise ValueError(f"unknown config {name!r}")
            attr, parse = known
            try:
                values[attr] = parse(str(raw))
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        if group:
            values["coordinator"] = CoordinatorConfig.from_kafka(group)
        if security:
            values["security"] = SecurityConfig.from_kafka(security)
        values["explicit_settings"] = {str(k): str(v) for k, v in settings.items()}
        values.update(overrides)
        return cls(**values)

    def kafka_values(self) -> dict[str, str]:
        """Every broker config kafka-emu knows, by Kafka name, with its value as a string."""
        values: dict[str, str] = {}
        for name, (attr, _) in self.KAFKA_NAMES.items():
            value = getattr(self, attr)
            if name == "emu.api.max.versions":
                value = ",".join(f"{k}:{v}" for k, v in value.items())
            elif isinstance(value, bool):
                value = str(value).lower()
            elif isinstance(value, tuple):  # broker.rack: one per broker
                value = ",".join(r or "" for r in value)
            values[name] = "" if value is None else str(value)
        from ..coordinator import config as coordinator_config
        fields = getattr(coordinator_config, "_KAFKA_FIELDS", {})
        for name in CoordinatorConfig.KAFKA_NAMES:
            attr = fields.get(name, (None,))[0]
            if attr is not None and hasattr(self.coordinator, attr):
                values[name] = str(getattr(self.coordinator, attr))
        values.update(self.coordinator.share.kafka_values())  # group.share.*, emu.share.version
        values.update(self.explicit_settings)
        return values

    def nodes(self) -> tuple[tuple[int, int, str | None], ...]:
        """(node id, configured port, rack) of every broker: ids and ports counting up from
        node.id and the port (port 0: every broker on a free port)."""
        racks = tuple(self.racks) + (None,) * (self.brokers - len(self.racks))
        return tuple((self.node_id + i, self.port + i if self.port else 0, racks[i] or None)
                     for i in range(self.brokers))

    @classmethod
    def known_names(cls) -> list[str]:
        return sorted({*cls.KAFKA_NAMES, "advertised.listeners", *CoordinatorConfig.KAFKA_NAMES,
                       *SecurityConfig.known_names()})
