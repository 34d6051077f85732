"""Idle connections closed after ``connections.max.idle.ms``, by one task for the whole broker.

Kafka's Selector keeps its connections in least-recently-active order and closes the oldest
once it has been idle too long (``idleExpiryManager``). We do the same: a connection waiting
for its next request registers here with its deadline and leaves when bytes arrive. Every
connection has the same limit and registers at the current time, so the dict's insertion order
is deadline order; ``run`` sleeps until the first deadline and expires what is due by waking
the connection's read with ``trio.lowlevel.notify_closing`` (its read then raises
ClosedResourceError, which the connection reports as idle). A cancel scope per read did the
same at about a kilobyte per idle connection (the scope, its status and its deadline entry);
here an idle connection costs one dict entry.
"""

from __future__ import annotations

from typing import Any

import trio

from .clock import io_now


class IdleConnections:
    def __init__(self) -> None:
        self._waiting: dict[Any, float] = {}  # connection -> deadline, oldest first
        self._wakeup: trio.Event | None = None  # set when the reaper waits for a first entry

    def waiting(self, conn: Any, deadline: float) -> None:
        """``conn`` now waits for a request; expire it at ``deadline`` (io time)."""
        self._waiting[conn] = deadline
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    def active(self, conn: Any) -> None:
        """``conn`` received bytes (or stopped waiting): no longer idle."""
        self._waiting.pop(conn, None)

    async def run(self) -> None:
        waiting = self._waiting
        while True:
            if not waiting:
                self._wakeup = trio.Event()
                await self._wakeup.wait()
                continue
            conn, deadline = next(iter(waiting.items()))
            if deadline > io_now():
                await trio.sleep_until(deadline)
                continue
            del waiting[conn]
            conn.expire()
