"""Time-driven behaviour (reference 3.5-3.7) and static membership (3.8)."""

from __future__ import annotations

from kafka_emu.coordinator import GroupState, MemberRemoved, RemovalReason

from .harness import E, Harness, subscription


def removals(h: Harness) -> list[tuple[str, RemovalReason]]:
    return [(e.member_id, e.reason) for e in h.events_of(MemberRemoved)]


# ================================================================= 3.5 pending member expiry
def test_pending_member_expires_after_its_session_timeout():
    """3.5: a pending id is dropped after the request's SessionTimeoutMs."""
    h = Harness()
    _, replies = h.join(session=7000, now=100)
    pending = next(iter(replies.values())).member_id
    assert h.coord.next_deadline() == 7100
    h.expire(7099)
    assert pending in h.group().pending_members
    h.expire(7100)
    assert pending not in h.group().pending_members
    assert removals(h) == [(pending, RemovalReason.PENDING_EXPIRED)]
    rid, replies = h.join(pending, now=7200)
    # The group still exists (Empty) but the id is unknown now.
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID


def test_pending_member_blocks_early_completion_until_it_expires():
    """3.2a / 3.5 / 3.6 edge: a pending member blocks early join completion; its expiry
    completes the join at once."""
    h = Harness()
    a, b = h.stable_group(2, session=60_000)
    _, replies = h.join(now=1000)  # a third consumer gets MEMBER_ID_REQUIRED
    assert next(iter(replies.values())).member_id  # a pending id, never used again
    rid_a, _ = h.join(a, session=60_000, now=1001)  # leader rejoin -> PreparingRebalance
    rid_b, replies = h.join(b, session=60_000, now=1002)
    assert replies == {}  # blocked by the pending id
    answered = h.expire(1000 + 10_000)  # pending id's session timeout
    assert set(answered) == {rid_a, rid_b}
    assert h.group().generation == 2


# ============================================================== 3.6 initial rebalance delay
def test_initial_delay_default_zero_completes_on_next_tick():
    """3.6 with delay 0 (kafka-emu default): the join completes on the next timer tick."""
    h = Harness()
    _, rid, replies = h.new_member(now=50)
    assert replies == {}
    assert h.coord.next_deadline() == 50
    assert rid in h.tick()


def test_initial_delay_waits_and_does_not_complete_early():
    """3.6: the initial rebalance waits >= delay even if everyone joined."""
    h = Harness(group_initial_rebalance_delay_ms=3000)
    _, rid, _ = h.new_member(now=0)
    assert h.expire(2999) == {}
    assert rid in h.expire(3000)


def test_initial_delay_extends_while_members_arrive_capped_by_rebalance_timeout():
    """3.6: each firing with a newly added member re-arms for min(delay, R), R' = max(R - d, 0);
    the total wait is capped by about the first member's rebalance timeout."""
    h = Harness(group_initial_rebalance_delay_ms=3000)
    h.join(v4=False, rebalance=7000, now=0)  # R = 4000
    h.join(v4=False, rebalance=7000, now=1000)  # new member -> extend at 3000
    assert h.expire(3000) == {}
    assert h.coord.next_deadline() == 6000  # d' = min(3000, 4000); R' = 4000 - 3000 = 1000
    h.join(v4=False, rebalance=7000, now=4000)  # another -> extend at 6000
    assert h.expire(6000) == {}
    assert h.coord.next_deadline() == 7000  # d'' = min(3000, 1000); R'' = max(1000 - 3000, 0)
    h.join(v4=False, rebalance=7000, now=6500)  # R'' == 0: no more extension
    answered = h.expire(7000)
    assert len(answered) == 4
    assert h.group().generation == 1


def test_initial_delay_kafka_default_from_config():
    h = Harness(group_initial_rebalance_delay_ms=3000)
    _, rid, _ = h.new_member(now=0)
    assert h.coord.next_deadline() == 3000


def test_member_session_expiry_bypasses_initial_delay_guard():
    """3.6 edge: a member expiring while PreparingRebalance, with everyone else joined, completes
    the join at once, even during the initial rebalance."""
    h = Harness(group_initial_rebalance_delay_ms=3000, new_member_join_timeout_ms=2000)
    a_rid, _ = h.join(v4=False, rebalance=60_000, now=0)
    b_rid, _ = h.join(v4=False, rebalance=60_000, now=1000)
    answered = h.expire(2000)  # a's new-member timeout; the delay step is not due until 3000
    assert answered[a_rid].error == E.UNKNOWN_MEMBER_ID
    assert answered[b_rid].error == E.NONE and answered[b_rid].generation_id == 1
    assert h.group().state is GroupState.COMPLETING_REBALANCE


