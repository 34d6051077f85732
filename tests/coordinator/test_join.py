"""Scenario tests for the JoinGroup table of reference 3.10 (plus 3.5, 3.9 pre-checks).

Each test names the row it checks. Rows for share groups and KIP-848 "consumer" groups do not
apply: the emulator only has classic groups.
"""

from __future__ import annotations

import attrs

from kafka_emu.coordinator import GroupState, JoinGroupResult, MemberAdded, RequestDropped

from kafka_emu.coordinator.java_order import bucket, hashmap_order

from .harness import DEFAULT_PROTOCOLS, E, Harness, subscription


def only(replies: dict) -> JoinGroupResult:
    (result,) = replies.values()
    return result


# ------------------------------------------------------------------------ pre-checks (3.10)
def test_precheck_empty_group_id_is_invalid_group_id():
    """3.10 pre-checks / 3.13: GroupId "" -> INVALID_GROUP_ID(24), MemberId echoed."""
    h = Harness()
    rid, replies = h.join("m", group_id="")
    assert replies[rid].error == E.INVALID_GROUP_ID
    assert replies[rid].member_id == "m"
    assert h.coord.group_ids() == []


def test_precheck_session_timeout_bounds():
    """3.9: SessionTimeoutMs outside [min, max] -> INVALID_SESSION_TIMEOUT(26), MemberId echoed."""
    h = Harness()
    for session in (5999, 1_800_001):
        rid, replies = h.join("x", session=session)
        assert replies[rid].error == E.INVALID_SESSION_TIMEOUT
        assert replies[rid].member_id == "x"
    for session in (6000, 1_800_000):
        _, replies = h.join(session=session)
        assert only(replies).error == E.MEMBER_ID_REQUIRED


# ------------------------------------------------------------------------------- table rows
def test_row_group_absent_empty_member_id_creates_group():
    """3.10 JoinGroup "Group absent, MemberId \"\"": group created Empty, continue as new member."""
    h = Harness()
    _, replies = h.join()
    assert only(replies).error == E.MEMBER_ID_REQUIRED
    assert h.state() == "Empty"
    assert h.group().generation == 0


def test_row_group_absent_nonempty_member_id_is_unknown_member():
    """3.10 JoinGroup "Group absent, MemberId non-empty" -> UNKNOWN_MEMBER_ID(25)."""
    h = Harness()
    rid, replies = h.join("ghost")
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID
    assert replies[rid].member_id == "ghost"
    assert h.coord.group_ids() == []


def test_row_size_limit_new_member():
    """3.10 JoinGroup "Size limit (3.9)" -> GROUP_MAX_SIZE_REACHED(81), MemberId ""."""
    h = Harness(group_max_size=1)
    h.stable_group(1)
    rid, replies = h.join(v4=False)
    assert replies[rid].error == E.GROUP_MAX_SIZE_REACHED
    assert replies[rid].member_id == ""
    assert len(h.group().members) == 1


def test_row_size_limit_preparing_counts_parked_joins_and_kicks_late_rejoiner():
    """3.9: in PreparingRebalance an existing member that is not yet parked is accepted only
    while parked joins < max; otherwise it is removed (no join completion check)."""
    h = Harness(group_max_size=2)
    a, b = h.stable_group(2)
    # Leader rejoins -> PreparingRebalance with 1 parked join.
    h.join(a, now=100)
    # Kafka's comment: group.max.size may have been reduced while the group was larger.
    h.coord._core.config = attrs.evolve(h.coord.config, group_max_size=1)
    rid, replies = h.join(b, now=101)
    assert replies[rid].error == E.GROUP_MAX_SIZE_REACHED
    assert replies[rid].member_id == ""
    assert b not in h.group().members
    assert h.state() == "PreparingRebalance"  # not completed early (Kafka skips the check)


def test_row_new_member_group_dead():
    """3.10 JoinGroup "New member, group Dead" -> COORDINATOR_NOT_AVAILABLE(15), MemberId ""."""
    h = Harness()
    h.stable_group(1)
    h.coord.mark_dead("g", 10)
    rid, replies = h.join(now=20)
    assert replies[rid].error == E.COORDINATOR_NOT_AVAILABLE
    assert replies[rid].member_id == ""


def test_row_new_member_protocols_unsupported():
    """3.10 JoinGroup "New member, protocols unsupported" -> INCONSISTENT_GROUP_PROTOCOL(23)."""
    h = Harness()
    h.stable_group(1)
    for kw in ({"protocols": (("roundrobin", b""),)}, {"protocol_type": "connect"}):
        rid, replies = h.join(**kw)
        assert replies[rid].error == E.INCONSISTENT_GROUP_PROTOCOL
        assert replies[rid].member_id == ""
    # Empty group: type must be non-empty and the protocol list non-empty (3.4).
    h2 = Harness()
    for kw in ({"protocols": ()}, {"protocol_type": ""}):
        rid, replies = h2.join(**kw)
        assert replies[rid].error == E.INCONSISTENT_GROUP_PROTOCOL


