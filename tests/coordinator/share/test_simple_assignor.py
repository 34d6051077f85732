"""Kafka 4.2's share ``simple`` assignor (share/assignor.py), by example and by property.

Properties, for any members, subscriptions, partition counts and previous target:
- every partition of a topic somebody subscribes to is assigned, only to its subscribers;
- no partition is shared by more than ceil(M / P) members (M subscribers, P partitions: over all
  topics when every member subscribes to the same ones, per topic otherwise);
- with the same subscriptions, member counts differ by at most one (balance);
- assigning again from its own result changes nothing (stickiness).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_emu.coordinator.share.assignor import assign, desired_counts

TOPICS = ["a", "b", "c"]


def test_desired_counts_as_kafka_computes_them():
    assert desired_counts(2, 3) == (1, [2, 1])
    assert desired_counts(3, 1) == (3, [1, 1, 1])
    assert desired_counts(3, 2) == (2, [2, 1, 1])
    assert desired_counts(4, 0) == (0, [0, 0, 0, 0])


def test_homogeneous_spreads_partitions_over_all_topics():
    out = assign({"m1": ("a", "b"), "m2": ("a", "b")}, {"a": 1, "b": 1})
    assert sorted(len(x) for x in out.values()) == [1, 1]  # one partition each, not both


def test_heterogeneous_balances_per_topic():
    out = assign({"m1": ("a",), "m2": ("b",), "m3": ("a", "b")}, {"a": 2, "b": 2})
    assert out["m1"] == {"a": frozenset({0})} and out["m2"] == {"b": frozenset({0})}
    assert out["m3"] == {"a": frozenset({1}), "b": frozenset({1})}


def test_missing_topics_and_no_members():
    assert assign({"m1": ("nope",)}, {"a": 1}) == {"m1": {}}
    assert assign({}, {"a": 1}) == {}


def test_sticky_when_a_member_joins():
    before = assign({"m1": ("a",), "m2": ("a",)}, {"a": 4})
    after = assign({"m1": ("a",), "m2": ("a",), "m3": ("a",)}, {"a": 4}, before)
    for m in ("m1", "m2"):  # the old members keep a subset of what they had
        assert after[m]["a"] <= before[m]["a"]


members_st = st.dictionaries(
    st.text(alphabet="abcdefghij0123456789", min_size=1, max_size=8),
    st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3, unique=True).map(tuple),
    max_size=12)
topics_st = st.fixed_dictionaries({t: st.integers(0, 7) for t in TOPICS})


@st.composite
def previous_st(draw, members, topics):
    prev = {}
    for m in members:
        prev[m] = {t: frozenset(draw(st.sets(st.integers(0, 9), max_size=4)))
                   for t in draw(st.lists(st.sampled_from(TOPICS), unique=True, max_size=3))}
    return prev


@settings(max_examples=300, deadline=None)
@given(data=st.data(), members=members_st, topics=topics_st)
def test_properties(data, members, topics):
    previous = data.draw(previous_st(members, topics)) if data.draw(st.booleans()) else {}
    out = assign(members, topics, previous)
    assert set(out) == set(members)
    subscribers = {t: [m for m in members if t in members[m]] for t in TOPICS}
    homogeneous = len({frozenset(s) for s in members.values()}) <= 1
    holders: dict[tuple[str, int], list[str]] = {}
    for m, assignment in out.items():
        for t, ps in assignment.items():
            assert m in subscribers[t], "a partition went to a member not subscribing to it"
            for p in ps:
                assert 0 <= p < topics[t]
                holders.setdefault((t, p), []).append(m)
    units = {t: topics[t] for t in TOPICS if subscribers[t]}
    for t, n in units.items():
        for p in range(n):
            assert holders.get((t, p)), f"{t}-{p} assigned to nobody"
    if homogeneous and members:
        total = sum(units.values())
        counts = [sum(len(ps) for ps in a.values()) for a in out.values()]
        assert max(counts) - min(counts) <= 1
    else:
        total = None
    for (t, _p), hs in holders.items():
        n = len(subscribers[t]) if total is None else len(members)
        parts = topics[t] if total is None else total
        assert len(hs) <= desired_counts(n, parts)[0]
    assert assign(members, topics, out) == out, "not stable under its own result"
