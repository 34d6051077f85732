"""One client connection: frames in, one request at a time, responses out in order.

Kafka mutes a connection after reading a request until it has answered it, so requests on one
connection are processed strictly in order and a parked JoinGroup/SyncGroup holds back the
ones behind it -- but never another connection's (reference 1.3). We get that by answering the
frames of each read one after another before reading again. The answers to one read go out in
one write (fewer syscalls for pipelining clients), flushed early only when a request parks; a
Fetch response's stored batches are in that write as they are, one vectored ``sendmsg``
(vectored.py), never joined.

One error boundary covers the connection's whole life -- address lookup, reads, handling,
writes, close -- so nothing one client does can end the server:
- an OSError anywhere (a reset before we even looked at the socket, a broken pipe) is "closed
  by peer", logged at debug;
- bad input (a frame that does not parse, an unknown API key, an unsupported version other than
  ApiVersions, a frame above socket.request.max.bytes) closes this connection with a warning
  naming the peer and the reason, rate-limited per kind of reason;
- anything else is a bug: logged with its traceback, recorded for the test fixtures, and only
  this connection is closed.


Time limits (``BrokerConfig``): a connection with no request in flight and no bytes for
``connections.max.idle.ms`` is closed (Kafka's idle reaper); a frame that has started must be
complete within ``emu.frame.read.timeout.ms`` (slowloris); a request parked for the coordinator
or a long-poll Fetch is released as soon as its client goes (``Connection.park``).

Where the parts live: this module is the loop and its error boundary, with the opening and
closing steps (address, per-address cap, ConnectionOpened/Closed); the connection's state and
socket work -- reading, parking, writing -- are ``connection_io.Connection``; what happens to
one frame -- decode, dispatch, faults, recording, throttling -- is ``dispatch.handle_frame``.
The names other modules import from here (CloseConnection, Connection, FRAME_RECORD_LIMIT,
serve_connection, ...) stay importable from here.
"""

from __future__ import annotations

import logging

import trio

from ..bounded import remember
from ..protocol.errors import DecodeError
from .clock import perf_now
from .connection_io import PARKED_READ_LIMIT as PARKED_READ_LIMIT
from .connection_io import CloseConnection as CloseConnection
from .connection_io import Connection as Connection
from .connection_io import PeerGone as PeerGone
from .context import ConnectionInfo
from .dispatch import FRAME_RECORD_LIMIT as FRAME_RECORD_LIMIT
from .dispatch import handle_frame
from .fault_actions import FaultClose
from .log_limits import warn_limited
from .request_facts import answer_parked
from .state import Broker, Pending
from .vectored import recv_nowait

log = logging.getLogger("kafka_emu")

# bench/bench_wire.py drives the request path in-process by this, its name before the split
_process = handle_frame


def _address(sockaddr) -> tuple[str, int]:
    if isinstance(sockaddr, tuple) and len(sockaddr) >= 2:
        return str(sockaddr[0]), int(sockaddr[1])
    return str(sockaddr), 0



_HOSTS: dict[str, str] = {}  # one string per address text, shared by its connections


def _host(text: str) -> str:
    """The shared string for an address (thousands of connections come from a few hosts)."""
    host = _HOSTS.get(text)
    return remember(_HOSTS, text, text) if host is None else host


