"""The live state of one connection and its socket work: reading frames, parking, writing.

``connection.py``'s loop decides what happens; this class does the I/O it asks for, and is what
a handler reaches as ``ctx.connection.park``. Three jobs, each shaped by Kafka's "one request at
a time per connection" and by thousands of idle connections being normal:

- Reading: bytes from the socket are cut into frames (FrameBuffer) and queued; a frame that has
  started must complete within ``emu.frame.read.timeout.ms``. Reads go to the stdlib socket
  under trio's (``recv_nowait``, a wait for readability only when nothing is there), not through
  SocketStream, whose coroutine frames every idle connection would otherwise keep. The rest of
  a frame more than one read long is read with ``recv_into`` straight into a buffer of its
  announced size (FrameBuffer.room): a 500 KB Produce in about 2 reads instead of 8 and no join.
- Parking: a request that waits (the coordinator's Pending, a long-poll Fetch's Watch, a
  throttle delay) first flushes earlier answers, then keeps reading so the client's leaving is
  noticed at once (PeerGone), queueing pipelined frames up to PARKED_READ_LIMIT bytes.
- Writing: the answers to one read are queued and go out in one write; a response carrying
  stored batches (a Fetch) makes the queue "vectored", written unjoined with ``sendmsg``
  (vectored.py).

CloseConnection and PeerGone live here because this is where they are first raised; the loop's
error boundary (connection.py) turns them into a logged close.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import trio

from ..protocol.errors import DecodeError
from ..protocol.framing import FrameBuffer
from .clock import io_now
from .context import ConnectionInfo
from .request_facts import answer_parked
from .state import Broker, Pending
from .topics import Watch
from .vectored import (RECEIVE_SIZE, recv_into_nowait, recv_nowait, send_all, send_nowait,
                       send_vectored)

T = TypeVar("T")

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
        # io time the partial frame in ``frames`` began; None while no frame is partly read
        # (``frames.buffered`` is 0) -- the loop tests this slot once per request, not the
        # property (a Python call, about 900 instructions with its test), read only by ``_take``
        self.frame_started: float | None = None
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
        if queue:
            queue.extend(frames.split(data))
        else:
            self.queue = frames.split(data) or ()
        if frames.buffered:
            if self.frame_started is None:  # a frame begun by this read
                self.frame_started = io_now()
        else:
            self.frame_started = None

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

    async def _receive_into(self, room: memoryview) -> bool:
        """One read of a large frame's rest into ``room`` (``_receive``'s checkpoints and wait),
        the frame queued once complete; False at the stream's end."""
        raw = self._raw
        await trio.lowlevel.checkpoint_if_cancelled()
        n = recv_into_nowait(raw, room)
        if n is not None:
            await trio.lowlevel.cancel_shielded_checkpoint()
        else:
            while n is None:
                await trio.lowlevel.wait_readable(raw)
                n = recv_into_nowait(raw, room)
        room.release()
        if not n:
            return False
        frame = self.frames.filled(n)
        if frame is not None:
            self.frame_started = None  # (nothing else partly read: the frame had the socket)
            if self.queue:
                self.queue.append(frame)  # type: ignore[union-attr, arg-type]
            else:
                self.queue = [frame]  # type: ignore[list-item]
        return True

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
        if self.frame_started is None:
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
            if self._raw is not None:
                # a large frame's rest straight into its own buffer (FrameBuffer.room)
                room = self.frames.room(RECEIVE_SIZE)
                if room is not None:
                    return await self._receive_into(room)
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
        if wait.__class__ is Watch:  # a long-polling fetch
            if not await (wait.wait(self._until_hangup) if self._raw is None
                          else self._park_watch(wait)):
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

    async def _park_watch(self, watch: Watch) -> bool:
        """A long-polling Fetch's wait: read on, to notice the client leaving, until an append
        wakes ``watch`` -- by ``notify_closing`` on this socket, as ``Pending.resolve`` wakes a
        parked request: the read ends in ClosedResourceError, which costs about half of a
        cancelled scope's Cancelled -- or until its deadline (the scope's). False if the
        client went."""
        if watch.woken:
            return True
        raw = self._raw
        with watch.scope() as scope:
            try:
                watch.socket = raw
                while not watch.woken:
                    if self.frames.buffered + sum(map(len, self.queue)) > PARKED_READ_LIMIT:
                        watch.socket, watch.wake = None, scope.cancel
                        await trio.sleep_forever()  # enough queued: until the append or deadline
                    data = recv_nowait(raw)
                    if data is None:
                        await trio.lowlevel.wait_readable(raw)
                        continue
                    if not data:
                        self.eof = True  # the client left
                        break
                    self._take(data)
                    data = None
            except trio.ClosedResourceError:
                if not watch.woken:  # (woken: the append's notify_closing)
                    self.eof = True
            except (OSError, trio.BrokenResourceError, DecodeError):
                self.eof = True  # ends the connection once the fetch is released
            finally:
                watch.socket = watch.wake = None
        return not self.eof

    def park_on_socket(self, parked: Pending) -> bool:
        """Begin the wait for a request ``handle_frame`` handed back parked: the connection's own
        read, in ``serve_connection``, woken by the answer (``Pending.resolve``); False if it is
        answered already."""
        if parked.resolved:
            return False
        parked.socket = self._raw
        return True

    async def wait_parked(self, parked: Pending) -> bytearray:
        """The response frame of a request ``handle_frame`` handed back parked, waited for here (no
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
