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

range (Kafka 4.x's RangeAssignor): per topic, the subscribed members in Kafka's order take
consecutive ranges of partitions, the first ``n % m`` members one extra. Members subscribing to
the same topics with the same partition counts therefore get the same partition numbers
(co-partitioning), which is what range is for. The order (RangeAssignor.sortMemberIds) puts static
members first, by instance id, then the others by member id: a static member restarted under a
new member id keeps its place and so its partitions. Ids compare as Java's String.compareTo does
(UTF-16 code units).
"""

from __future__ import annotations

from typing import Callable, Mapping

from .model import Assignment

Members = Mapping[str, frozenset[str]]
Topics = Mapping[str, int]
Target = Mapping[str, Assignment]
# (members, topics, previous, trusted=False, instance_ids=None); instance_ids maps the member ids
# of static members to their instance ids
Assignor = Callable[..., dict[str, Assignment]]


def java_key(text: str) -> bytes:
    """Sorts as Java's String.compareTo: by UTF-16 code units (Python compares code points, which
    differs above U+FFFF)."""
    return text.encode("utf-16-be", "surrogatepass")


def range_order(member_ids, instance_ids: Mapping[str, str] | None) -> list[str]:
    """Kafka's RangeAssignor.sortMemberIds: static members by instance id, then the rest by
    member id."""
    if not instance_ids:
        return sorted(member_ids, key=java_key)
    static = sorted((m for m in member_ids if m in instance_ids),
                    key=lambda m: java_key(instance_ids[m]))
    return static + sorted((m for m in member_ids if m not in instance_ids), key=java_key)


def _pack(owned: dict[str, list[tuple[str, int]]]) -> dict[str, Assignment]:
    out: dict[str, Assignment] = {}
    for member_id, partitions in owned.items():
        by_topic: dict[str, set[int]] = {}
        for topic, p in partitions:
            by_topic.setdefault(topic, set()).add(p)
        out[member_id] = {t: frozenset(ps) for t, ps in sorted(by_topic.items())}
    return out


def range_assignor(members: Members, topics: Topics, previous: Target, trusted: bool = False,
                   instance_ids: Mapping[str, str] | None = None) -> dict[str, Assignment]:
    owned: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    order = range_order(members, instance_ids)
    for topic in sorted(topics):
        subscribers = [m for m in order if topic in members[m]]
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


def uniform_assignor(members: Members, topics: Topics, previous: Target, trusted: bool = False,
                     instance_ids: Mapping[str, str] | None = None) -> dict[str, Assignment]:
    """``trusted``: ``previous`` was computed for these same topics and partition counts, so its
    partitions need no re-checking (a join in a large group then costs no per-partition work)."""
    if not members:
        return {}
    names = frozenset(topics)
    subscriptions = {subs & names for subs in set(members.values())}
    if len(subscriptions) == 1:
        return _homogeneous(sorted(members), sorted(next(iter(subscriptions))), topics, previous,
                            trusted)
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
                 previous: Target, trusted: bool = False) -> dict[str, Assignment]:
    """Every member subscribes to the same topics. Each member keeps up to its quota of its
    previous partitions (the members that held the most keep the ``extra`` slots), so as few
    partitions as possible move; the rest go to members below quota in member order. A member
    whose previous partitions all stay keeps the very same frozensets, so a join or leave in a
    large group costs about one step per member plus one per moved partition."""
    total = sum(topics[t] for t in topic_names)
    n = len(member_ids)
    quota, extra = divmod(total, n)
    wanted = set(topic_names)
    kept: dict[str, Assignment] = {}
    sizes: dict[str, int] = {}
    for m in member_ids:
        a = previous.get(m)
        if not a:
            sizes[m] = 0
            continue
        if not trusted and any(t not in wanted or (ps and max(ps) >= topics[t])
                               for t, ps in a.items()):
            a = {t: frozenset(p for p in ps if p < topics[t]) for t, ps in a.items() if t in wanted}
            a = {t: ps for t, ps in a.items() if ps}
        kept[m] = a
        sizes[m] = sum(map(len, a.values()))
    out: dict[str, Assignment] = {}
    released: list[tuple[str, int]] = []
    for m in sorted(member_ids, key=lambda m: (-sizes[m], m)):
        size = sizes[m]
        limit = quota
        if extra > 0 and size > quota:
            limit += 1
            extra -= 1
        if size <= limit:
            out[m] = kept.get(m, {})
            continue
        flat = sorted((t, p) for t, ps in kept[m].items() for p in ps)
        out[m] = _group(flat[:limit])
        released.extend(flat[limit:])
        sizes[m] = limit
    held = sum(sizes.values())
    if held + len(released) == total:
        free = sorted(released)
    else:  # partitions nobody held before: new partitions, or those of members who left
        taken = {(t, p) for a in out.values() for t, ps in a.items() for p in ps}
        free = [(t, p) for t in topic_names for p in range(topics[t]) if (t, p) not in taken]
    it = iter(free)
    grants: dict[str, list[tuple[str, int]]] = {}
    for m in member_ids:  # fill up to the quota first, then hand out the remaining extras
        short = quota - sizes[m]
        if short > 0:
            grants[m] = [next(it) for _ in range(short)]
            sizes[m] = quota
    for m in member_ids:
        if extra <= 0:
            break
        if sizes[m] == quota:
            grants.setdefault(m, []).append(next(it))
            extra -= 1
    for m, extra_tps in grants.items():
        merged = {t: set(ps) for t, ps in out[m].items()}
        for t, p in extra_tps:
            merged.setdefault(t, set()).add(p)
        out[m] = {t: frozenset(ps) for t, ps in sorted(merged.items())}
    return {m: out[m] for m in member_ids}


def _group(tps: list[tuple[str, int]]) -> Assignment:
    by_topic: dict[str, set[int]] = {}
    for t, p in tps:
        by_topic.setdefault(t, set()).add(p)
    return {t: frozenset(ps) for t, ps in sorted(by_topic.items())}


def _heterogeneous(members: Members, topics: Topics, previous: Target) -> dict[str, Assignment]:
    member_ids = sorted(members)
    eligible = {t: [m for m in member_ids if t in members[m]] for t in sorted(topics)}
    before = _previous_owner(previous)
    owner: dict[tuple[str, int], str] = {}
    load = {m: 0 for m in member_ids}
    for topic in eligible:
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
