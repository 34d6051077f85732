"""One vectored write of many buffers: how Fetch responses reach the socket without a copy.

A Fetch response comes out of the codec as a list of buffers, the stored record batches among
them (protocol/spliced.py). ``send_vectored`` hands them to the kernel with ``sendmsg`` -- the
kernel copies each into the socket once, and nothing is joined in Python. The connection
writes to its trio socket directly, SocketStream's ``send_all`` without the stream
(``send_all`` here): the connection loop is its socket's only writer, so the stream's guard
against concurrent sends is not needed, and an idle connection keeps no stream.

``sendmsg`` takes at most IOV_MAX buffers and, like ``send``, may take only part of them when
the socket's buffer fills: the cumulative ends of the buffers are computed once (in C), and
after each call a bisection finds the first buffer not fully sent -- so the Python work per
call does not grow with the number of batches. Where the platform has no ``sendmsg`` the
buffers are joined and sent with ``send_all``.

The calls that try a socket without waiting (``send_nowait``, ``recv_nowait``,
``recv_into_nowait``) live here too, beside the writes that wait.

Socket errors come out as OSError, where SocketStream would raise BrokenResourceError (the
connection treats them alike).
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

import trio

from ..protocol.spliced import Buffer

RECEIVE_SIZE = 1 << 16  # the most one read takes from a socket

try:
    IOV_MAX = min(os.sysconf("SC_IOV_MAX"), 1024)
except (AttributeError, ValueError, OSError):
    IOV_MAX = 16  # POSIX's minimum


async def send_all(sock: trio.socket.SocketType, data: Buffer) -> None:
    """Write all of ``data`` to ``sock`` (as SocketStream.send_all does)."""
    with memoryview(data) as view:
        total, size = 0, len(view)
        while total < size:
            with view[total:] as rest:
                total += await sock.send(rest)


async def send_vectored(sock: trio.socket.SocketType, buffers: Sequence[Buffer]) -> None:
    """Write every buffer, in order, to the trio socket ``sock``."""
    if not hasattr(sock, "sendmsg") or IOV_MAX < 2:
        await send_all(sock, b"".join(buffers))
        return
    ends = list(accumulate(map(len, buffers)))
    total = ends[-1] if ends else 0
    done = 0  # bytes written
    i = 0  # the first buffer not wholly written
    raw = getattr(sock, "_sock", None)
    if raw is not None and len(buffers) <= IOV_MAX:
        # the first try on the stdlib socket itself, as trio's sendmsg makes it (a checkpoint
        # if cancelled, the call, a schedule point if it went through) without the async
        # context manager and the partial around it: most responses go out whole here
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            done = raw.sendmsg(buffers)
        except BlockingIOError:
            pass
        if done == total:
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        i = bisect_right(ends, done)
    while done < total:
        start = ends[i] - len(buffers[i])
        first = buffers[i] if done == start else memoryview(buffers[i])[done - start:]
        done += await sock.sendmsg([first, *buffers[i + 1:i + IOV_MAX]])
        i = bisect_right(ends, done, i)


def send_nowait(raw, data: bytes | bytearray) -> int:
    """Bytes of ``data`` the socket took now (0 if none); a function of its own for the reason
    ``recv_nowait`` gives."""
    try:
        return raw.send(data)  # type: ignore[no-any-return]
    except BlockingIOError:
        return 0


def recv_nowait(raw) -> bytes | None:
    """What the socket has (b"" at its end), or None if nothing yet. A function of its own: the
    BlockingIOError's traceback makes a frame object of the frame it passes through, which a
    coroutine would keep for as long as it lives (about 200 bytes per waiting connection)."""
    try:
        return raw.recv(RECEIVE_SIZE)  # type: ignore[no-any-return]
    except BlockingIOError:
        return None


def recv_into_nowait(raw, view: memoryview) -> int | None:
    """Bytes the socket put into ``view`` now (as many as it has, up to the view's length; 0 at
    its end), or None if nothing yet (a function of its own, as ``recv_nowait`` is)."""
    try:
        return raw.recv_into(view)  # type: ignore[no-any-return]
    except BlockingIOError:
        return None