def test_row_new_dynamic_member_v4_member_id_required():
    """3.10 JoinGroup "New dynamic member, v4+" -> MEMBER_ID_REQUIRED(79) + assigned id (3.5)."""
    h = Harness()
    rid, replies = h.join(client_id="client-1")
    result = replies[rid]
    assert result.error == E.MEMBER_ID_REQUIRED
    assert result.member_id == "client-1-u1"  # client_id + "-" + uuid
    assert result.generation_id == -1
    group = h.group()
    assert group.state is GroupState.EMPTY  # state does not change
    assert "client-1-u1" in group.pending_members and not group.members


def test_row_new_member_otherwise_added_and_parked_v0_3():
    """3.10 JoinGroup "New member otherwise": v0-3 dynamic member added at once, parked."""
    h = Harness()
    rid, replies = h.join(v4=False)
    assert replies == {}  # parked
    assert h.state() == "PreparingRebalance"
    answered = h.tick()
    assert answered[rid].error == E.NONE and answered[rid].generation_id == 1


def test_row_new_member_triggers_rebalance_from_completing_and_fails_parked_syncs():
    """3.10 JoinGroup "New member otherwise ... from Completing (parked SyncGroups get 27)"."""
    h = Harness()
    _, r1, _ = h.new_member()
    _, r2, _ = h.new_member()
    answered = h.tick()
    follower = next(r.member_id for r in answered.values() if r.member_id != r.leader)
    sync_rid, replies = h.sync(follower, 1)
    assert replies == {}
    new_rid, replies = h.join(v4=False, now=5)
    assert replies[sync_rid].error == E.REBALANCE_IN_PROGRESS
    assert replies[sync_rid].assignment == b"" and replies[sync_rid].protocol_type is None
    assert new_rid not in replies
    assert h.state() == "PreparingRebalance"


def test_row_new_member_triggers_rebalance_from_stable():
    """3.10 JoinGroup "New member otherwise": Stable -> PreparingRebalance, new join parked."""
    h = Harness()
    h.stable_group(2)
    rid, replies = h.join(v4=False, now=10)
    assert replies == {}
    assert h.state() == "PreparingRebalance"


def test_row_nonempty_member_id_group_dead():
    """3.10 JoinGroup "Non-empty MemberId, group Dead" -> 15 with MemberId echoed."""
    h = Harness()
    (m,) = h.stable_group(1)
    h.coord.mark_dead("g", 10)
    rid, replies = h.join(m)
    assert replies[rid].error == E.COORDINATOR_NOT_AVAILABLE
    assert replies[rid].member_id == m


def test_row_nonempty_member_id_protocols_unsupported_even_if_unknown():
    """3.10 JoinGroup "Non-empty MemberId, protocols unsupported" -> 23 echoed, even for an
    unknown id (protocol check precedes member lookup)."""
    h = Harness()
    (m,) = h.stable_group(1)
    for member_id in (m, "nobody"):
        rid, replies = h.join(member_id, protocols=(("other", b""),))
        assert replies[rid].error == E.INCONSISTENT_GROUP_PROTOCOL
        assert replies[rid].member_id == member_id


def test_row_nonempty_member_id_is_pending():
    """3.10 JoinGroup "Non-empty MemberId is pending": added, parked, rebalance."""
    h = Harness()
    _, replies = h.join()
    pending = only(replies).member_id
    rid, replies = h.join(pending)
    assert replies == {}
    group = h.group()
    assert pending in group.members and not group.pending_members
    assert h.state() == "PreparingRebalance"


def test_pending_member_with_instance_id_is_unknown_server_error():
    """3.8: a JoinGroup for a pending id carrying an instance id -> UNKNOWN_SERVER_ERROR(-1)."""
    h = Harness()
    _, replies = h.join()
    rid, replies = h.join(only(replies).member_id, instance="i")
    assert replies[rid].error == E.UNKNOWN_SERVER_ERROR


def test_row_nonempty_member_id_fails_validation():
    """3.10 JoinGroup "Non-empty MemberId fails validation" -> 25 / 82, protocol fields null."""
    h = Harness()
    h.stable_group(1, static=True)
    rid, replies = h.join("nobody")
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID
    assert replies[rid].member_id == "nobody" and replies[rid].protocol_type is None
    rid, replies = h.join("wrong-id", instance="i0")
    assert replies[rid].error == E.FENCED_INSTANCE_ID
    rid, replies = h.join("x", instance="unknown-instance")
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID


