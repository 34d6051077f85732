"""Scenario tests for the SyncGroup, Heartbeat and LeaveGroup tables of reference 3.10 (+3.11)."""

from __future__ import annotations

from kafka_emu.coordinator import GroupState, MemberRemoved, RemovalReason, RequestDropped

from .harness import E, Harness


def completing(h: Harness, n: int = 2) -> list[str]:
    """A group of n dynamic members in CompletingRebalance (generation 1); leader first."""
    ids = [h.new_member()[0] for _ in range(n)]
    h.tick()
    assert h.state() == "CompletingRebalance"
    return ids


# =============================================================================== SyncGroup
def test_sync_precheck_empty_group_id():
    """3.13: SyncGroup with GroupId "" -> INVALID_GROUP_ID(24)."""
    h = Harness()
    rid, replies = h.sync("m", 1, group_id="")
    assert replies[rid].error == E.INVALID_GROUP_ID


def test_sync_row_group_absent_or_empty():
    """3.10 SyncGroup "Group absent, or Empty" -> UNKNOWN_MEMBER_ID(25)."""
    h = Harness()
    rid, replies = h.sync("m", 0)
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID
    h.join()  # creates the group, Empty
    rid, replies = h.sync("m", 0)
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID


def test_sync_row_dead():
    """3.10 SyncGroup "Dead" -> COORDINATOR_NOT_AVAILABLE(15)."""
    h = Harness()
    (m,) = h.stable_group(1)
    h.coord.mark_dead("g", 5)
    rid, replies = h.sync(m, 1)
    assert replies[rid].error == E.COORDINATOR_NOT_AVAILABLE


def test_sync_row_member_validation():
    """3.10 SyncGroup "Member validation fails" -> 25 / 82."""
    h = Harness()
    h.stable_group(1, static=True)
    rid, replies = h.sync("nobody", 1)
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID
    rid, replies = h.sync("nobody", 1, instance="i0")
    assert replies[rid].error == E.FENCED_INSTANCE_ID
    rid, replies = h.sync("nobody", 1, instance="nope")
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID


def test_sync_row_generation_mismatch():
    """3.10 SyncGroup "GenerationId != group generation" -> ILLEGAL_GENERATION(22)."""
    h = Harness()
    (m,) = h.stable_group(1)
    rid, replies = h.sync(m, 7)
    assert replies[rid].error == E.ILLEGAL_GENERATION


def test_sync_row_protocol_mismatch_only_when_both_non_null():
    """3.10 SyncGroup "ProtocolType/Name mismatch (3.4)" -> 23; nulls are not compared."""
    h = Harness()
    (m,) = h.stable_group(1)
    rid, replies = h.sync(m, 1, protocol_type="connect")
    assert replies[rid].error == E.INCONSISTENT_GROUP_PROTOCOL
    rid, replies = h.sync(m, 1, protocol_name="roundrobin")
    assert replies[rid].error == E.INCONSISTENT_GROUP_PROTOCOL
    rid, replies = h.sync(m, 1, protocol_type=None, protocol_name=None)
    assert replies[rid].error == E.NONE


def test_sync_row_preparing_rebalance():
    """3.10 SyncGroup "PreparingRebalance" -> REBALANCE_IN_PROGRESS(27)."""
    h = Harness()
    leader, follower = h.stable_group(2)
    h.join(leader, now=5)
    rid, replies = h.sync(follower, 1)
    assert replies[rid].error == E.REBALANCE_IN_PROGRESS


def test_sync_row_completing_follower_parked_then_leader_answers_all():
    """3.10 SyncGroup "CompletingRebalance, follower" parked; "leader": assignments stored
    (missing members get empty bytes), every parked sync completes, group Stable."""
    h = Harness()
    leader, f1, f2 = completing(h, 3)
    rid1, replies = h.sync(f1, 1)
    assert replies == {}
    rid2, replies = h.sync(f2, 1)
    assert replies == {}
    rid_l, replies = h.sync(leader, 1, [(leader, b"L"), (f1, b"F1"), ("stranger", b"?")])
    assert set(replies) == {rid1, rid2, rid_l}
    assert replies[rid_l].assignment == b"L"
    assert replies[rid1].assignment == b"F1"
    assert replies[rid2].assignment == b""  # missing from the leader's list
    assert replies[rid1].protocol_type == "consumer" and replies[rid1].protocol_name == "range"
    assert h.state() == "Stable"


def test_sync_row_stable_immediate_assignment():
    """3.10 SyncGroup "Stable": immediate, member's stored assignment + protocol type/name."""
    h = Harness()
    a, b = h.stable_group(2)
    rid, replies = h.sync(b, 1)
    assert replies[rid].error == E.NONE and replies[rid].assignment == b"a1"
    assert replies[rid].protocol_name == "range"


