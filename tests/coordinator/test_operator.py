"""Operator commands (coordinator/operator.py): what the control plane does to a group, as plain
commands; every error answer leaves the coordinator exactly as it was."""

from __future__ import annotations

import pytest

from kafka_emu.coordinator import (
    CommitOffset,
    DeleteGroup,
    ExpireMember,
    GroupDeleted,
    IgnoreHeartbeats,
    MemberRemoved,
    OperatorResult,
    RebalanceTriggered,
    RemovalReason,
    SetOffsets,
    TriggerRebalance,
)

from .harness import SESSION, E, Harness


def run(h: Harness, cls, **kw):
    rid = h.rid()
    replies = h._run(cls(request_id=rid, **kw), None)
    result = replies.pop(rid)
    assert isinstance(result, OperatorResult)
    return result, replies


def snapshot(h: Harness, group_id: str = "g"):
    """Enough of the coordinator's state to tell whether anything changed."""
    group = h.group(group_id)
    members = None if group is None else [
        (m.member_id, m.join_request, m.sync_request, m.heartbeats_ignored, m.assignment)
        for m in group.members.values()]
    return (None if group is None else group.state, None if group is None else group.generation,
            members, h.coord.timer_deadlines(), h.fetch(group_id=group_id).partitions, len(h.events))


def removals(h: Harness):
    return [(e.member_id, e.reason) for e in h.events_of(MemberRemoved)]


# ------------------------------------------------------------------ ExpireMember
def test_expire_member_now_is_the_session_timeout_firing_early():
    h = Harness()
    a, b = h.stable_group(2)
    result, replies = run(h, ExpireMember, group_id="g", member_id=b)
    assert result.error == E.NONE and result.member_ids == (b,)
    assert removals(h) == [(b, RemovalReason.SESSION_EXPIRED)]
    assert h.state() == "PreparingRebalance"
    assert [e.reason for e in h.events_of(RebalanceTriggered)][-1] == \
        f"removing member {b} on heartbeat expiration"
    # the survivor's heartbeat learns of the rebalance, as after a real expiry
    assert h.heartbeat(a, 1).error == E.REBALANCE_IN_PROGRESS


def test_expire_member_by_instance_id_and_even_while_parked_in_a_join():
    h = Harness()
    members = h.stable_group(2, static=True)
    rid, replies = h.join(members[0], instance="i0", now=h.now + 1)  # parks: a rebalance starts
    assert replies == {}
    result, replies = run(h, ExpireMember, group_id="g", group_instance_id="i0")
    assert result.member_ids == (members[0],)
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID  # the parked join learns it is gone
    assert members[0] not in h.group().members and "i0" not in h.group().static_members


def test_expire_a_pending_member_id():
    h = Harness()
    h.stable_group(1)
    _, replies = h.join()
    pending = next(iter(replies.values())).member_id
    result, _ = run(h, ExpireMember, group_id="g", member_id=pending)
    assert result.error == E.NONE
    assert removals(h)[-1] == (pending, RemovalReason.PENDING_EXPIRED)


@pytest.mark.parametrize("kw, error", [
    ({"group_id": "nope", "member_id": "x"}, E.GROUP_ID_NOT_FOUND),
    ({"group_id": "g", "member_id": "nobody"}, E.UNKNOWN_MEMBER_ID),
    ({"group_id": "g", "group_instance_id": "nobody"}, E.UNKNOWN_MEMBER_ID),
    ({"group_id": "g"}, E.INVALID_REQUEST),
    ({"group_id": "g", "member_id": "u1", "group_instance_id": "i"}, E.INVALID_REQUEST),
])
def test_expire_member_errors_change_nothing(kw, error):
    h = Harness()
    h.stable_group(2)
    before = snapshot(h)
    result, replies = run(h, ExpireMember, **kw)
    assert result.error == error and result.detail and replies == {}
    assert snapshot(h)[:5] == before[:5]


# -------------------------------------------------------------- IgnoreHeartbeats
def test_ignored_heartbeats_are_answered_but_the_session_runs_out():
    h = Harness()
    a, b = h.stable_group(2)
    start = h.now
    result, _ = run(h, IgnoreHeartbeats, group_id="g", member_id=b)
    assert result.error == E.NONE and h.group().members[b].heartbeats_ignored
    for t in range(1000, SESSION, 1000):  # both keep heartbeating (and committing)
        for m in (a, b):
            assert h.heartbeat(m, 1, now=start + t).error == E.NONE
        h.commit([("t", 0, t)], member_id=b, generation=1)
    h.expire(start + SESSION)
    assert removals(h) == [(b, RemovalReason.SESSION_EXPIRED)]
    assert a in h.group().members


def test_heartbeats_honoured_again():
    h = Harness()
    a, b = h.stable_group(2)
    run(h, IgnoreHeartbeats, group_id="g", member_id=b)
    result, _ = run(h, IgnoreHeartbeats, group_id="g", member_id=b, ignore=False)
    assert result.error == E.NONE
    h.heartbeat(b, 1, now=h.now + SESSION - 1)
    h.heartbeat(a, 1)
    h.expire(h.now + 10)
    assert removals(h) == []


