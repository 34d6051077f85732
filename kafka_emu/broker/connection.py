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
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar

import trio

from ..bounded import remember
from ..errors import KafkaError
from ..protocol.errors import DecodeError
from ..protocol.framing import FrameBuffer
from ..protocol.headers import decode_request, encode_response, encode_response_parts, peek_api
from .clock import io_now, perf_now
from .context import ConnectionInfo, RequestContext
from .error_response import error_response
from .fault_actions import FaultClose, carry_out
from .handlers import HANDLERS
from .handlers.api_versions import unsupported_version_response
from .log_limits import warn_limited
from .event_rows import REQUEST_FRAME, REQUEST_REFS, REQUEST_ROWS, request_row_maker
from .request_facts import answer_parked, parked_request
from .state import Broker, Pending
from .throttle import client_throttles
from .topics import Watch
from .vectored import RECEIVE_SIZE, recv_nowait, send_all, send_nowait, send_vectored

log = logging.getLogger("kafka_emu")

API_VERSIONS = 18
FETCH = 1  # its responses carry stored batches, written as they are (encode_response_parts)
T = TypeVar("T")
_new = object.__new__
_NO_MAKERS: dict = {}  # (REQUEST_ROWS for a request class not seen yet)
# A request recorded by its frames (event_rows.py's REQUEST_FRAME) when they are no larger than
# this together; a larger one (a commit of many partitions, a big group's description) as its
# row, whose size grows with the partitions it names, not with every byte of both frames.
FRAME_RECORD_LIMIT = 4096

# While a request is parked we keep reading, to notice the client leaving; pipelined frames read
# meanwhile wait in the queue. Past this many bytes we stop reading until the queue drains.
PARKED_READ_LIMIT = 1 << 20