# ======================================================================= 3.7 session timeout
def test_session_expiry_in_stable_removes_member_and_rebalances():
    """3.7: a member whose session lapses is removed; Stable -> PreparingRebalance."""
    h = Harness()
    a, b = h.stable_group(2)
    h.heartbeat(a, 1, now=9000)
    h.expire(10_000)  # b's session (set at join completion, t=0) lapses
    group = h.group()
    assert b not in group.members
    assert (b, RemovalReason.SESSION_EXPIRED) in removals(h)
    # a is alone and not parked: rebalance waits for its rejoin.
    assert group.state is GroupState.PREPARING_REBALANCE
    rid, replies = h.join(a, now=10_001)
    assert replies[rid].generation_id == 2


def test_member_parked_in_join_or_sync_does_not_expire_unless_new():
    """3.7: not-new members with a parked JoinGroup/SyncGroup count as alive."""
    h = Harness()
    a, b = h.stable_group(2, session=6000, rebalance=60_000)
    rid_a, _ = h.join(a, session=6000, rebalance=60_000, now=100)  # a parked (not new)
    h.heartbeat(b, 1, now=5000)
    h.expire(6100)  # a's session deadline passes while parked
    assert a in h.group().members
    h.expire(11_000)  # b stops heartbeating -> removed -> all joined -> complete
    assert b not in h.group().members
    assert h.group().generation == 2


def test_new_member_join_timeout_removes_parked_new_member():
    """3.7: a member added by JoinGroup gets the fixed new-member join timeout (300000 ms); if
    the rebalance drags on it is removed with UNKNOWN_MEMBER_ID."""
    h = Harness()
    a, b = h.stable_group(2, session=600_000, rebalance=900_000)
    h.join(a, session=600_000, rebalance=900_000, now=1000)  # rebalance; b never rejoins
    rid_new, _ = h.join(v4=False, session=600_000, rebalance=900_000, now=2000)
    answered = h.expire(2000 + 300_000)
    assert answered[rid_new].error == E.UNKNOWN_MEMBER_ID and answered[rid_new].member_id == ""
    assert any(r is RemovalReason.NEW_MEMBER_TIMEOUT for _, r in removals(h))


def test_rebalance_timeout_removes_non_rejoined_dynamic_members():
    """3.7 rebalance timeout: dynamic members that did not rejoin are removed at the deadline."""
    h = Harness()
    a, b = h.stable_group(2, session=100_000, rebalance=20_000)
    rid, _ = h.join(a, session=100_000, rebalance=20_000, now=50)
    answered = h.expire(50 + 20_000)
    assert answered[rid].generation_id == 2
    assert (b, RemovalReason.REBALANCE_TIMEOUT) in removals(h)


def test_sync_timeout_removes_members_that_never_synced():
    """3.7 sync timer: members (static too) that never sent SyncGroup in this generation are
    removed when it fires, and a new rebalance starts."""
    h = Harness()
    ids = [h.new_member(session=60_000, rebalance=20_000)[0] for _ in range(2)]
    h.join(instance="s", session=60_000, rebalance=20_000)
    h.tick()
    static_id = h.group().static_members["s"]
    leader = ids[0]
    h.sync(leader, 1, [])
    assert h.state() == "Stable"
    h.expire(20_000)
    group = h.group()
    assert ids[1] not in group.members and static_id not in group.members
    assert (static_id, RemovalReason.SYNC_TIMEOUT) in removals(h)
    assert group.state is GroupState.PREPARING_REBALANCE


def test_answering_parked_sync_resets_session():
    """3.7: propagation of the assignment resets the session of every answered member."""
    h = Harness()
    ids = [h.new_member()[0] for _ in range(2)]
    h.tick()
    h.sync(ids[1], 1, now=4000)
    h.sync(ids[0], 1, [], now=5000)
    assert h.coord.timer_deadlines()[("heartbeat", "g", ids[1])] == 15_000


def test_commit_resets_session_in_stable():
    """3.7 / 4.1: an OffsetCommit in Stable or PreparingRebalance resets the session."""
    h = Harness()
    (m,) = h.stable_group(1)
    h.commit([("t", 0, 5)], member_id=m, generation=1, now=4000)
    assert h.coord.timer_deadlines()[("heartbeat", "g", m)] == 14_000


# ============================================================== 3.8 static membership
def test_static_member_joins_without_member_id_required():
    """3.8: a static member is added on its first JoinGroup (no MEMBER_ID_REQUIRED step), with
    member id = instance id + "-" + uuid."""
    h = Harness()
    rid, replies = h.join(instance="inst")
    assert replies == {}
    assert h.group().static_members == {"inst": "inst-u1"}


def test_static_replacement_stable_no_rebalance_v9_leader_skip_assignment():
    """3.8 Stable, selection unchanged, v9+: no rebalance; the returning leader gets the member
    list with SkipAssignment=true; the new id keeps the old assignment."""
    h = Harness()
    a, b = h.stable_group(2, static=True)
    rid, replies = h.join(instance="i0", protocols=(("range", subscription("t", "z")),), now=10)
    result = replies[rid]
    new_id = result.member_id
    assert result.error == E.NONE and result.generation_id == 1
    assert result.leader == new_id and result.skip_assignment is True
    assert [m.member_id for m in result.members] == [b, new_id]
    group = h.group()
    assert group.state is GroupState.STABLE
    assert group.members[new_id].assignment == b"a0"
    assert (a, RemovalReason.REPLACED) in removals(h)
    # The old id is fenced everywhere now.
    assert h.heartbeat(a, 1, instance="i0").error == E.FENCED_INSTANCE_ID


