"""How much coordinator time a rebalance of an N-member group costs (not a test; prints figures).

For N in 10, 100, 1000 (or the sizes given on the command line) it measures, best of five runs:
- "first rebalance": N JoinGroups (v0-3 style, so one round trip each) into a new group, the
  timer tick that completes the join phase, then N SyncGroups (followers first, then the leader
  with all N assignments);
- "rejoin rebalance": the same group, now Stable, rebalancing again: N JoinGroups with the
  members' ids (the leader first), completion, N SyncGroups.

Only coordinator calls are timed (commands are built beforehand). Per-operation cost should stay
flat as N grows: the target is N=1000 joins + syncs under 50 ms.

    python bench/bench_coordinator.py [N ...]
"""

from __future__ import annotations

import gc
import itertools
import sys
import time

from kafka_emu.coordinator import Coordinator, JoinGroup, SyncGroup

PROTOCOLS = (("range", b"\x00\x00\x00\x00\x00\x01\x00\x05topic\xff\xff\xff\xff"),)


def _join(rid, member_id: str, client: str) -> JoinGroup:
    return JoinGroup(
        request_id=rid,
        group_id="bench",
        member_id=member_id,
        group_instance_id=None,
        session_timeout_ms=45_000,
        rebalance_timeout_ms=300_000,
        protocol_type="consumer",
        protocols=PROTOCOLS,
        client_id=client,
        client_host="/127.0.0.1",
        require_known_member_id=False,
    )


def _syncs(rids, members: list[str], leader: str, generation: int) -> list[SyncGroup]:
    commands = []
    for member in members:
        if member == leader:
            continue
        commands.append(_sync(next(rids), member, generation, ()))
    assignments = tuple((m, b"assignment-" + m.encode()) for m in members)
    commands.append(_sync(next(rids), leader, generation, assignments))
    return commands


def _sync(rid, member: str, generation: int, assignments) -> SyncGroup:
    return SyncGroup(
        request_id=rid,
        group_id="bench",
        generation_id=generation,
        member_id=member,
        group_instance_id=None,
        protocol_type="consumer",
        protocol_name="range",
        assignments=assignments,
    )


def run_once(n: int) -> tuple[float, float, int]:
    """Returns (first rebalance ms, rejoin rebalance ms, replies seen)."""
    counter = itertools.count()
    coord = Coordinator(new_member_uuid=lambda: str(next(counter)))
    rids = itertools.count()
    now = 1_000
    replies = 0

    joins = [_join(next(rids), "", f"client-{i}") for i in range(n)]
    t0 = time.perf_counter()
    for command in joins:
        replies += len(coord.handle(command, now))
    answered = coord.expire(now)
    t1 = time.perf_counter()
    replies += len(answered)
    results = [reply.result for reply in answered]
    members = [r.member_id for r in results]
    leader, generation = results[0].leader, results[0].generation_id
    syncs = _syncs(rids, members, leader, generation)
    t2 = time.perf_counter()
    for command in syncs:
        replies += len(coord.handle(command, now))
    t3 = time.perf_counter()
    assert coord.describe("bench").state == "Stable"
    first = (t1 - t0) + (t3 - t2)

    now += 10
    rejoins = [_join(next(rids), leader, "client-0")] + [
        _join(next(rids), m, f"client-{i}") for i, m in enumerate(members) if m != leader
    ]
    t0 = time.perf_counter()
    answered = []
    for command in rejoins:
        answered.extend(coord.handle(command, now))
    t1 = time.perf_counter()
    replies += len(answered)
    generation = answered[0].result.generation_id
    leader = answered[0].result.leader
    syncs = _syncs(rids, members, leader, generation)
    t2 = time.perf_counter()
    for command in syncs:
        replies += len(coord.handle(command, now))
    t3 = time.perf_counter()
    assert coord.describe("bench").state == "Stable" and generation == 2
    second = (t1 - t0) + (t3 - t2)
    return first * 1000, second * 1000, replies


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [10, 100, 1000]
    print(f"{'members':>8} {'first rebalance':>16} {'per op':>9} {'rejoin rebalance':>17} {'per op':>9}")
    for n in sizes:
        best_first = best_second = float("inf")
        for _ in range(5):
            gc.collect()
            first, second, replies = run_once(n)
            best_first = min(best_first, first)
            best_second = min(best_second, second)
        ops = 2 * n  # n joins + n syncs
        print(
            f"{n:>8} {best_first:>13.2f} ms {1000 * best_first / ops:>6.1f} us"
            f" {best_second:>14.2f} ms {1000 * best_second / ops:>6.1f} us"
        )
    print("(ms = coordinator time for n joins + n syncs, best of 5; per op = per join or sync)")


if __name__ == "__main__":
    main(sys.argv[1:])
