"""Listeners by security protocol: Kafka's ``listeners``, ``advertised.listeners`` and
``listener.security.protocol.map``.

A listener is a name, a security protocol and an address: ``listeners=PLAINTEXT://127.0.0.1:0,
SASL_SSL://127.0.0.1:0``. The name is what ``listener.security.protocol.map`` maps to a protocol
(``INTERNAL:SASL_PLAINTEXT``); without a map entry the name must itself be a protocol, as on
Kafka. Every broker of a cluster listens on every listener (ports counting up from the given one,
or all free ones for port 0), and a client is answered -- Metadata, FindCoordinator,
DescribeCluster -- with the endpoints of the listener it connected on, advertised or bound.

Without ``listeners`` the broker has the one PLAINTEXT listener it always had (``host``, ``port``).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_MAP = {p: p for p in PROTOCOLS}


@attrs.frozen
class Listener:
    name: str
    protocol: str
    host: str  # "" : every interface as Kafka binds it; we bind the broker's host instead
    port: int

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")


def _endpoints(text: str) -> list[tuple[str, str, int]]:
    """"NAME://host:port,..." -> [(NAME, host, port)]; IPv6 hosts in brackets."""
    found = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, hostport = item.partition("://")
        if not sep or not name:
            raise ValueError(f"expected NAME://host:port, got {item!r}")
        host, sep, port_text = hostport.rpartition(":")
        if not sep:
            raise ValueError(f"expected NAME://host:port, got {item!r}")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        try:
            port = int(port_text)
        except ValueError:
            raise ValueError(f"bad port in {item!r}") from None
        if not 0 <= port <= 65535:
            raise ValueError(f"port {port} is outside [0, 65535]")
        found.append((name.strip().upper(), host, port))
    names = [n for n, _, _ in found]
    if len(set(names)) != len(names):
        raise ValueError(f"each listener name must appear once, got {text!r}")
    return found


def parse_protocol_map(text: str) -> dict[str, str]:
    """listener.security.protocol.map: "NAME:PROTOCOL,..." (Kafka's default maps each protocol
    to itself)."""
    mapping: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, protocol = item.partition(":")
        protocol = protocol.strip().upper()
        if not sep or protocol not in PROTOCOLS:
            raise ValueError(f"expected NAME:PROTOCOL with PROTOCOL one of "
                             f"{', '.join(PROTOCOLS)}, got {item!r}")
        mapping[name.strip().upper()] = protocol
    return mapping


def parse_listeners(text: str, protocol_map: Mapping[str, str] | None = None
                    ) -> tuple[Listener, ...]:
    mapping = DEFAULT_MAP if protocol_map is None else protocol_map
    listeners = []
    for name, host, port in _endpoints(text):
        protocol = mapping.get(name)
        if protocol is None:
            raise ValueError(f"no security protocol for listener {name} (name it in "
                             "listener.security.protocol.map or use a protocol as its name)")
        listeners.append(Listener(name, protocol, host, port))
    if not listeners:
        raise ValueError("no listener given")
    return tuple(listeners)


def parse_advertised(text: str) -> dict[str, tuple[str, int]]:
    """advertised.listeners: listener name -> (host, port) handed to clients."""
    return {name: (host, port) for name, host, port in _endpoints(text)}


def node_port(listener: Listener, index: int) -> int:
    """The port broker number ``index`` (0 = the first) binds for ``listener``."""
    return listener.port + index if listener.port else 0
