"""The server-side assignors of consumer groups: ``uniform`` and ``range`` (KIP-848).

Both are pure functions ``(members, topics, previous target) -> new target``, where ``members``
maps member id -> the set of topics it subscribes to (already resolved against the catalogue) and
``topics`` maps topic -> partition count (only existing topics). Output order is deterministic.

uniform (Kafka's UniformAssignor): spreads all partitions as evenly as possible over the members
that can take them, and is sticky: a partition stays with its previous target owner as long as that
keeps the spread within one partition. When every member subscribes to the same topics the result
is exactly balanced (counts differ by at most one); with different subscriptions each partition
goes to the least-loaded eligible member and partitions then move from the most- to the
least-loaded eligible member until no move improves the spread. Kafka's exact choice of which
partition moves differs (hash-map order); the balance and stickiness properties are the same.

range (Kafka's RangeAssignor): per topic, the subscribed members sorted by member id take
consecutive ranges of partitions, the first ``n % m`` members one extra. Members subscribing to
the same topics with the same partition counts therefore get the same partition numbers
(co-partitioning), which is what range is for.
"""

from __future__ import annotations

from typing import Callable, Mapping

from .model import Assignment

Members = Mapping[str, frozenset[str]]
Topics = Mapping[str, int]
Target = Mapping[str, Assignment]
Assignor = Callable[[Members, Topics, Target], dict[str, Assignment]]


def _pack(owned: dict[str, list[tuple[str, int]]]) -> dict[str, Assignment]:
    out: dict[str, Assignment] = {}
    for member_id, partitions in owned.items():
        by_topic: dict[str, set[int]] = {}
        for topic, p in partitions:
            by_topic.setdefault(topic, set()).add(p)
        out[member_id] = {t: frozenset(ps) for t, ps in sorted(by_topic.items())}
    return out


def range_assignor(members: Members, topics: Topics, previous: Target) -> dict[str, Assignment]:
    owned: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    for topic in sorted(topics):
        subscribers = sorted(m for m, subs in members.items() if topic in subs)
        if not subscribers:
            continue
        n = topics[topic]
        quota, extra = divmod(n, len(subscribers))
        start = 0
        for i, member_id in enumerate(subscribers):
            size = quota + (1 if i < extra else 0)
            owned[member_id].extend((topic, p) for p in range(start, start + size))
            start += size
    return _pack(owned)


def uniform_assignor(members: Members, topics: Topics, previous: Target) -> dict[str, Assignment]:
    if not members:
        return {}
    names = frozenset(topics)
    subscriptions = {subs & names for subs in set(members.values())}
    if len(subscriptions) == 1:
        return _homogeneous(sorted(members), sorted(next(iter(subscriptions))), topics, previous)
    return _heterogeneous(members, topics, previous)


def _all_partitions(topic_names, topics: Topics) -> list[tuple[str, int]]:
    return [(t, p) for t in topic_names for p in range(topics[t])]


def _previous_owner(previous: Target) -> dict[tuple[str, int], str]:
    owner = {}
    for member_id, assignment in previous.items():
        for topic, partitions in assignment.items():
            for p in partitions:
                owner[(topic, p)] = member_id
    return owner


def _homogeneous(member_ids: list[str], topic_names: list[str], topics: Topics,
                 previous: Target) -> dict[str, Assignment]:
    """Every member subscribes to the same topics. Partitions are numbered 0..P-1 across the
    topics in name order (plain ints keep this fast for large groups)."""
    base: dict[str, int] = {}
    total = 0
    for t in topic_names:
        base[t] = total
        total += topics[t]
    n = len(member_ids)
    quota, extra = divmod(total, n)
    position = {m: i for i, m in enumerate(member_ids)}
    kept: list[list[int]] = [[] for _ in range(n)]
    for member_id, assignment in previous.items():
        i = position.get(member_id)
        if i is None:
            continue
        for t, ps in assignment.items():
            b = base.get(t)
            if b is None:
                continue
            size = topics[t]
            kept[i].extend(b + p for p in ps if p < size)
    # Each member keeps up to its quota of its previous partitions; the members that held the most
    # keep the ``extra`` slots, so as few partitions as possible move.
    owned: list[list[int]] = [[] for _ in range(n)]
    taken = bytearray(total)
    for i in sorted(range(n), key=lambda i: (-len(kept[i]), i)):
        mine = sorted(kept[i])
        limit = quota
        if extra > 0 and len(mine) > quota:
            limit += 1
            extra -= 1
        owned[i] = mine[:limit]
        for g in owned[i]:
            taken[g] = 1
    free = iter([g for g in range(total) if not taken[g]])
    for i in range(n):  # fill up to the quota first, then hand out the remaining extras
        short = quota - len(owned[i])
        if short > 0:
            owned[i].extend(next(free) for _ in range(short))
    for i in range(n):
        if extra <= 0:
            break
        if len(owned[i]) == quota:
            owned[i].append(next(free))
            extra -= 1
    starts = [(base[t], t) for t in topic_names]
    out: dict[str, Assignment] = {}
    for i, m in enumerate(member_ids):
        by_topic: dict[str, set[int]] = {}
        for g in owned[i]:
            b, t = _topic_of(starts, g)
            by_topic.setdefault(t, set()).add(g - b)
        out[m] = {t: frozenset(ps) for t, ps in sorted(by_topic.items())}
    return out


def _topic_of(starts: list[tuple[int, str]], g: int) -> tuple[int, str]:
    lo, hi = 0, len(starts) - 1
    while lo < hi:  # the last topic whose base is <= g
        mid = (lo + hi + 1) // 2
        if starts[mid][0] <= g:
            lo = mid
        else:
            hi = mid - 1
    return starts[lo]


def _heterogeneous(members: Members, topics: Topics, previous: Target) -> dict[str, Assignment]:
    member_ids = sorted(members)
    eligible = {t: [m for m in member_ids if t in members[m]] for t in sorted(topics)}
    before = _previous_owner(previous)
    owner: dict[tuple[str, int], str] = {}
    load = {m: 0 for m in member_ids}
    for topic, candidates in eligible.items():
        for p in range(topics[topic]):
            prev = before.get((topic, p))
            if prev is not None and prev in load and topic in members[prev]:
                owner[(topic, p)] = prev
                load[prev] += 1
    for topic, candidates in eligible.items():
        if not candidates:
            continue
        for p in range(topics[topic]):
            if (topic, p) not in owner:
                best = min(candidates, key=lambda m: (load[m], m))
                owner[(topic, p)] = best
                load[best] += 1
    # Move partitions from loaded to lighter eligible members until no move narrows the gap.
    moved = True
    while moved:
        moved = False
        for tp in sorted(owner):
            current = owner[tp]
            best = min(eligible[tp[0]], key=lambda m: (load[m], m))
            if load[best] + 1 < load[current]:
                owner[tp] = best
                load[current] -= 1
                load[best] += 1
                moved = True
    owned: dict[str, list[tuple[str, int]]] = {m: [] for m in member_ids}
    for tp, m in owner.items():
        owned[m].append(tp)
    return _pack(owned)


ASSIGNORS: dict[str, Assignor] = {"uniform": uniform_assignor, "range": range_assignor}

# group.consumer.assignors accepts Kafka's class names as well as the short names.
CLASS_NAMES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}