def test_sync_superseded_parked_sync_is_dropped():
    """A second SyncGroup from the same member replaces the parked one, which Kafka never answers."""
    h = Harness()
    leader, follower = completing(h)
    first, _ = h.sync(follower, 1)
    second, _ = h.sync(follower, 1)
    _, replies = h.sync(leader, 1, [(follower, b"x")])
    assert second in replies and first not in replies
    assert [e.request_id for e in h.events_of(RequestDropped)] == [first]


def test_rebalance_from_completing_fails_parked_syncs_and_wipes_assignments():
    """3.11: a rebalance started while CompletingRebalance answers parked syncs with 27,
    empty assignment, null protocol; pending-sync timer cleared."""
    h = Harness()
    leader, follower = completing(h)
    rid, _ = h.sync(follower, 1)
    _, replies = h.leave(leader, now=10)
    assert replies[rid].error == E.REBALANCE_IN_PROGRESS
    assert replies[rid].protocol_type is None and replies[rid].protocol_name is None
    assert ("sync", "g") not in h.coord.timer_deadlines()


# =============================================================================== Heartbeat
def test_heartbeat_precheck_empty_group_id():
    h = Harness()
    assert h.heartbeat("m", 0, group_id="").error == E.INVALID_GROUP_ID


def test_heartbeat_row_group_absent():
    """3.10 Heartbeat "Group absent" -> UNKNOWN_MEMBER_ID(25)."""
    assert Harness().heartbeat("m", 0).error == E.UNKNOWN_MEMBER_ID


def test_heartbeat_row_dead():
    """3.10 Heartbeat "Dead" -> COORDINATOR_NOT_AVAILABLE(15)."""
    h = Harness()
    (m,) = h.stable_group(1)
    h.coord.mark_dead("g", 1)
    assert h.heartbeat(m, 1).error == E.COORDINATOR_NOT_AVAILABLE


def test_heartbeat_row_member_validation():
    """3.10 Heartbeat "Member validation fails" -> 25 / 82."""
    h = Harness()
    h.stable_group(1, static=True)
    assert h.heartbeat("nobody", 1).error == E.UNKNOWN_MEMBER_ID
    assert h.heartbeat("nobody", 1, instance="i0").error == E.FENCED_INSTANCE_ID


def test_heartbeat_row_generation_mismatch():
    """3.10 Heartbeat "GenerationId != group generation" -> ILLEGAL_GENERATION(22)."""
    h = Harness()
    (m,) = h.stable_group(1)
    assert h.heartbeat(m, 0).error == E.ILLEGAL_GENERATION


def test_heartbeat_row_empty():
    """3.10 Heartbeat "Empty" -> UNKNOWN_MEMBER_ID (via validation: Empty has no members)."""
    h = Harness()
    h.join()
    assert h.heartbeat("c-u1", 0).error == E.UNKNOWN_MEMBER_ID


def test_heartbeat_row_preparing_rebalance_resets_session():
    """3.10 Heartbeat "PreparingRebalance" -> 27, session timer still reset."""
    h = Harness()
    leader, follower = h.stable_group(2)
    h.join(leader, now=1000)
    assert h.heartbeat(follower, 1, now=2000).error == E.REBALANCE_IN_PROGRESS
    assert h.coord.timer_deadlines()[("heartbeat", "g", follower)] == 2000 + 10_000


def test_heartbeat_row_completing_and_stable_succeed_and_reset_session():
    """3.10 Heartbeat "CompletingRebalance, Stable" -> NONE, session timer reset."""
    h = Harness()
    leader, follower = completing(h)
    assert h.heartbeat(follower, 1, now=500).error == E.NONE
    assert h.coord.timer_deadlines()[("heartbeat", "g", follower)] == 10_500
    h.sync(follower, 1)
    h.sync(leader, 1, [])
    assert h.heartbeat(follower, 1, now=900).error == E.NONE
    assert h.coord.timer_deadlines()[("heartbeat", "g", follower)] == 10_900


# ============================================================================== LeaveGroup
def test_leave_precheck_empty_group_id():
    h = Harness()
    rid, replies = h.leave("m", group_id="")
    assert replies[rid].error == E.INVALID_GROUP_ID


def test_leave_row_group_absent():
    """3.10 LeaveGroup "Group absent": top-level 0, every member UNKNOWN_MEMBER_ID(25)."""
    h = Harness()
    rid, replies = h.leave("a", ("", "i"))
    result = replies[rid]
    assert result.error == E.NONE
    assert [(m.member_id, m.group_instance_id, m.error) for m in result.members] == [
        ("a", None, E.UNKNOWN_MEMBER_ID),
        ("", "i", E.UNKNOWN_MEMBER_ID),
    ]


