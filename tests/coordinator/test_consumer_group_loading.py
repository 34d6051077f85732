"""A consumer (KIP-848) group across a coordinator move: unloaded with its timers stopped, loaded
back with its members, epochs and assignments as stored and its timers restarted
(GroupMetadataManager.onUnloaded / onLoaded)."""

from __future__ import annotations

from kafka_emu.coordinator.consumer import MemberState

from .consumer_harness import CG, parts


def two_members_one_revoking():
    g = CG()
    g.hb("a", 0)
    g.hb("b", 0)
    g.hb("a", 1, owned={"t": range(6)})  # a is told to revoke 3-5 (rebalance timeout 30 s)
    assert g.member("a").state is MemberState.UNREVOKED_PARTITIONS
    return g


def snapshot(g):
    group = g.group()
    return (group.group_epoch, group.assignment_epoch, group.state,
            {m.member_id: (m.member_epoch, m.state, m.assigned, m.pending_revocation)
             for m in group.members.values()})


def test_an_unloaded_group_keeps_its_state_and_its_members_do_not_expire():
    g = two_members_one_revoking()
    before = snapshot(g)
    g.c.mark_dead("g", g.now)
    assert g.group().unloaded
    assert [d for d in g.c.deadlines() if d.group_id == "g"] == []  # its timers stopped
    g.advance(10 * 60_000)  # far beyond both timeouts: nobody is fenced meanwhile
    assert snapshot(g) == before


def test_a_loaded_group_restarts_session_and_revocation_timers_from_the_load():
    g = two_members_one_revoking()
    before = snapshot(g)
    g.c.mark_dead("g", g.now)
    g.advance(60_000)
    g.c.load_group("g", g.now)
    assert not g.group().unloaded and snapshot(g) == before
    deadlines = {(d.kind, d.member_id): d.deadline_ms - g.now for d in g.c.deadlines()}
    assert deadlines[("session", "a")] == deadlines[("session", "b")] == 45_000
    assert deadlines[("rebalance", "a")] == 30_000
    # the members go on with their epochs: a finishes revoking, b gets its partitions
    r = g.hb("a", 1, owned={"t": {0, 1, 2}})
    assert r.error == 0 and r.member_epoch == 2
    assert parts(g.hb("b", 2, owned={}).assignment) == {"t": {3, 4, 5}}
    assert g.group().state.value == "Stable" and g.group().group_epoch == before[0]


def test_timers_run_from_the_load_not_from_the_last_heartbeat():
    g = two_members_one_revoking()
    g.c.mark_dead("g", g.now)
    g.advance(40_000)
    g.c.load_group("g", g.now)
    g.advance(29_999)
    assert set(g.group().members) == {"a", "b"}
    g.advance(2)  # a's revocation deadline, counted from the load
    assert set(g.group().members) == {"b"}


def test_loading_a_group_that_was_not_unloaded_changes_nothing():
    g = two_members_one_revoking()
    deadlines = g.c.deadlines()
    g.advance(1_000)
    g.c.load_group("g", g.now)
    assert g.c.deadlines() == deadlines