def test_static_replacement_stable_pre_v9_reports_old_leader():
    """3.8 Stable, v0-8: Leader = leader id from before the replacement, Members empty."""
    h = Harness()
    a, b = h.stable_group(2, static=True)
    rid, replies = h.join(instance="i0", v9=False, now=10)
    result = replies[rid]
    assert result.leader == a and result.member_id != a
    assert result.members == () and result.skip_assignment is False
    # Follower replacement (v9): not leader -> no members, no skip.
    rid, replies = h.join(instance="i1", now=11)
    assert replies[rid].skip_assignment is False and replies[rid].members == ()


def test_static_replacement_stable_selection_change_rebalances():
    """3.8 Stable but selected protocol would change -> rebalance."""
    h = Harness()
    h.stable_group(1, static=True, protocols=(("range", b""), ("roundrobin", b"")))
    rid, replies = h.join(instance="i0", protocols=(("roundrobin", b""), ("range", b"")), now=10)
    # Single member: rebalance completes at once with the new selection.
    assert replies[rid].protocol_name == "roundrobin" and replies[rid].generation_id == 2


def test_static_replacement_fences_parked_requests_of_old_id():
    """3.8: parked JoinGroup/SyncGroup of the old id complete with FENCED_INSTANCE_ID."""
    h = Harness()
    for i in range(3):
        h.join(instance=f"i{i}")
    answered = h.tick()
    ids = [r.member_id for r in answered.values()]
    sync_rid, _ = h.sync(ids[1], 1, instance="i1")  # parked in CompletingRebalance
    rid, replies = h.join(instance="i1", now=5)
    assert replies[sync_rid].error == E.FENCED_INSTANCE_ID
    assert replies[sync_rid].assignment == b""
    # CompletingRebalance -> always rebalance; the new id's join is parked.
    assert rid not in replies and h.state() == "PreparingRebalance"
    # Replace i0 while its old id has a JoinGroup parked in PreparingRebalance (i2 missing).
    rid0, replies = h.join(ids[0], instance="i0", now=6)
    assert replies == {}
    rid_new0, replies = h.join(instance="i0", now=7)
    assert replies[rid0].error == E.FENCED_INSTANCE_ID and replies[rid0].member_id == ids[0]
    assert rid_new0 not in replies
    group = h.group()
    assert ids[0] not in group.members and group.static_members["i0"] != ids[0]
    assert group.leader_id == group.static_members["i0"]  # leadership moves to the new id


def test_static_members_kept_when_they_miss_a_rebalance():
    """3.8: a static member that does not rejoin is not removed at join completion and stays in
    the leader's member list with its last metadata."""
    h = Harness()
    a, b = h.stable_group(2, static=True, session=100_000)
    rid, _ = h.join(a, instance="i0", session=100_000, now=10)
    answered = h.expire(10 + 30_000)
    assert [m.member_id for m in answered[rid].members] == [a, b]
    assert b in h.group().members


def test_only_static_non_rejoined_members_rearms_join_timer():
    """3.2 step 3: if nobody rejoined but members remain, wait another rebalance timeout."""
    h = Harness()
    a, b = h.stable_group(2, static=True, session=200_000)
    h.leave(("", "i1"), now=10)  # Stable -> PreparingRebalance; a does not rejoin
    assert h.group().state is GroupState.PREPARING_REBALANCE
    h.expire(10 + 30_000)
    assert h.group().state is GroupState.PREPARING_REBALANCE
    assert h.coord.next_deadline() == 10 + 60_000


def test_timers_none_before_is_sure_with_stale_and_dead_heap_entries():
    """Timers.none_before (the broker's cheap "nothing due before the deadline it sleeps until")
    never says True when a live timer is due earlier, whatever the heap holds: deadlines moved
    later in place, moved earlier (pushed anew), cancelled."""
    import random

    from kafka_emu.coordinator.timers import Timers

    rng = random.Random(7)
    timers = Timers()
    live: dict[int, int] = {}
    for _ in range(3000):
        key, action = rng.randrange(40), rng.random()
        if action < 0.7:
            deadline = rng.randrange(1000)
            timers.schedule(key, deadline)
            live[key] = deadline
        elif action < 0.85:
            timers.cancel(key)
            live.pop(key, None)
        at = rng.randrange(1100)
        if timers.none_before(at):
            assert all(d >= at for d in live.values())
        earliest = min(live.values(), default=None)
        assert timers.next_deadline() == earliest
