"""Keyed timers with absolute deadlines.

Kafka's coordinator timer is keyed: scheduling a key that already exists replaces it, cancelling
a key removes it. We keep a dict ``key -> entry`` plus a heap of ``(deadline, seq, entry)``
tuples, compared in C (an entry class with ``__lt__`` cost a Python call per comparison).

Ties between equal deadlines fire in scheduling order (a sequence number), which keeps expiry
deterministic.

Rescheduling is lazy when the deadline does not move earlier -- the common case: every
heartbeat and commit pushes its member's session deadline later. The entry is updated in place
and its heap tuple, which now sorts no later than the entry's real (deadline, seq), is left
where it is; when such a stale tuple reaches the top it is replaced by the real one
(``_settle``). So a heartbeat costs a dict lookup and two stores, and the heap holds about one
tuple per live key. A reschedule to an earlier deadline, and a cancel, mark the old entry dead
instead; dead tuples are skipped at the top, and the heap is rebuilt when they outnumber the
live ones so it cannot grow without bound.
"""

from __future__ import annotations

import heapq
from typing import Any, Hashable, Iterator

_heappop = heapq.heappop
_heappush = heapq.heappush
_heapreplace = heapq.heapreplace


class _Entry:
    __slots__ = ("deadline", "seq", "key", "payload", "alive")

    def __init__(self, deadline: int, seq: int, key: Hashable, payload: Any) -> None:
        self.deadline = deadline
        self.seq = seq
        self.key = key
        self.payload = payload
        self.alive = True


class Timers:
    def __init__(self) -> None:
        self._live: dict[Hashable, _Entry] = {}
        # Read, never written, outside: its first tuple's deadline is no later than any live
        # timer's (a stale or dead top only sorts early), so an empty heap or a later top says
        # for sure that nothing is due -- the coordinator's door asks that on every request,
        # without a call (``Coordinator.handle``).
        self.heap: list[tuple[int, int, _Entry]] = []
        self._seq = 0

    def schedule(self, key: Hashable, deadline: int, payload: Any = None) -> None:
        self._seq = seq = self._seq + 1
        old = self._live.get(key)
        if old is not None:
            if deadline >= old.deadline:
                # Not earlier: the heap tuple (old deadline, old seq) still sorts no later than
                # (deadline, seq); _settle puts it right when it reaches the top.
                old.deadline = deadline
                old.seq = seq
                old.payload = payload
                return
            old.alive = False
        entry = _Entry(deadline, seq, key, payload)
        self._live[key] = entry
        heap = self.heap
        _heappush(heap, (deadline, seq, entry))
        if len(heap) > 64 and len(heap) > 2 * len(self._live):
            self._compact()

    def cancel(self, key: Hashable) -> None:
        entry = self._live.pop(key, None)
        if entry is not None:
            entry.alive = False

    def deadline(self, key: Hashable) -> int | None:
        entry = self._live.get(key)
        return None if entry is None else entry.deadline

    def __contains__(self, key: Hashable) -> bool:
        return key in self._live

    def __len__(self) -> int:
        return len(self._live)

    def _settle(self) -> tuple[int, int, _Entry] | None:
        """The heap's top once it is live and exact (dead tuples dropped, stale ones moved)."""
        heap = self.heap
        while heap:
            top = heap[0]
            entry = top[2]
            if not entry.alive:
                _heappop(heap)
            elif top[1] != entry.seq:
                _heapreplace(heap, (entry.deadline, entry.seq, entry))
            else:
                return top
        return None

    def none_before(self, at_ms: int) -> bool:
        """True if no timer falls due before ``at_ms``; False: ``next_deadline`` says. Sure
        without settling the heap: every live timer has a heap tuple whose deadline is no later
        than its own (a later deadline is set in place, an earlier one pushed anew), so the
        top's deadline is at most the earliest live one."""
        heap = self.heap
        return not heap or heap[0][0] >= at_ms

    def next_deadline(self) -> int | None:
        top = self._settle()
        return None if top is None else top[0]

    def pop_due(self, now_ms: int) -> tuple[Hashable, int, Any] | None:
        """Remove and return the earliest (key, deadline, payload) with deadline <= now_ms."""
        heap = self.heap
        if not heap or heap[0][0] > now_ms:  # a stale top sorts early: nothing due either
            return None
        top = self._settle()
        if top is None or top[0] > now_ms:
            return None
        _heappop(heap)
        entry = top[2]
        del self._live[entry.key]
        entry.alive = False
        return entry.key, entry.deadline, entry.payload

    def items(self) -> Iterator[tuple[Hashable, int]]:
        for key, entry in self._live.items():
            yield key, entry.deadline

    def entries(self) -> Iterator[tuple[Hashable, int, Any]]:
        """Every live (key, deadline, payload), in no particular order."""
        for key, entry in self._live.items():
            yield key, entry.deadline, entry.payload

    def _compact(self) -> None:
        self.heap = [(e.deadline, e.seq, e) for e in self._live.values()]
        heapq.heapify(self.heap)
