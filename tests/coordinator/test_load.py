"""Coordinator moves (broker/cluster_moves.py): ``mark_dead`` unloads a group, ``load_group``
reloads it as Kafka reads it back from ``__consumer_offsets`` -- from what was last stored
(reference 3.1: Stable with its members, Empty without), never from the unloaded state."""

from kafka_emu.errors import ErrorCode as E

from .harness import SESSION, Harness


def unload_and_load(h: Harness, now: int, group_id: str = "g") -> dict:
    replies = {r.request_id: r.result for r in h.coord.mark_dead(group_id, now)}
    assert h.state(group_id) == "Dead"
    assert h.coord.load_group(group_id, now) == []  # nothing is parked on a loaded group
    return replies


def test_a_stable_group_reloads_with_members_generation_and_assignments():
    h = Harness()
    members = h.stable_group(2)
    unload_and_load(h, now=1000)
    group = h.group()
    assert (h.state(), group.generation, list(group.members)) == ("Stable", 1, members)
    assert [m.assignment for m in group.members.values()] == [b"a0", b"a1"]
    assert group.leader_id == members[0]
    assert h.heartbeat(members[1], 1).error == E.NONE
    # session timers restarted at the load: a member silent for a session expires after it
    deadlines = h.coord.timer_deadlines()
    assert deadlines[("heartbeat", "g", members[0])] == 1000 + SESSION


def test_a_group_unloaded_mid_rebalance_reloads_as_last_stored():
    h = Harness()
    members = h.stable_group(1)
    newcomer, parked, _ = h.new_member()  # PreparingRebalance, the newcomer's join parked
    replies = unload_and_load(h, now=h.now)
    assert replies[parked].error == E.NOT_COORDINATOR  # as Kafka answers on unload (3.11)
    group = h.group()
    assert (h.state(), group.generation, list(group.members)) == ("Stable", 1, members)
    # the newcomer was never stored: its rejoin with that id is unknown
    _, answered = h.join(newcomer)
    assert next(iter(answered.values())).error == E.UNKNOWN_MEMBER_ID


def test_a_static_replacement_in_stable_is_what_reloads():
    h = Harness()
    old_ids = h.stable_group(2, static=True)
    _, answered = h.join(instance="i1")  # i1 comes back with a new member id, no rebalance
    new_id = next(iter(answered.values())).member_id
    assert new_id != old_ids[1]
    unload_and_load(h, now=h.now)
    assert list(h.group().members) == [old_ids[0], new_id]
    assert h.group().static_members == {"i0": old_ids[0], "i1": new_id}


def test_a_group_with_only_offsets_reloads_empty_and_one_never_stored_is_gone():
    h = Harness()
    h.commit([("t", 0, 5)], group_id="simple")
    h.join(group_id="fresh")  # MEMBER_ID_REQUIRED: nothing stored for it
    unload_and_load(h, now=10, group_id="simple")
    assert h.state("simple") == "Empty" and h.group("simple").generation == 0
    fetched = h.fetch(group_id="simple")
    assert [(p.topic, p.partition, p.offset) for p in fetched.partitions] == [("t", 0, 5)]
    h.coord.mark_dead("fresh", 10)
    h.coord.load_group("fresh", 10)
    assert h.group("fresh") is None
