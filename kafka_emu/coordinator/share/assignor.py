"""The share groups' server-side assignor, ``simple`` (Kafka 4.2's SimpleAssignor, KIP-932).

A pure function ``(members, topics, previous target) -> new target``, as the consumer assignors
(consumer/assignors.py): ``members`` maps member id -> subscribed topic names, ``topics`` maps
topic -> partition count (existing topics only; a subscription to a missing topic is ignored).

The algorithm, per Kafka's SimpleHomogeneousAssignmentBuilder (every member subscribes to the same
topics) and SimpleHeterogeneousAssignmentBuilder (per topic, over the members subscribing to it):
- with M members and P partitions, each partition wants ``sharing = ceil(M / P)`` members (so with
  more members than partitions a partition goes to several members), and member i of the ordered
  members wants ``ceil(x * (i + 1)) - ceil(x * i)`` partitions, ``x = sharing * P / M``;
- from the previous target, drop what a member no longer subscribes to, trim members holding more
  than they want, then partitions shared by more than ``sharing`` members;
- hand the partitions still wanting members to the members still wanting partitions, cycling
  through those members once per pass (a partition that no wanting member can take -- they all
  hold it already -- is left short, as Kafka tolerates).
Balance comes first, stickiness second.

Orders: Kafka iterates members in the order of a Java HashMap of their ids (modelled with
java_order.hashmap_order, so each member's wanted count is Kafka's) and partitions in the order of
a HashMap keyed by topic id and partition, which depends on random topic ids; here partitions go in
(topic name, partition) order. So which member gets which partition may differ from Kafka's, the
counts and the sharing do not.
"""

from __future__ import annotations

import math
from typing import Mapping

from ..java_order import hashmap_order
from .model import Assignment

NAME = "simple"

Members = Mapping[str, "tuple[str, ...] | frozenset[str]"]
Topics = Mapping[str, int]


def desired_counts(num_members: int, num_partitions: int) -> tuple[int, list[int]]:
    """(sharing per partition, wanted partitions per member index), as Kafka computes them."""
    if num_partitions == 0 or num_members == 0:
        return 0, [0] * num_members
    sharing = (num_members + num_partitions - 1) // num_partitions
    precise = sharing * num_partitions / num_members  # a Java double
    counts = [math.ceil(precise * (i + 1)) - math.ceil(precise * i) for i in range(num_members)]
    return sharing, counts


def assign(members: Members, topics: Topics,
           previous: Mapping[str, Assignment] | None = None) -> dict[str, Assignment]:
    previous = previous or {}
    order = hashmap_order(members)
    subscribed = {m: frozenset(t for t in members[m] if t in topics) for m in order}
    all_topics = sorted(set().union(*subscribed.values())) if subscribed else []
    # member -> topic -> partitions, starting from the previous target (only topics someone
    # subscribes to; Kafka's heterogeneous builder keeps the others, a leftover we drop)
    result: dict[str, dict[str, set[int]]] = {
        m: {t: set(ps) for t, ps in previous.get(m, {}).items() if t in all_topics}
        for m in order}
    if len(set(subscribed.values())) <= 1:  # homogeneous: all partitions over all members
        units = [(t, p) for t in all_topics for p in range(topics[t])]
        _assign_units(set(all_topics), units, order, list(order), result)
    else:
        for topic in all_topics:
            takers = [m for m in order if topic in subscribed[m]]
            _assign_units({topic}, [(topic, p) for p in range(topics[topic])], order, takers,
                          result)
    return {m: {t: frozenset(ps) for t, ps in sorted(result[m].items()) if ps} for m in order}


def _assign_units(unit_topics: set[str], units: list[tuple[str, int]], order: list[str],
                  takers: list[str], result: dict[str, dict[str, set[int]]]) -> None:
    """One builder run over ``units`` (the partitions of ``unit_topics``) and the members
    ``takers`` that subscribe to them; ``result`` holds every member's assignment and is
    updated in place."""
    sharing, counts = desired_counts(len(takers), len(units))
    wanted = {m: 0 for m in order}
    wanted.update(zip(takers, counts))
    unit_set = set(units)
    by_unit: dict[tuple[str, int], list[str]] = {}
    by_member: dict[str, list[tuple[str, int]]] = {}
    # 1. keep what each member held of these units (partitions that still exist)
    for m in order:
        for t in unit_topics & result[m].keys():
            for p in sorted(result[m][t]):
                if (t, p) in unit_set:
                    by_unit.setdefault((t, p), []).append(m)
                    by_member.setdefault(m, []).append((t, p))
                else:
                    result[m][t].discard(p)
    # 2. trim members holding more than they want (a member not subscribing wants none)
    for m in order:
        held = by_member.get(m, [])
        while len(held) > wanted[m]:
            t, p = held.pop()
            by_unit[(t, p)].remove(m)
            result[m][t].discard(p)
    # 3. trim partitions shared by more members than wanted
    for (t, p), holders in by_unit.items():
        while len(holders) > sharing:
            m = holders.pop()
            by_member[m].remove((t, p))
            result[m][t].discard(p)
    # 4. hand out what is still wanted, cycling through the members still wanting
    unfilled = [m for m in takers if len(by_member.get(m, ())) < wanted[m]]
    pos, assigned_this_pass = 0, False
    for unit in units:
        if not unfilled:
            break
        holders = by_unit.setdefault(unit, [])
        to_make = sharing - len(holders)
        while to_make > 0:
            if pos >= len(unfilled):
                if not assigned_this_pass:
                    break
                pos, assigned_this_pass = 0, False
                continue
            m = unfilled[pos]
            if m in holders:
                pos += 1
                continue
            holders.append(m)
            result[m].setdefault(unit[0], set()).add(unit[1])
            by_member.setdefault(m, []).append(unit)
            to_make -= 1
            assigned_this_pass = True
            if len(by_member[m]) >= wanted[m]:
                unfilled.pop(pos)
            else:
                pos += 1