def test_row_member_preparing_updates_and_parks_dropping_older_join():
    """3.10 JoinGroup "Member, PreparingRebalance": protocols/timeouts updated; parked; an
    earlier parked JoinGroup of the same member is dropped unanswered."""
    h = Harness()
    a, b = h.stable_group(2)
    first, replies = h.join(a, now=10)  # leader rejoin -> PreparingRebalance, parked
    assert replies == {}
    second, replies = h.join(a, session=20_000, now=11)
    assert replies == {}
    assert h.group().members[a].session_timeout_ms == 20_000
    dropped = h.events_of(RequestDropped)
    assert [d.request_id for d in dropped] == [first]
    rid_b, replies = h.join(b, now=12)  # everyone joined -> completes at once
    assert set(replies) == {second, rid_b}
    assert first not in replies


def test_row_member_completing_same_protocols_immediate_answer():
    """3.10 JoinGroup "Member, CompletingRebalance, same protocols": immediate success for the
    current generation; the leader gets the member list."""
    h = Harness()
    _, _, _ = h.new_member()
    _, _, _ = h.new_member()
    answered = h.tick()
    leader = next(iter(answered.values())).leader
    follower = next(r.member_id for r in answered.values() if r.member_id != leader)
    rid, replies = h.join(leader)
    assert replies[rid].error == E.NONE and replies[rid].generation_id == 1
    assert [m.member_id for m in replies[rid].members] == [leader, follower]
    rid, replies = h.join(follower)
    assert replies[rid].members == () and replies[rid].leader == leader
    assert h.state() == "CompletingRebalance"


def test_row_member_completing_changed_protocols_rebalances():
    """3.10 JoinGroup "Member, CompletingRebalance, changed protocols": update, rebalance, park."""
    h = Harness()
    m, _, _ = h.new_member()
    h.tick()
    rid, replies = h.join(m, protocols=(("range", subscription("t", "u")),), now=5)
    # Single member: the rebalance completes at once.
    assert replies[rid].generation_id == 2
    assert h.state() == "CompletingRebalance"


def test_row_leader_stable_rebalances():
    """3.10 JoinGroup "Leader, Stable": rebalance, parked (any metadata)."""
    h = Harness()
    leader, follower = h.stable_group(2)
    rid, replies = h.join(leader, now=10)
    assert replies == {}
    assert h.state() == "PreparingRebalance"


def test_row_follower_stable_changed_protocols_rebalances():
    """3.10 JoinGroup "Follower, Stable, changed protocols": rebalance, parked."""
    h = Harness()
    leader, follower = h.stable_group(2)
    rid, replies = h.join(follower, protocols=(("range", subscription("x")),), now=10)
    assert replies == {}
    assert h.state() == "PreparingRebalance"


def test_row_follower_stable_same_protocols_immediate():
    """3.10 JoinGroup "Follower, Stable, same protocols": current generation, empty Members."""
    h = Harness()
    leader, follower = h.stable_group(2)
    rid, replies = h.join(follower, now=10)
    result = replies[rid]
    assert result.error == E.NONE and result.generation_id == 1
    assert result.members == () and result.leader == leader
    assert result.protocol_type == "consumer" and result.protocol_name == "range"
    assert h.state() == "Stable"


def test_rows_stable_hold_for_static_members_rejoining_with_their_member_id():
    """3.10 "Follower, Stable, same protocols" and "Leader, Stable" apply to static members that
    send their member id too: Kafka has no static exception there (only an unknown member id
    with a known instance id takes the replacement path). A follower gets its generation back
    at once; the leader's JoinGroup rebalances. kafka-python 3.0 sends a JoinGroup again when
    it missed the answer to the last one, so its static groups meet both rows."""
    h = Harness()
    leader, follower = h.stable_group(2, static=True)
    rid, replies = h.join(follower, instance="i1", now=10)
    assert (replies[rid].error, replies[rid].generation_id, replies[rid].members) == (E.NONE, 1, ())
    assert h.state() == "Stable"
    rid, replies = h.join(leader, instance="i0", now=20)
    assert replies == {}
    assert h.state() == "PreparingRebalance"
    assert h.group().generation == 1


def test_row_member_empty_is_unknown_member():
    """3.10 JoinGroup "Member, Empty" -> UNKNOWN_MEMBER_ID: after everyone left, an old id fails."""
    h = Harness()
    (m,) = h.stable_group(1)
    h.leave(m)
    assert h.state() == "Empty"
    rid, replies = h.join(m)
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID


# --------------------------------------------------------------- join completion (3.2, 3.3)
def test_completion_answers_every_parked_join_leader_gets_members():
    """3.2 step 5: every parked JoinGroup completes; only the leader gets the member list."""
    h = Harness()
    ids = [h.new_member()[0] for _ in range(3)]
    answered = h.tick()
    assert len(answered) == 3
    leader = ids[0]  # first member added becomes leader (3.3)
    for result in answered.values():
        assert result.leader == leader and result.generation_id == 1
        if result.member_id == leader:
            assert [m.member_id for m in result.members] == ids
            assert result.members[0].metadata == DEFAULT_PROTOCOLS[0][1]
        else:
            assert result.members == ()


