"""Shared helpers for the real-client integration tests: deadlines, names, group snapshots.

Every wait in these tests is a bounded loop around :func:`wait_until`, which fails with the
caller's message (and the last value seen) instead of hanging.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from kafka_emu.protocol.messages.consumer_protocol import decode_assignment

T = TypeVar("T")

# Fast group settings every client accepts: the broker's minimum session timeout is 6000 ms.
SESSION_TIMEOUT_MS = 6000
HEARTBEAT_MS = 500


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def wait_until(fn: Callable[[], T], *, timeout: float = 20.0, interval: float = 0.05,
               message: str = "condition", tick: Callable[[], Any] | None = None) -> T:
    """Call fn until it returns something truthy; run tick() between tries (e.g. poll clients)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}; last={last!r}")
        if tick is not None:
            tick()
        else:
            time.sleep(interval)


def described_assignments(emu, group_id: str) -> dict[str, set[tuple[str, int]]]:
    """member_id -> {(topic, partition)} decoded from DescribeGroups (Stable groups only)."""
    group = emu.describe_group(group_id)
    out: dict[str, set[tuple[str, int]]] = {}
    for m in group.members:
        tps: set[tuple[str, int]] = set()
        if m.assignment:
            for tp in decode_assignment(m.assignment).assigned_partitions:
                tps.update((tp.topic, p) for p in tp.partitions)
        out[m.member_id] = tps
    return out


def stable_assignment(emu, group_id: str, members: int) -> dict[str, set[tuple[str, int]]] | None:
    """The decoded assignment once the group is Stable with exactly `members` members."""
    group = emu.describe_group(group_id)
    if group.state != "Stable" or len(group.members) != members:
        return None
    return described_assignments(emu, group_id)


def client_assignments(consumers) -> list[set[tuple[str, int]]]:
    """What each consumer believes it owns (every client here has assignment() of TopicPartitions)."""
    return [{(tp.topic, tp.partition) for tp in c.assignment()} for c in consumers]


def settled_split(emu, consumers, group_id: str, partitions: int) -> list[set[tuple[str, int]]] | None:
    """The consumers' assignments once each holds a non-empty share of all `partitions` and the
    broker's Stable group agrees with them; None while a rebalance is still settling."""
    mine = client_assignments(consumers)
    if not all(mine) or sum(len(a) for a in mine) != partitions:
        return None
    broker = stable_assignment(emu, group_id, len(consumers))
    if broker is None or sorted(map(sorted, broker.values())) != sorted(map(sorted, mine)):
        return None
    return mine


def assert_disjoint_cover(assignments, topic: str, partitions: int) -> None:
    """Each partition of `topic` is owned by exactly one of the given assignment sets."""
    sets = [set(a) for a in assignments]
    for a, b in itertools.combinations(sets, 2):
        assert not (a & b), f"partitions assigned twice: {sorted(a & b)} in {sets}"
    union = set().union(*sets) if sets else set()
    assert union == {(topic, p) for p in range(partitions)}, f"assignment {sets} does not cover {topic}"


def poll_concurrently(consumers, timeout_ms: int = 50) -> list:
    """kafka-python: poll every consumer at once, each in its own thread, and return the
    records of all of them. A real application runs each consumer in its own thread; polling
    them one after another from one thread can stall a rebalance, since a consumer blocked in
    JoinGroup waits for members that only rejoin from their own poll()."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(consumers)) as pool:
        results = list(pool.map(lambda c: c.poll(timeout_ms=timeout_ms), consumers))
    return [r for batch in results for recs in batch.values() for r in recs]
