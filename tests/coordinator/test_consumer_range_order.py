"""The server-side range assignor orders members as Kafka 4.x's RangeAssignor.sortMemberIds does
(issue #34 item 5): static members first by instance id, then dynamic ones by member id, ids
compared as Java's String.compareTo (UTF-16 code units). Before, members were ordered by member id
alone, so a static member restarted under a new member id could lose its partitions."""

from __future__ import annotations

from kafka_emu.coordinator.consumer.assignors import range_assignor, range_order

from .consumer_harness import CG, parts

T = frozenset({"t"})


def test_static_members_come_first_by_instance_id():
    members = {"a": T, "b": T, "c": T, "d": T}
    out = range_assignor(members, {"t": 6}, {}, instance_ids={"d": "i1", "c": "i2"})
    # d (i1), c (i2), then a, b: ranges of 2, 2, 1, 1
    assert out["d"] == {"t": frozenset({0, 1})}
    assert out["c"] == {"t": frozenset({2, 3})}
    assert out["a"] == {"t": frozenset({4})}
    assert out["b"] == {"t": frozenset({5})}


def test_order_compares_as_java_strings():
    # U+FF61 sorts after U+1F600 in Java (its high surrogate is 0xD83D), before it in Python
    assert range_order(["\U0001F600", "\uFF61"], None) == ["\U0001F600", "\uFF61"]
    assert range_order(["z", "y"], {"z": "\U0001F600", "y": "\uFF61"}) == ["z", "y"]


def test_restarted_static_member_keeps_its_range_under_a_new_member_id():
    g = CG(topics={"t": 4})
    g.hb("m-z", 0, instance_id="first", server_assignor="range")
    g.hb("m-a", 0, server_assignor="range")
    g.hb("m-z", 1, owned={"t": set(range(4))})
    target = g.group().target
    assert target["m-z"] == {"t": frozenset({0, 1})}  # static first, though "m-a" < "m-z"
    assert g.hb("m-z", -2, instance_id="first").error == 0  # restarts ...
    r = g.hb("m-0", 0, instance_id="first", server_assignor="range")  # ... as "m-0"
    assert parts(r.assignment) == {"t": {0, 1}}
    assert g.group().target["m-0"] == {"t": frozenset({0, 1})}