class CloseConnection(Exception):
    """The request cannot be served; Kafka closes the connection without a response."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind  # what the rate limiter groups by


class PeerGone(Exception):
    """The client closed or reset the connection while its request was parked."""


def _address(sockaddr) -> tuple[str, int]:
    if isinstance(sockaddr, tuple) and len(sockaddr) >= 2:
        return str(sockaddr[0]), int(sockaddr[1])
    return str(sockaddr), 0


class Connection:
    """The live state of one connection; handlers reach it as ``ctx.connection``'s owner.

    Memory: thousands of idle connections are normal (a consumer group of 5000), so an idle one
    keeps little: slots, no list while nothing is queued either way (``()`` stands for empty),
    no last request or response, no figure the broker's config has, no buffer between frames
    (FrameBuffer), shared strings for its hosts, itself as ConnectionInfo.park (no bound
    method), and a wait for the next request on the socket itself, in ``serve_connection``:
    no coroutine of ours, nor SocketStream's, between that task and trio's wait."""

    __slots__ = ("broker", "stream", "sock", "id", "frames", "queue", "out", "vectored",
                 "frame_started", "eof", "info", "peer", "_raw", "expired", "auth")

    def __init__(self, broker: Broker, stream: trio.SocketStream, connection_id: int) -> None:
        self.broker = broker
        sock = getattr(stream, "socket", None)
        if sock is None:  # a TLS stream: written through the stream, never with sendmsg
            from ..security.tls import TlsSocket
            sock = TlsSocket(stream)  # type: ignore[arg-type]
        self.sock = sock  # trio's socket: written and closed directly (vectored.py)
        self.id = connection_id
        self.frames = FrameBuffer(broker.config.socket_request_max_bytes)
        # frames read, not yet served, oldest first; () while there are none
        self.queue: list[bytes] | tuple[()] = ()
        self.out: list[bytes | bytearray | memoryview] | tuple[()] = ()  # responses not yet sent
        self.vectored = False  # ``out`` holds stored batches: write it with sendmsg, unjoined
        self.frame_started = 0.0  # io time the partial frame in ``frames`` began
        self.eof = False
        self.info: ConnectionInfo | None = None
        self.peer = "unknown peer"  # "host:port", made once (events name it per request)
        # the stdlib socket under trio's (reads go straight to it); None: read via the stream
        self._raw = getattr(sock, "_sock", None)
        # the stream itself only where there is no stdlib socket to read (SocketStream's layers
        # are kept by nobody else: about 180 bytes per connection)
        self.stream = stream if self._raw is None else None
        self.expired = False  # closed as idle by the broker's IdleConnections (idle.py)
        # a SASL listener's authenticator (security/sasl.py) until it lets every request pass
        self.auth = None

    # -- reading ---------------------------------------------------------------------------
    def _take(self, data: bytes) -> None:
        frames, queue = self.frames, self.queue
        was_partial = frames.buffered > 0
        if queue:
            queue.extend(frames.split(data))
        else:
            self.queue = frames.split(data) or ()
        if frames.buffered and not was_partial:
            self.frame_started = io_now()

    async def _receive(self) -> bytes:
        """One chunk from the socket (b"" at its end), as SocketStream.receive_some reads it --
        a checkpoint either way, a recv, and a wait for readability only if nothing is there --
        but without its four coroutine frames and context manager, which every idle connection
        would keep alive while it waits. Socket errors come out as OSError (the callers treat
        OSError, BrokenResourceError and ClosedResourceError alike)."""
        raw = self._raw
        if raw is None:
            return await self.stream.receive_some(RECEIVE_SIZE)  # type: ignore[union-attr]
        await trio.lowlevel.checkpoint_if_cancelled()
        data = recv_nowait(raw)
        if data is not None:
            await trio.lowlevel.cancel_shielded_checkpoint()
            return data
        while data is None:
            await trio.lowlevel.wait_readable(raw)
            data = recv_nowait(raw)
        return data

    def waiting_for_request(self) -> None:
        """No request and no partial frame: the broker's IdleConnections closes this connection
        if it stays so for connections.max.idle.ms (``expire``)."""
        self.broker.idle.waiting(self, io_now() + self.broker.config.connections_max_idle_ms / 1000)

    def closed_while_waiting(self) -> None:
        """The wait for a request ended with ClosedResourceError: raise CloseConnection if the
        idle reaper closed it (``expire``); else the caller re-raises."""
        if self.expired:
            raise CloseConnection(f"idle for more than "
                                  f"{self.broker.config.connections_max_idle_ms} ms "
                                  "(connections.max.idle.ms)", "idle") from None

    async def read_more(self) -> bool:
        """Read once into the queue with a frame partly read (it must be complete in time), or
        with no socket of our own to wait on; False at end of stream. Raises CloseConnection
        on a timeout. (A connection waiting for its next request on its own socket waits in
        ``serve_connection`` itself.)"""
        timeout_ms = self.broker.config.frame_read_timeout_ms
        if not self.frames.buffered:
            # no stdlib socket (a stream that is not trio's SocketStream): wait via the stream
            self.waiting_for_request()
            try:
                data = await self._receive()
            except trio.ClosedResourceError:
                self.closed_while_waiting()
                raise
            finally:
                self.broker.idle.active(self)
            self.expired = False
            if not data:
                return False
            self._take(data)
            return True
        with trio.move_on_at(self.frame_started + timeout_ms / 1000):
            data = await self._receive()
            if not data:
                return False
            self._take(data)
            return True
        raise CloseConnection(f"frame not complete within {timeout_ms} ms "
                              "(emu.frame.read.timeout.ms)", "frame read timeout")

    def expire(self) -> None:
        """Close as idle: wake the read waiting on the socket (IdleConnections.run)."""
        self.expired = True
        trio.lowlevel.notify_closing(self._raw if self._raw is not None
                                     else getattr(self.sock, "transport", self.sock))

    async def _until_hangup(self) -> None:
        """Keep reading while a request is parked; return when the client has gone."""
        try:
            while True:
                if self.frames.buffered + sum(map(len, self.queue)) > PARKED_READ_LIMIT:
                    await trio.sleep_forever()  # enough queued; the parked request ends first
                data = await self._receive()
                if not data:
                    break
                self._take(data)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError, DecodeError):
            pass  # any of these ends the connection once the parked request is released
        self.eof = True

    async def park(self, wait: Callable[[], Awaitable[T]] | Pending) -> T | None:
        """Run ``wait()`` -- a request waiting for data or a delay -- or wait for a request
        parked in the coordinator to be answered (a ``Pending``), unless the client goes first:
        then raise PeerGone, so the request is forgotten at once."""
        await self.flush()  # answers to earlier requests must not wait behind a parked one
        if isinstance(wait, Pending):
            await self._park_pending(wait)
            return None
        if wait.__class__ is Watch:  # a long-polling fetch: one cancel scope, as _park_pending
            if not await wait.wait(self._until_hangup):
                raise PeerGone("closed by peer while its request was parked")
            return None
        result: list[T] = []
        async with trio.open_nursery() as nursery:
            async def watch() -> None:
                await self._until_hangup()
                nursery.cancel_scope.cancel()
            nursery.start_soon(watch)
            result.append(await wait())
            nursery.cancel_scope.cancel()
        if not result:
            raise PeerGone("closed by peer while its request was parked")
        return result[0]

    def park_on_socket(self, parked: Pending) -> bool:
        """Begin the wait for a request ``_process`` handed back parked: the connection's own
        read, in ``serve_connection``, woken by the answer (``Pending.resolve``); False if it is
        answered already."""
        if parked.resolved:
            return False
        parked.socket = self._raw
        return True

    async def wait_parked(self, parked: Pending) -> bytearray:
        """The response frame of a request ``_process`` handed back parked, waited for here (no
        stdlib socket to wait on: a stream not trio's SocketStream); PeerGone if the client goes."""
        try:
            await self.flush()  # answers to earlier requests must not wait behind this one
            await self._park_pending(parked)
        finally:
            if not parked.resolved:
                self.broker.forget(parked.request_id)
        return answer_parked(self.broker, self, parked)

    async def _park_pending(self, pending: Pending) -> None:
        """Wait in this task for the coordinator's answer to ``pending``: the connection goes on
        reading (frames queue up; the stream's end means the client left) until the answer's
        ``wake`` cancels that read. One cancel scope, where ``park`` needs a nursery and a
        second task -- and a group of 5000 members forming parks 5000 requests at once."""
        if pending.resolved:  # answered while the flush above waited
            return
        with trio.CancelScope() as scope:
            pending.wake = scope.cancel
            await self._until_hangup()
        pending.wake = None
        if not pending.resolved:
            raise PeerGone("closed by peer while its request was parked")

    # ConnectionInfo.park is the connection itself, called as ``park``: no bound method kept
    __call__ = park

    # -- writing ---------------------------------------------------------------------------
    def enqueue(self, data: bytearray | list) -> None:
        """Queue one response frame: a bytearray, or a list of buffers (a response carrying
        stored batches, protocol/spliced.py)."""
        out = self.out
        if data.__class__ is list:
            if out:
                out.extend(data)  # type: ignore[union-attr]
            else:
                self.out = list(data)
            self.vectored = True
        elif out:
            out.append(data)  # type: ignore[union-attr]
        else:
            self.out = [data]  # type: ignore[list-item]

    async def flush(self) -> bool:
        """Write the queued responses, what the batch emitted delivered first (every wait starts
        here); True if there were any: then it was a schedule point (the next read need not be)."""
        observation = self.broker.observation
        if observation.held:
            observation.release()
        out = self.out
        if out:
            self.out = ()
            if self.vectored:
                self.vectored = False
                await send_vectored(self.sock, out)
            else:
                data = out[0] if len(out) == 1 else b"".join(out)
                out = ()
                raw = self._raw
                if raw is not None:
                    # trio's socket send, the response let go before any checkpoint: thousands
                    # of connections answered in one scheduler batch would otherwise each hold
                    # theirs until the next (the allocator then keeps that peak)
                    await trio.lowlevel.checkpoint_if_cancelled()
                    sent = send_nowait(raw, data)
                    if sent == len(data):
                        data = None  # type: ignore[assignment]
                        await trio.lowlevel.cancel_shielded_checkpoint()
                        return True
                    if sent:
                        data = memoryview(data)[sent:]  # type: ignore[assignment]
                await send_all(self.sock, data)
            return True
        return False


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
                    # one clock reading per batch, then one per request (``_process``); what
                    # the batch emits is delivered when it ends (``flush``), not by waking the
                    # delivery task (observe.py, ``held``)
                    observation.mark = perf_now()
                    observation.hold()
                else:
                    observation.mark = None
                frames.reverse()  # type: ignore[union-attr]
                while frames:
                    # popped and handed over: no frame is kept once its request is decoded
                    response = await _process(broker, conn, info, frames.pop())  # type: ignore[union-attr]
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
            if raw is None or conn.frames.buffered:
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


async def _process(broker: Broker, conn: Connection, info: ConnectionInfo,
                   frame: bytes) -> bytearray | list | None:
    observation = broker.observation
    # Observed, one clock reading per request: the one that ends the previous request of this
    # batch (or the batch's own, serve_connection) starts this one -- as on Kafka, which reads a
    # request only once the previous one is answered; the encoding of that previous response (a
    # µs or two) is in the latency. None: not observed when the batch began.
    started = observation.mark
    if conn.auth is not None:  # SASL: the authenticator answers or lets the request pass
        answer = await conn.auth.gate(conn, info, frame)
        if answer is not None:
            return answer
    api_key, version, correlation_id = peek_api(frame)
    try:
        handler = HANDLERS[api_key]  # (a loaded entry: a plain dict lookup, no call of ours)
    except KeyError:
        raise CloseConnection(f"unknown api key {api_key}", "unknown api key") from None
    api = handler.api
    supported = broker.advertised.get(api_key)
    # (Versions.__contains__ written out: one Python call less per request)
    if supported is None or not supported.lo <= version <= supported.hi:
        if api_key == API_VERSIONS:
            # KIP-511: answer in v0 with UNSUPPORTED_VERSION and our ApiVersions range, unparsed.
            return encode_response(api, 0, correlation_id,
                                   unsupported_version_response(broker))
        raise CloseConnection(f"unsupported {api.name} version {version} "
                              f"(supported {supported or 'none'})", "unsupported version")
    header, request, trailing = decode_request(api, version, frame)
    if started is None:  # unobserved: let it go (a leader's SyncGroup for 5000: ~300 KB)
        frame = None  # type: ignore[assignment]  # (observed: its record may keep it)
    if trailing:
        # Kafka's request parser ignores bytes after the body, and real clients rely on it:
        # librdkafka 2.16 sends Metadata v13 with three extra bytes (list_topics()).
        log.debug("%s: ignoring %d bytes after %s v%d", info.peer, trailing, api.name, version)
    # RequestContext(...) in its two steps: a class called with keywords packs them in a dict
    ctx = _new(RequestContext)
    RequestContext.__init__(ctx, broker=broker, api=api, version=version,
                            correlation_id=correlation_id, client_id=header.client_id or "",
                            connection=info, request_id=broker.new_request_id(),
                            deferrable=True)
    if broker.authorizer is not None:  # ACLs: one check before the handler, by Kafka's table
        from ..security.authorize import guarded
        handler = guarded(handler)
    faults = broker.faults  # None unless a control-plane fault rule can fire
    fault = (faults.match(api_key, version, ctx.client_id, request, info.principal, info.listener)
             if faults is not None else None)
    if fault is None:
        try:
            response = await handler.fn(ctx, request)
        except KafkaError as exc:
            # Kafka's handleError: the request fails as a whole, answered in its own shape
            response = error_response(api, version, request, exc.code, exc.message)
        if response.__class__ is Pending:
            # the connection waits for the answer (serve_connection), then responds
            # through answer_parked with what is kept here
            # what its RequestHandled row reads, not the whole decoded request (request_facts.py),
            # sharing the group's and the member's strings
            facts = parked_request(request)
            if facts is not request:
                facts.group_id, facts.member_id, response.client_id = (
                    broker.coordinator.own_ids(facts.group_id, facts.member_id,
                                               header.client_id))
            else:
                response.client_id = header.client_id
            response.request, response.started, response.api_key = facts, started, api_key
            response.version, response.correlation_id = version, correlation_id
            return response
    else:
        ctx.deferrable = False  # the fault's action may still run after the handler
        response = await carry_out(broker, conn, ctx, handler, request, fault)
    emit = observation.emit  # a sink may have subscribed while the request was parked
    data = None  # the response frame, once made
    if emit is not None:
        # RequestHandled as a row (event_rows.py): the same fields, without building the object
        observation.mark = done = perf_now()
        if (version <= observation.by_frame.get(type(request), -1) and started is not None
                and fault is None):  # (a Heartbeat, a commit, traced alone: frame_rows.py)
            data = encode_response(api, version, correlation_id, response)
            if len(data) + len(frame) <= FRAME_RECORD_LIMIT:
                emit((REQUEST_FRAME, frame, data, started, done,  # (at_ms, latency when read)
                      broker.clock.ms_constants or broker.clock.ms_at(done), conn.id, conn.peer,
                      info.client_software_name, info.client_software_version))
                return data
        if type(request) in observation.by_reference:  # (a Heartbeat, with the timeline alone)
            emit((REQUEST_REFS, request, response, started, done,  # (ms_later: at_ms when read)
                  broker.clock.ms_later or broker.clock.ms_at(done), conn.id, conn.peer,
                  api.name, api_key, version, correlation_id, header.client_id,
                  info.client_software_name, info.client_software_version))
        elif ((read := observation.by_answer.get(type(request))) is not None
              and fault is None and started is not None and len(frame) <= FRAME_RECORD_LIMIT
              and (answer := read(request, response)) is not None):
            # (a Fetch, traced alone: its frame and the row's share of the answer, frame_rows.py)
            emit((REQUEST_FRAME, frame, answer, started, done,
                  broker.clock.ms_constants or broker.clock.ms_at(done), conn.id, conn.peer,
                  info.client_software_name, info.client_software_version))
        else:
            make = (REQUEST_ROWS.get(type(request), _NO_MAKERS).get(type(response))
                    or request_row_maker(type(request), type(response)))
            cache = broker.clock.ms_cache  # (Clock.ms_at, its answer within the millisecond)
            emit(make(request, response, (done - started) * 1000 if started is not None else 0.0,
                      broker.topics,
                      cache[2] if cache[0] <= done < cache[1] else broker.clock.ms_at(done),
                      conn.id, conn.peer, api.name, api_key, version, correlation_id,
                      header.client_id, info.client_software_name, info.client_software_version))
    if fault is not None and fault.action == "close_after":
        # applied (and recorded above), but the client never sees the answer
        raise FaultClose(f"closed by fault rule {fault.rule_id} after {api.name} was applied")
    if response is None:
        return None
    if data is None:
        data = (encode_response_parts if api_key == FETCH else encode_response)(
            api, version, correlation_id, response)
    if fault is not None and fault.action == "throttle" and client_throttles(api.name, version):
        # KIP-219: answer at once, then read nothing more from this client for the throttle time
        conn.enqueue(data)
        await conn.park(partial(trio.sleep, fault.delay_ms / 1000))
        if observation.emit is not None:  # the next request's latency starts after the throttle
            observation.mark = perf_now()
        return None
    return data