def test_completion_removes_dynamic_members_that_did_not_rejoin_and_reelects_leader():
    """3.2 steps 2-3: non-rejoined dynamic members are removed at the join deadline; a leader
    that did not rejoin is replaced by the earliest member with a parked join."""
    h = Harness()
    a, b, c = h.stable_group(3, session=60_000)  # sessions outlive the rebalance timeout
    changed = (("range", subscription("t", "u")),)
    rid_b, replies = h.join(b, protocols=changed, session=60_000, now=1000)  # starts a rebalance
    assert replies == {} and h.state() == "PreparingRebalance"
    rid_c, replies = h.join(c, session=60_000, now=1001)
    assert replies == {}
    assert h.expire(1000 + 30_000 - 1) == {}
    answered = h.expire(1000 + 30_000)  # join deadline = start + rebalance timeout, not pushed back
    assert set(answered) == {rid_b, rid_c}
    group = h.group()
    assert a not in group.members
    assert group.leader_id == b
    assert answered[rid_b].members and answered[rid_b].leader == b
    assert group.generation == 2


def test_completion_with_zero_members_goes_empty_and_bumps_generation():
    """3.1/3.2: completing a rebalance with nobody left lands in Empty, generation + 1."""
    h = Harness()
    (m,) = h.stable_group(1)
    h.leave(m, now=10)
    group = h.group()
    assert group.state is GroupState.EMPTY
    assert group.generation == 2
    assert group.protocol_name is None and group.protocol_type == "consumer"


def test_protocol_selection_by_votes_most_votes_wins():
    """3.4: candidates supported by all; each votes its first candidate; most votes wins."""
    h = Harness()
    h.join(v4=False, protocols=(("roundrobin", b""), ("range", b"")))
    h.join(v4=False, protocols=(("range", b""),))
    h.join(v4=False, protocols=(("roundrobin", b""), ("range", b"")))
    answered = h.tick()
    # "roundrobin" is not supported by the second member -> everyone votes range.
    assert {r.protocol_name for r in answered.values()} == {"range"}


def _tie(*preferences: tuple[str, ...]) -> str:
    h = Harness()
    for names in preferences:
        h.join(v4=False, protocols=tuple((name, b"") for name in names))
    (name,) = {r.protocol_name for r in h.tick().values()}
    return name


def test_protocol_vote_tie_range_vs_cooperative_sticky_goes_to_range_as_in_kafka():
    """Was: ties went to the lexicographically smallest name (cooperative-sticky). Kafka's vote
    HashMap puts range in bucket 9 and cooperative-sticky in 15, so range comes first."""
    assert _tie(("cooperative-sticky", "range"), ("range", "cooperative-sticky")) == "range"
    assert _tie(("range", "cooperative-sticky"), ("cooperative-sticky", "range")) == "range"


def test_protocol_vote_tie_follows_hash_order_not_names_or_join_order():
    # sticky (bucket 8) before range (bucket 9): neither alphabetical nor the first voter's choice
    assert _tie(("range", "sticky"), ("sticky", "range")) == "sticky"
    # roundrobin (10) after range (9), whoever voted first
    assert _tie(("roundrobin", "range"), ("range", "roundrobin")) == "range"
    # four-way tie: zeta (bucket 1) leads although it is last in every other order
    names = ("mid", "alpha", "omega", "zeta")
    assert [bucket(n, 16) for n in names] == [9, 7, 14, 0]
    assert _tie(*[names[i:] + names[:i] for i in range(4)]) == "zeta"


def test_protocol_vote_tie_in_one_bucket_goes_to_the_earlier_first_vote():
    # "b" and "bar" share bucket 2 of Kafka's 16-bucket map: first put, first iterated
    assert bucket("b", 16) == bucket("bar", 16) == 2
    assert _tie(("bar", "b"), ("b", "bar")) == "bar"
    assert _tie(("b", "bar"), ("bar", "b")) == "b"


def test_protocol_vote_tie_among_more_than_twelve_names_uses_the_resized_map():
    # 13 distinct votes grow Kafka's map to 32 buckets, where proto9 comes first (in 16: proto1)
    names = tuple(f"proto{i}" for i in range(13))
    assert sorted(names, key=lambda n: bucket(n, 16))[0] == "proto1"
    assert hashmap_order(names)[0] == "proto9"
    assert _tie(*[names[i:] + names[:i] for i in range(13)]) == "proto9"


def test_member_added_event_carries_client_id():
    h = Harness()
    h.join(v4=False, client_id="cli")
    (event,) = h.events_of(MemberAdded)
    assert event.client_id == "cli" and event.member_id == "cli-u1"