def test_leave_row_dead():
    """3.10 LeaveGroup "Dead" -> top-level COORDINATOR_NOT_AVAILABLE(15)."""
    h = Harness()
    (m,) = h.stable_group(1)
    h.coord.mark_dead("g", 1)
    rid, replies = h.leave(m)
    assert replies[rid].error == E.COORDINATOR_NOT_AVAILABLE and replies[rid].members == ()


def test_leave_row_instance_id_only_removes_static_member():
    """3.10 LeaveGroup "MemberId \"\" + known instance id": static member removed, error 0."""
    h = Harness()
    a, b = h.stable_group(2, static=True)
    rid, replies = h.leave(("", "i1"), now=10)
    assert replies[rid].members[0].error == E.NONE
    assert b not in h.group().members
    assert h.state() == "PreparingRebalance"


def test_leave_row_unknown_or_missing_instance_id():
    """3.10 LeaveGroup "MemberId \"\" + unknown/no instance id" -> member 25."""
    h = Harness()
    h.stable_group(1, static=True)
    rid, replies = h.leave(("", "nope"), ("", None))
    assert [m.error for m in replies[rid].members] == [E.UNKNOWN_MEMBER_ID] * 2
    assert h.state() == "Stable"


def test_leave_row_pending_member_removed_and_counts_as_removal():
    """3.10 LeaveGroup "MemberId is pending": removed, error 0 -- and it starts a rebalance of a
    Stable group ("after >= 1 successful removal")."""
    h = Harness()
    h.stable_group(1)
    _, replies = h.join(now=5)
    pending = next(iter(replies.values())).member_id
    rid, replies = h.leave(pending, now=6)
    assert replies[rid].members[0].error == E.NONE
    assert pending not in h.group().pending_members
    assert h.state() == "PreparingRebalance"


def test_leave_row_otherwise_validates_removes_and_fails_parked_join():
    """3.10 LeaveGroup "Otherwise": validate (25/82); remove, cancel timer, parked JoinGroup
    answered UNKNOWN_MEMBER_ID; PreparingRebalance then completes the join."""
    h = Harness()
    a, b, c = h.stable_group(3, static=True)
    rid_a, _ = h.join(a, instance="i0", now=10)  # leader rejoins -> PreparingRebalance
    rid_b, _ = h.join(b, instance="i1", now=11)
    rid, replies = h.leave((c, "i2"), ("bogus", "i1"), now=12)
    assert [m.error for m in replies[rid].members] == [E.NONE, E.FENCED_INSTANCE_ID]
    # c removed; a and b had joined -> join completes at once.
    assert {rid_a, rid_b} <= set(replies)
    assert ("heartbeat", "g", c) not in h.coord.timer_deadlines()
    h2 = Harness()
    x, y = h2.stable_group(2)
    rid_x, _ = h2.join(x, now=5)  # x parked in PreparingRebalance
    rid, replies = h2.leave(x, now=6)
    assert replies[rid_x].error == E.UNKNOWN_MEMBER_ID and replies[rid_x].member_id == ""


def test_leave_row_after_removal_stable_last_member_empties_group():
    """3.10 LeaveGroup "After >= 1 successful removal": nobody left -> Empty, generation + 1."""
    h = Harness()
    (m,) = h.stable_group(1)
    h.leave(m, now=3)
    assert h.group().state is GroupState.EMPTY and h.group().generation == 2
    (removed,) = h.events_of(MemberRemoved)
    assert removed.reason is RemovalReason.LEFT


def test_leave_during_initial_rebalance_does_not_complete_early():
    """3.6 / 3.10: in PreparingRebalance the completion attempt is guarded during the initial
    rebalance, so a LeaveGroup does not complete it."""
    h = Harness(group_initial_rebalance_delay_ms=3000)
    a, rid_a, _ = h.new_member()
    b, rid_b, _ = h.new_member()
    _, replies = h.leave(b, now=100)
    assert rid_a not in replies
    assert h.state() == "PreparingRebalance"
    # b's arrival had extended the delay by one step (3.6), leaving or not.
    assert h.expire(3000) == {}
    answered = h.expire(6000)
    assert rid_a in answered


def test_leave_row_empty_group():
    """3.10 LeaveGroup "Empty group": every member UNKNOWN_MEMBER_ID(25)."""
    h = Harness()
    h.join()
    rid, replies = h.leave("x", ("", "i"))
    assert [m.error for m in replies[rid].members] == [E.UNKNOWN_MEMBER_ID] * 2


def test_leave_drops_parked_sync_of_removed_member():
    """Kafka drops (never answers) a parked SyncGroup whose member is removed by LeaveGroup."""
    h = Harness()
    for i in range(2):
        h.join(instance=f"i{i}")
    answered = h.tick()
    members = [r.member_id for r in answered.values()]
    rid, _ = h.sync(members[1], 1, instance="i1")
    _, replies = h.leave(("", "i1"), now=5)
    assert rid not in replies
    assert [e.request_id for e in h.events_of(RequestDropped)] == [rid]
