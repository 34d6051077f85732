"""Keyed timers with absolute deadlines.

Kafka's coordinator timer is keyed: scheduling a key that already exists replaces it, cancelling
a key removes it. We keep a dict ``key -> entry`` plus a heap of entries and delete lazily: a
cancelled or replaced entry stays in the heap, marked dead, and is skipped when it reaches the
top. Scheduling and cancelling are O(log n) / O(1); the heap is rebuilt when dead entries
outnumber live ones so it cannot grow without bound under heartbeat churn.

Ties between equal deadlines fire in scheduling order (a sequence number), which keeps expiry
deterministic.
"""

from __future__ import annotations

import heapq
from typing import Any, Hashable, Iterator


class _Entry:
    __slots__ = ("deadline", "seq", "key", "payload", "alive")

    def __init__(self, deadline: int, seq: int, key: Hashable, payload: Any) -> None:
        self.deadline = deadline
        self.seq = seq
        self.key = key
        self.payload = payload
        self.alive = True

    def __lt__(self, other: "_Entry") -> bool:
        return (self.deadline, self.seq) < (other.deadline, other.seq)


class Timers:
    def __init__(self) -> None:
        self._live: dict[Hashable, _Entry] = {}
        self._heap: list[_Entry] = []
        self._seq = 0

    def schedule(self, key: Hashable, deadline: int, payload: Any = None) -> None:
        old = self._live.get(key)
        if old is not None:
            old.alive = False
        self._seq += 1
        entry = _Entry(deadline, self._seq, key, payload)
        self._live[key] = entry
        heapq.heappush(self._heap, entry)
        if len(self._heap) > 64 and len(self._heap) > 2 * len(self._live):
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

    def next_deadline(self) -> int | None:
        heap = self._heap
        while heap and not heap[0].alive:
            heapq.heappop(heap)
        return heap[0].deadline if heap else None

    def pop_due(self, now_ms: int) -> tuple[Hashable, int, Any] | None:
        """Remove and return the earliest (key, deadline, payload) with deadline <= now_ms."""
        heap = self._heap
        while heap:
            top = heap[0]
            if not top.alive:
                heapq.heappop(heap)
                continue
            if top.deadline > now_ms:
                return None
            heapq.heappop(heap)
            del self._live[top.key]
            top.alive = False
            return top.key, top.deadline, top.payload
        return None

    def items(self) -> Iterator[tuple[Hashable, int]]:
        for key, entry in self._live.items():
            yield key, entry.deadline

    def entries(self) -> Iterator[tuple[Hashable, int, Any]]:
        """Every live (key, deadline, payload), in no particular order."""
        for key, entry in self._live.items():
            yield key, entry.deadline, entry.payload

    def _compact(self) -> None:
        self._heap = [e for e in self._heap if e.alive]
        heapq.heapify(self._heap)