def test_ignore_heartbeats_of_unknown_member_is_an_error():
    h = Harness()
    h.stable_group(1)
    before = snapshot(h)
    result, _ = run(h, IgnoreHeartbeats, group_id="g", member_id="ghost")
    assert result.error == E.UNKNOWN_MEMBER_ID
    assert snapshot(h)[:5] == before[:5]


# -------------------------------------------------------------- TriggerRebalance
def test_trigger_rebalance_from_stable():
    h = Harness()
    a, b = h.stable_group(2)
    result, _ = run(h, TriggerRebalance, group_id="g", reason="test says so")
    assert result.error == E.NONE and set(result.member_ids) == {a, b}
    assert h.state() == "PreparingRebalance"
    assert h.events_of(RebalanceTriggered)[-1].reason == "test says so"
    # both rejoin: a new generation
    h.join(a)
    rid, replies = h.join(b)
    assert replies[rid].generation_id == 2


def test_trigger_rebalance_while_rebalancing_is_a_no_op_and_empty_group_an_error():
    h = Harness()
    a, _ = h.stable_group(2)
    run(h, TriggerRebalance, group_id="g")
    before = snapshot(h)
    result, _ = run(h, TriggerRebalance, group_id="g")
    assert result.error == E.NONE and "already" in result.detail
    assert snapshot(h)[:4] == before[:4]
    h2 = Harness()
    h2.commit([("t", 0, 5)], group_id="simple")  # an Empty group
    result, _ = run(h2, TriggerRebalance, group_id="simple")
    assert result.error == E.INVALID_REQUEST and h2.state("simple") == "Empty"


# ------------------------------------------------------------------- DeleteGroup
def test_delete_group_needs_empty_unless_forced():
    h = Harness()
    a, b = h.stable_group(2)
    h.commit([("t", 0, 7)], member_id=a, generation=1)
    before = snapshot(h)
    result, _ = run(h, DeleteGroup, group_id="g")
    assert result.error == E.NON_EMPTY_GROUP
    assert snapshot(h)[:5] == before[:5]
    result, _ = run(h, DeleteGroup, group_id="g", force=True)
    assert result.error == E.NONE and set(result.member_ids) == {a, b}
    assert h.group() is None and h.coord.group_ids() == []
    assert h.events_of(GroupDeleted)[-1].reason == "control"
    assert {reason for _, reason in removals(h)} == {RemovalReason.GROUP_DELETED}
    assert all(key[0] == "retention" for key in h.coord.timer_deadlines())
    # the members' next heartbeat: the group is gone
    assert h.heartbeat(a, 1).error == E.UNKNOWN_MEMBER_ID


def test_forced_delete_answers_a_parked_join():
    h = Harness()
    a, b = h.stable_group(2)
    rid, replies = h.join(a)  # parked: waiting for b
    assert replies == {}
    _, replies = run(h, DeleteGroup, group_id="g", force=True)
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID


def test_delete_unknown_group():
    result, _ = run(Harness(), DeleteGroup, group_id="nope")
    assert result.error == E.GROUP_ID_NOT_FOUND


# -------------------------------------------------------------------- SetOffsets
def test_set_offsets_in_any_state_and_creates_a_group():
    h = Harness()
    a, _ = h.stable_group(2)
    result, _ = run(h, SetOffsets, group_id="g", offsets=(CommitOffset(topic="t", partition=0, offset=42),))
    assert result.error == E.NONE
    assert [(p.topic, p.partition, p.offset) for p in h.fetch().partitions] == [("t", 0, 42)]
    result, _ = run(h, SetOffsets, group_id="fresh", offsets=(CommitOffset(topic="t", partition=1, offset=3),))
    assert result.error == E.NONE and h.state("fresh") == "Empty"


def test_set_negative_offset_changes_nothing():
    h = Harness()
    result, _ = run(h, SetOffsets, group_id="g", offsets=(
        CommitOffset(topic="t", partition=0, offset=1), CommitOffset(topic="t", partition=1, offset=-1)))
    assert result.error == E.INVALID_REQUEST
    assert h.group() is None


# --------------------------------------------------------------------- deadlines
def test_deadlines_name_their_kind_group_and_member():
    h = Harness(group_initial_rebalance_delay_ms=3000)
    _, replies = h.join(now=0)
    pending = next(iter(replies.values())).member_id
    kinds = {(d.kind, d.group_id, d.member_id) for d in h.coord.deadlines()}
    assert kinds == {("pending_member", "g", pending), ("retention", None, None)}
    h.join(pending, now=10)
    kinds = [(d.kind, d.member_id) for d in h.coord.deadlines()]
    assert ("initial_delay", None) in kinds and ("new_member", pending) in kinds
    h.expire(3010)  # the initial delay ends: generation 1, the pending-sync timer runs
    kinds = [(d.kind, d.member_id) for d in h.coord.deadlines()]
    assert ("session", pending) in kinds and ("pending_sync", None) in kinds
    deadlines = [d.deadline_ms for d in h.coord.deadlines()]
    assert deadlines == sorted(deadlines)


def test_rebalance_deadline_kind():
    h = Harness()
    a, b = h.stable_group(2)
    h.join(a, now=h.now + 1)
    assert "rebalance" in [d.kind for d in h.coord.deadlines()]
