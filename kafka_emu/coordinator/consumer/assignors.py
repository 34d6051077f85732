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
    subscriptions = {frozenset(t for t in subs if t in topics) for subs in members.values()}
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
    partitions = _all_partitions(topic_names, topics)
    n = len(member_ids)
    quota, extra = divmod(len(partitions), n)
    before = _previous_owner(previous)
    kept: dict[str, list[tuple[str, int]]] = {m: [] for m in member_ids}
    for tp in partitions:
        owner = before.get(tp)
        if owner in kept:
            kept[owner].append(tp)
    # Each member keeps up to its quota of its previous partitions; the members that held the most
    # keep the ``extra`` slots, so as few partitions as possible move.
    unassigned: list[tuple[str, int]] = []
    owned: dict[str, list[tuple[str, int]]] = {}
    for m in sorted(member_ids, key=lambda m: (-len(kept[m]), m)):
        limit = quota + 1 if extra > 0 and len(kept[m]) > quota else quota
        if limit > quota:
            extra -= 1
        owned[m] = kept[m][:limit]
        unassigned.extend(kept[m][limit:])
    taken = {tp for ps in owned.values() for tp in ps}
    unassigned.extend(tp for tp in partitions if before.get(tp) not in kept and tp not in taken)
    unassigned.sort()
    it = iter(unassigned)
    for m in member_ids:  # fill up to the quota first, then hand out the remaining extras
        while len(owned[m]) < quota:
            owned[m].append(next(it))
    for m in member_ids:
        if extra <= 0:
            break
        if len(owned[m]) == quota:
            owned[m].append(next(it))
            extra -= 1
    return _pack({m: owned[m] for m in member_ids})


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