async def serve_connection(broker: Broker, stream: trio.SocketStream,
                           node_id: int | None = None, listener=None,
                           principal: str | None = None) -> None:
    """Serve one accepted connection until it closes. Never raises (see the module doc).
    ``listener``: a non-default listener (security/listeners.py); ``principal``: from the
    client's certificate (security/tls.py)."""
    # Few locals here: every idle connection keeps this coroutine's frame (twice over: trio
    # makes a frame object of it), so the opening and closing steps are functions of their own.
    conn = Connection(broker, stream, broker.new_connection_id())
    stream = None  # type: ignore[assignment]  # kept by the connection only if it reads it
    reason = "closed by peer"
    peer = "unknown peer"
    try:
        info = _opened(broker, conn, node_id)
        peer = conn.peer
        if listener is not None:
            from ..security.gate import open_gate
            open_gate(broker, conn, info, listener, principal)
        observation = broker.observation
        while not conn.eof:
            while conn.queue:
                # this batch; frames read while one of them is parked go to a new list
                frames, conn.queue = conn.queue, ()
                if observation.emit is not None:
                    # one clock reading per batch, then one per request (``handle_frame``); what
                    # the batch emits is delivered when it ends (``flush``), not by waking the
                    # delivery task (observe.py, ``held``)
                    observation.mark = perf_now()
                    observation.hold()
                else:
                    observation.mark = None
                frames.reverse()  # type: ignore[union-attr]
                while frames:
                    # popped and handed over: no frame is kept once its request is decoded
                    response = await handle_frame(broker, conn, info, frames.pop())  # type: ignore[union-attr]
                    if response is None:
                        continue
                    if response.__class__ is not Pending:
                        conn.enqueue(response)
                        continue
                    # Parked in the coordinator: wait for the answer here, reading on (frames
                    # read meanwhile queue up; the stream's end means the client left) -- a
                    # coroutine of its own per parked request would be kept by each of 5000
                    # members forming a group. The answer wakes the read (Pending.resolve).
                    if not frames:
                        frames = ()  # type: ignore[assignment]  # no empty list kept
                    if conn._raw is None:
                        conn.enqueue(await conn.wait_parked(response))
                        continue
                    try:
                        await conn.flush()  # answers to earlier requests go out first
                        if conn.park_on_socket(response):
                            raw = conn._raw
                            try:
                                while not response.resolved:
                                    if (conn.frames.buffered + sum(map(len, conn.queue))
                                            > PARKED_READ_LIMIT):
                                        await response.done.wait()  # read on once answered
                                        break
                                    data = recv_nowait(raw)
                                    if data is None:
                                        await trio.lowlevel.wait_readable(raw)
                                        continue
                                    if not data:
                                        conn.eof = True  # the client left
                                        break
                                    conn._take(data)
                                    data = None
                                    await trio.lowlevel.cancel_shielded_checkpoint()
                            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError,
                                    DecodeError):
                                # ClosedResourceError once resolved: the answer woke the read;
                                # else these end the connection once the request is released
                                if not response.resolved:
                                    conn.eof = True
                    finally:
                        response.socket = data = None
                        if not response.resolved:
                            broker.forget(response.request_id)
                    if not response.resolved:
                        raise PeerGone("closed by peer while its request was parked")
                    conn.enqueue(answer_parked(broker, conn, response))
                # an idle connection keeps neither its last frames nor its last response
                frames = response = None  # type: ignore[assignment]
            settled = await conn.flush()
            if conn.eof:
                break
            raw = conn._raw
            if raw is None or conn.frame_started is not None:  # (a frame partly read)
                if not await conn.read_more():
                    break
                continue
            # Waiting for the next request, on the socket itself and here: a coroutine of ours
            # between this one and trio's wait would be kept by every idle connection.
            await trio.lowlevel.checkpoint_if_cancelled()
            data = recv_nowait(raw)
            if data is None:
                conn.waiting_for_request()
                try:
                    while data is None:
                        await trio.lowlevel.wait_readable(raw)
                        data = recv_nowait(raw)
                except trio.ClosedResourceError:
                    conn.closed_while_waiting()
                    raise
                finally:
                    broker.idle.active(conn)
                conn.expired = False  # bytes won a race with an expiry: not idle after all
            elif not settled:  # (a schedule point, as a read is, unless the write just made one)
                await trio.lowlevel.cancel_shielded_checkpoint()
            if not data:
                break
            conn._take(data)
            data = None
    except (DecodeError, CloseConnection) as exc:
        reason = str(exc)
        warn_limited(getattr(exc, "kind", "malformed frame"),
                     "closing connection from %s: %s", peer, reason)
    except (PeerGone, FaultClose) as exc:
        reason = str(exc)
        log.debug("%s: %s", peer, reason)
    except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
        reason = f"closed by peer: {exc!r}"
        log.debug("%s: %s", peer, reason)
    except Exception as exc:  # a bug: keep serving others, but make it visible
        reason = f"internal error: {exc!r}"
        log.exception("internal error serving %s; closing that connection", peer)
        broker.record_unexpected(exc)
    finally:
        if broker.observation.held:  # a batch that ended in an exception
            broker.observation.release()
        _closed(broker, conn, peer, reason)
        with trio.CancelScope(shield=True):
            try:
                conn.sock.close()  # as SocketStream.aclose: wakes any waiter, closes, checkpoints
                await trio.lowlevel.checkpoint()
            except OSError:
                pass  # already reset by the peer; nothing left to close


def _opened(broker: Broker, conn: Connection, node_id: int | None) -> ConnectionInfo:
    """Who is on the other end (ConnectionInfo), the per-address cap, ConnectionOpened."""
    sock = conn.sock
    peer_host, peer_port = _address(sock.getpeername())
    local_host, local_port = _address(sock.getsockname())
    peer_host, local_host = _host(peer_host), _host(local_host)
    conn.info = info = ConnectionInfo(peer_host, peer_port, local_host, local_port,
                                      node_id=node_id, park=conn)
    conn.peer = info.peer
    if not broker.connection_opened(conn.id, info):
        raise CloseConnection(f"more than {broker.config.max_connections_per_ip} "
                              f"connections from {peer_host} (max.connections.per.ip)",
                              "max.connections.per.ip")
    emit = broker.observer
    if emit is not None:
        # the event classes load with the first observed event, not with the server
        from .events import ConnectionOpened
        emit(ConnectionOpened(at_ms=broker.now_ms(), connection_id=conn.id, peer=conn.peer,
                              local=f"{local_host}:{local_port}"))
    return info


def _closed(broker: Broker, conn: Connection, peer: str, reason: str) -> None:
    broker.connection_closed(conn.id)
    emit = broker.observer
    if emit is not None:
        from .events import ConnectionClosed
        emit(ConnectionClosed(at_ms=broker.now_ms(), connection_id=conn.id, peer=peer,
                              reason=reason))

