"""The control endpoint's connections: our own listening socket, and at most N served at once.

Theory of operation. Hypercorn's ``serve`` listens with a backlog of 100 and serves every
connection it accepts, so a flood of connections either overflowed the backlog (dropped in
silence: 63% of 10,000 in issue 33) or became as many HTTP connections on the broker's one loop.
Here the listening socket is made with the backlog asked for, each accepted connection is handed
to hypercorn's per-connection server (``TCPServer``, the piece its own ``serve`` runs per
connection), and one over ``max_connections`` gets a fixed 503 written at once and is closed.

Idle keep-alive connections count too: they are closed after ``KEEP_ALIVE_S`` (hypercorn's
default is 5 s), and clients that leak them (a new session per request: schemathesis's run
against the table peaks at about 200 with 2 s) hold a few hundred at once, which is why the
limit is in the hundreds and not a handful. The same timeout closes a connection that sends no
request that long after it is accepted.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from functools import partial
from typing import Any

import trio

KEEP_ALIVE_S = 2.0  # an idle connection's slot comes back this soon

_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
         b"retry-after: 1\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s")


def _busy_answer(limit: int) -> bytes:
    body = json.dumps({"error": {"message": f"the control endpoint is serving its limit of "
                                            f"{limit} connections; try again",
                                 "operation": None}}, separators=(",", ":")).encode() + b"\n"
    return _BUSY % (len(body), body)


def _turn_away(stream: trio.SocketStream, answer: bytes) -> None:
    """503 to a connection over the limit, without a task or a wait: under a flood there are
    thousands of them, and anything they await is time the broker's loop does not have. The
    answer is written at once (a few hundred bytes: an empty socket buffer takes them whole),
    what the client has sent already is read and dropped, then the socket is closed. A request
    that arrives after the close draws a reset, which on Linux still leaves the answer that came
    before it readable."""
    fd = stream.socket.fileno()
    try:
        os.write(fd, answer)
        stream.socket.shutdown(socket.SHUT_WR)
        while os.read(fd, 1 << 16):
            pass
    except OSError:  # BlockingIOError: nothing (more) to read; or the client is gone already
        pass
    stream.socket.close()


async def listen(host: str, port: int, backlog: int) -> trio.SocketListener:
    """A listening socket on the first address ``host`` resolves to (OSError if it cannot)."""
    infos = await trio.socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                          flags=socket.AI_PASSIVE)
    family, kind, proto, _, sockaddr = infos[0]
    sock = trio.socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        await sock.bind(sockaddr)
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(sock)


async def serve_limited(app: Any, listener: trio.SocketListener, max_connections: int, *,
                        task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Serve the ASGI ``app`` on ``listener`` until cancelled, ``max_connections`` at most."""
    from hypercorn.config import Config
    from hypercorn.trio.tcp_server import TCPServer
    from hypercorn.trio.worker_context import WorkerContext
    from hypercorn.typing import ConnectionState
    from hypercorn.utils import wrap_app

    config = Config()
    config.accesslog = None
    # hypercorn's own lines stay quiet; errors still reach kafka_emu's log
    quiet = logging.getLogger("kafka_emu.control.hypercorn")
    quiet.setLevel(logging.WARNING)
    config.errorlog = quiet
    config.keep_alive_timeout = KEEP_ALIVE_S
    serve_one = partial(TCPServer, wrap_app(app, config.wsgi_max_body_size, "asgi"), config,
                        WorkerContext(None), ConnectionState({}))
    busy = _busy_answer(max_connections)
    active = 0

    async def handle(stream: trio.SocketStream) -> None:
        nonlocal active
        if active >= max_connections:
            _turn_away(stream, busy)
            return
        active += 1
        try:
            await serve_one(stream)
        finally:
            active -= 1

    await trio.serve_listeners(handle, [listener], task_status=task_status)
