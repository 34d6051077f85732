"""The security settings of a broker, by Kafka's config names: listeners, TLS, SASL.

``SecurityConfig.from_kafka`` takes the names ``BrokerConfig.from_kafka`` hands it (those in
``KAFKA_NAMES``, plus any ``listener.name.<listener>.<...>.sasl.jaas.config`` and
``sasl.jaas.config``); ``BrokerConfig.security`` holds the result. Defaults keep the broker as
it always was: one PLAINTEXT listener, no TLS, no SASL.

Credentials: ``emu.sasl.users=alice:secret,bob:pw`` (kafka-emu's own name) gives each user a
password for PLAIN and a SCRAM credential for both SCRAM mechanisms (4096 iterations); the
``user_<name>="<password>"`` options of Kafka's PlainLoginModule JAAS line are read too, from
any jaas config given. Users are broker-wide, not per listener or mechanism.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import attrs

from ..frozen import lazy_dunders
from .listeners import Listener, parse_advertised, parse_listeners, parse_protocol_map

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
_JAAS_USER = re.compile(r'\buser_([^\s="]+)\s*=\s*"([^"]*)"')
# Kafka's default of each name whose kafka-emu default differs: kafka-emu listens on its --host,
# generates a CA and certificate for TLS listeners, has no Kerberos and reads no Java keystores
KAFKA_DEFAULTS: dict[str, str] = {
    "listeners": "PLAINTEXT://:9092 (every interface)",
    "ssl.keystore.location": "none (no TLS listener without one)",
    "ssl.truststore.location": "none",
    "sasl.enabled.mechanisms": "GSSAPI",
    "ssl.keystore.type": "JKS",
    "ssl.truststore.type": "JKS",
}


def _int(lo: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"expected an integer, got {text!r}") from None
        if value < lo:
            raise ValueError(f"{value} is below {lo}")
        return value
    return parse


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}, got {text!r}")
        return value
    return parse


def _store_type(text: str) -> str:
    value = text.strip().upper()
    if value not in ("PEM", "PKCS12"):
        raise ValueError(f"kafka-emu reads PEM or PKCS12 stores, not {text!r}")
    return value


def _mechanisms(text: str) -> tuple[str, ...]:
    names = tuple(m.strip().upper() for m in text.split(",") if m.strip())
    for name in names:
        if name not in MECHANISMS:
            raise ValueError(f"unsupported SASL mechanism {name!r} (kafka-emu has "
                             f"{', '.join(MECHANISMS)})")
    return names


def _users(text: str) -> dict[str, str]:
    users = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, password = item.partition(":")
        if not sep or not name:
            raise ValueError(f"expected user:password, got {item!r}")
        users[name] = password
    return users


def is_sensitive(name: str) -> bool:
    """A config whose value DescribeConfigs never shows (Kafka's PASSWORD type: passwords and
    JAAS lines, listener-prefixed too; and kafka-emu's user list)."""
    return (name.endswith(".password") or name.endswith("sasl.jaas.config")
            or name == "emu.sasl.users")


@lazy_dunders
@attrs.frozen(kw_only=True, repr=False, eq=False)
class SecurityConfig:
    listeners: tuple[Listener, ...] = ()  # (): the one PLAINTEXT listener on host:port
    advertised: Mapping[str, tuple[str, int]] = attrs.field(factory=dict)
    protocol_map: Mapping[str, str] | None = None
    ssl_keystore_location: str | None = None
    ssl_keystore_type: str = "PEM"
    ssl_key_password: str | None = None
    ssl_keystore_password: str | None = None  # (PKCS12)
    ssl_truststore_location: str | None = None
    ssl_truststore_type: str = "PEM"
    ssl_client_auth: str = "none"
    ssl_principal_mapping_rules: str = "DEFAULT"
    sasl_enabled_mechanisms: tuple[str, ...] = MECHANISMS
    # listener.name.<listener>.sasl.enabled.mechanisms: a listener's own list (by its name)
    listener_mechanisms: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    users: Mapping[str, str] = attrs.field(factory=dict)
    connections_max_reauth_ms: int = 0
    failed_authentication_delay_ms: int = 100
    sasl_server_max_receive_size: int = 524288

    KAFKA_NAMES: ClassVar[dict[str, tuple[str, Callable[[str], Any]]]] = {
        "listener.security.protocol.map": ("protocol_map", parse_protocol_map),
        "ssl.keystore.location": ("ssl_keystore_location", str),
        "ssl.keystore.type": ("ssl_keystore_type", _store_type),
        "ssl.key.password": ("ssl_key_password", str),
        "ssl.keystore.password": ("ssl_keystore_password", str),
        "ssl.truststore.location": ("ssl_truststore_location", str),
        "ssl.truststore.type": ("ssl_truststore_type", _store_type),
        "ssl.client.auth": ("ssl_client_auth", _choice("required", "requested", "none")),
        "ssl.principal.mapping.rules": ("ssl_principal_mapping_rules", str),
        "sasl.enabled.mechanisms": ("sasl_enabled_mechanisms", _mechanisms),
        "emu.sasl.users": ("users", _users),
        "connections.max.reauth.ms": ("connections_max_reauth_ms", _int(0)),
        "connection.failed.authentication.delay.ms": ("failed_authentication_delay_ms", _int(0)),
        "sasl.server.max.receive.size": ("sasl_server_max_receive_size", _int(1)),
    }
    # read here as well as by BrokerConfig (which keeps its own first-entry reading)
    SHARED_NAMES: ClassVar[frozenset[str]] = frozenset({"listeners", "advertised.listeners"})

    @classmethod
    def handles(cls, name: str) -> bool:
        return (name in cls.KAFKA_NAMES or name in cls.SHARED_NAMES
                or name.endswith("sasl.jaas.config")
                or (name.startswith("listener.name.")
                    and name.endswith(".sasl.enabled.mechanisms")))

    @classmethod
    def from_kafka(cls, settings: Mapping[str, str]) -> "SecurityConfig":
        values: dict[str, Any] = {}
        users: dict[str, str] = {}
        for name, raw in settings.items():
            text = str(raw)
            try:
                if name.endswith("sasl.jaas.config"):
                    users.update(_JAAS_USER.findall(text))
                elif name.endswith(".sasl.enabled.mechanisms"):
                    listener = name[len("listener.name."):-len(".sasl.enabled.mechanisms")]
                    values.setdefault("listener_mechanisms", {})[listener.upper()] = \
                        _mechanisms(text)
                elif name in cls.KAFKA_NAMES:
                    attr, parse = cls.KAFKA_NAMES[name]
                    if attr == "users":
                        users.update(parse(text))
                    else:
                        values[attr] = parse(text)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        try:
            if "listeners" in settings:
                values["listeners"] = parse_listeners(str(settings["listeners"]),
                                                      values.get("protocol_map"))
            if "advertised.listeners" in settings:
                values["advertised"] = parse_advertised(str(settings["advertised.listeners"]))
        except ValueError as exc:
            raise ValueError(f"listeners: {exc}") from None
        values["users"] = users
        return cls(**values)

    def mechanisms_of(self, listener: str) -> tuple[str, ...]:
        """The SASL mechanisms enabled on ``listener``."""
        return self.listener_mechanisms.get(listener, self.sasl_enabled_mechanisms)

    @property
    def needs_tls(self) -> bool:
        return any(listener.tls for listener in self.listeners)

    @property
    def needs_sasl(self) -> bool:
        return any(listener.sasl for listener in self.listeners)

    @classmethod
    def known_names(cls) -> list[str]:
        return sorted({*cls.KAFKA_NAMES, *cls.SHARED_NAMES})
