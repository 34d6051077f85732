"""``serve(config, task_status=...)``: the trio server.

One task per connection, one timer task that sleeps until the coordinator's next deadline.
Start it with ``address = await nursery.start(serve, config)``; port 0 picks a free port, and
the bound (host, port) is reported once the listener accepts connections.

The accept loop is ours rather than ``trio.serve_listeners`` for three bounds Kafka has:
- ``max.connections``: at the cap, accepting waits until a connection closes (Kafka's acceptor
  blocks the same way; clients queue in the listen backlog);
- ``max.connections.per.ip``: a further connection from that address is closed at once;
- running out of file descriptors (EMFILE/ENFILE/ENOBUFS/ENOMEM): accepting pauses with one log
  line, retries with a growing pause, and says once when it has resumed -- not a traceback
  every 0.1 s.
Connections are served in their own nursery, so nothing raised for one of them reaches the
listener (``serve_connection`` never raises anyway).
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable
from typing import Any

import attrs
import trio

from ..frozen import lazy_dunders
from .clock import io_now
from .config import BrokerConfig
from .connection import serve_connection
from .log_limits import warn_limited
from .state import Broker

log = logging.getLogger("kafka_emu")

# accept() failing for want of resources, not because of the listener (trio's own list)
OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
PAUSE_FIRST_S, PAUSE_MAX_S = 0.05, 1.0
CONNECTION_TASK = "kafka_emu.broker.connection.serve_connection"


@lazy_dunders  # __repr__, __eq__, __hash__ made on first use
@attrs.frozen(repr=False, eq=False)
class BoundAddress:
    host: str
    port: int
    broker: Broker = attrs.field(eq=False, repr=False)
    ports: tuple[int, ...] = ()  # every broker's port, the first broker's first
    # every listener as (name, security protocol, bootstrap): the first is ``bootstrap``'s
    listeners: tuple[tuple[str, str, str], ...] = ()
    tls: Any = attrs.field(default=None, eq=False, repr=False)  # security.tls.TlsMaterial

    def bootstrap_for(self, name: str) -> str:
        """The bootstrap of listener ``name`` (e.g. "SASL_SSL")."""
        for listener, _, bootstrap in self.listeners:
            if listener == name.upper():
                return bootstrap
        raise KeyError(f"no listener named {name!r}")

    @property
    def bootstrap(self) -> str:
        """Every broker as ``host:port``, comma-separated (one broker: just its address)."""
        return ",".join(host_port(self.host, port) for port in self.ports or (self.port,))


def host_port(host: str, port: int) -> str:
    """``host:port`` as clients parse it: an IPv6 address in brackets (``[::1]:9092``)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def serve(config: BrokerConfig, *, observer: Callable[[Any], None] | None = None,
                warm: bool = True, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Serve until cancelled. ``warm``: once listening, load what a first group and the data
    path need while the server is idle (warm.py); False leaves everything to its first use."""
    broker = Broker(config, observer=observer)
    cluster = broker.cluster
    security = config.security
    specs = security.listeners
    tls = None
    if security.needs_tls:
        from ..security.state import security_of
        from ..security.tls import TlsMaterial
        hosts = {config.host, *(spec.host for spec in specs if spec.host),
                 *(h for h, _ in security.advertised.values() if h)}
        tls = security_of(broker).tls = TlsMaterial.create(security, sorted(hosts))
    try:
        await _serve(config, broker, cluster, specs, tls, warm, task_status)
    finally:
        if tls is not None:
            tls.close()


async def _serve(config, broker, cluster, specs, tls, warm, task_status) -> None:
    async with trio.open_nursery() as nursery:
        broker.cluster_moves.nursery = nursery
        nursery.start_soon(broker.run_timers)
        nursery.start_soon(broker.idle.run)
        # events reach sinks that take rows in batches, after the emitting task yields
        nursery.start_soon(broker.observation.deliver_deferred)
        # Every broker of the cluster listens before any is announced (broker/cluster.py);
        # with one broker this is the one listener it always had.
        bound = []
        # An ASCII host goes to getaddrinfo as bytes: Python encodes a str host with its "idna"
        # codec first, whose import (stringprep, unicodedata) is a few ms of a start, and which
        # raises UnicodeError, not gaierror, for a label over 63 characters.
        host = config.host.encode("ascii") if config.host.isascii() else config.host
        if not specs:  # the one PLAINTEXT listener on host:port it always had
            for node in cluster.nodes.values():
                listeners = await trio.open_tcp_listeners(node.port, host=host)
                node.port = listeners[0].socket.getsockname()[1]
                node.ports = {"PLAINTEXT": node.port}
                node.sockaddrs = [(lst.socket.family, lst.socket.getsockname())
                                  for lst in listeners]
                bound.append((node, listeners))
        else:
            for index, node in enumerate(cluster.nodes.values()):
                listeners = await _bind_listeners(node, index, specs, config.host)
                bound.append((node, listeners))
        for node, listeners in bound:
            broker.cluster_moves.serve_node(node, listeners)
        broker.bound_host, broker.bound_port = config.host, bound[0][0].port
        address = BoundAddress(config.host, broker.bound_port, broker,
                               tuple(node.port for node, _ in bound),
                               _bootstraps(config.host, specs, [n for n, _ in bound]), tls)
        for name, protocol, bootstrap in address.listeners:
            log.info("kafka-emu listening on %s (%s, %s)", bootstrap, name, protocol)
        if warm:
            from .warm import warm_up
            nursery.start_soon(warm_up, broker)
        task_status.started(address)
        await trio.sleep_forever()


async def _bind_listeners(node, index: int, specs, default_host: str) -> list:
    """Bind every listener of ``specs`` for broker number ``index``; node.port is the first's."""
    from ..security.listeners import node_port
    all_listeners = []
    node.ports, node.sockaddrs = {}, []
    for spec in specs:
        text = spec.host or default_host
        host = text.encode("ascii") if text.isascii() else text
        listeners = await trio.open_tcp_listeners(node_port(spec, index), host=host)
        node.ports[spec.name] = listeners[0].socket.getsockname()[1]
        node.sockaddrs += [(lst.socket.family, lst.socket.getsockname()) for lst in listeners]
        all_listeners += listeners
    node.port = node.ports[specs[0].name]
    return all_listeners


def _bootstraps(host: str, specs, nodes) -> tuple[tuple[str, str, str], ...]:
    if not specs:
        return (("PLAINTEXT", "PLAINTEXT",
                 ",".join(host_port(host, node.port) for node in nodes)),)
    return tuple((spec.name, spec.protocol,
                  ",".join(host_port(spec.host or host, node.ports[spec.name]) for node in nodes))
                 for spec in specs)


def _listener_of(broker: Broker, node_id: int | None, listener: trio.SocketListener):
    """The listener spec ``listener`` serves (None: the default PLAINTEXT)."""
    specs = broker.config.security.listeners
    if not specs:
        return None
    try:
        port = listener.socket.getsockname()[1]
    except OSError:  # closed already (its broker stopped): accept() will say so
        return None
    ports = broker.cluster.node(node_id).ports
    for spec in specs:
        if ports.get(spec.name) == port:
            return None if spec.protocol == "PLAINTEXT" and spec.name == "PLAINTEXT" else spec
    return None


async def accept_loop(broker: Broker, listener: trio.SocketListener,
                      connections: trio.Nursery, node_id: int | None = None) -> None:
    listener_spec = _listener_of(broker, node_id, listener)
    task = serve_connection
    if listener_spec is not None and listener_spec.tls:
        from ..security.tls import serve_tls
        task = serve_tls  # type: ignore[assignment]
    paused_since: float | None = None
    failures = 0
    pause = PAUSE_FIRST_S
    while True:
        await broker.connection_slot()
        try:
            stream = await listener.accept()
        except OSError as exc:
            if exc.errno not in OUT_OF_RESOURCES:
                warn_limited("accept failed", "accept failed: %s; retrying", exc)
                await trio.sleep(PAUSE_FIRST_S)
                continue
            if paused_since is None:
                paused_since = io_now()
                log.error("cannot accept connections: %s; pausing until resources free up "
                          "(close connections or raise the open-file limit)", exc.strerror)
            failures += 1
            await trio.sleep(pause)
            pause = min(pause * 2, PAUSE_MAX_S)
            continue
        if paused_since is not None:
            log.warning("accepting connections again after %.1f s (%d attempts failed)",
                        io_now() - paused_since, failures)
            paused_since, failures, pause = None, 0, PAUSE_FIRST_S
        # a name given, not one trio formats per task (about 90 bytes per connection)
        if listener_spec is None:
            connections.start_soon(serve_connection, broker, stream, node_id,
                                   name=CONNECTION_TASK)
        else:
            connections.start_soon(task, broker, stream, node_id, listener_spec,
                                   name=CONNECTION_TASK)
