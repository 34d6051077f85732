"""Consumer groups (KIP-848) in the pure coordinator: one test per reconciliation rule and per
error of ConsumerGroupHeartbeat, with explicit time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_emu.coordinator import (CommitOffset, DeleteGroups, DescribeGroups, JoinGroup,
                                   ListGroups, OffsetCommit, OffsetFetch)
from kafka_emu.coordinator.consumer import ConsumerGroupDescribe, MemberState
from kafka_emu.coordinator.consumer.assignors import range_assignor, uniform_assignor
from kafka_emu.coordinator.consumer.regex import compile_topic_regex
from kafka_emu.errors import ErrorCode as E

from .consumer_harness import CG, parts


def two_members():
    g = CG()
    a = g.hb("a", 0)
    assert (a.error, a.member_epoch, parts(a.assignment)) == (E.NONE, 1, {"t": set(range(6))})
    b = g.hb("b", 0)
    assert (b.member_epoch, parts(b.assignment)) == (2, {})  # waits for a to release
    assert g.member("b").state is MemberState.UNRELEASED_PARTITIONS
    return g


def test_first_member_gets_everything_and_group_is_stable():
    g = CG()
    r = g.hb("a", 0)
    assert r.heartbeat_interval_ms == 250 and r.member_id == "a"
    grp = g.group()
    assert (grp.group_epoch, grp.assignment_epoch, grp.state.value) == (1, 1, "Stable")


def test_revoke_before_assign_then_release_then_assign():
    g = two_members()
    # a is told to give up 3-5 but keeps its epoch while it still owns them
    r = g.hb("a", 1, owned={"t": range(6)})
    assert (r.member_epoch, parts(r.assignment)) == (1, {"t": {0, 1, 2}})
    assert g.member("a").state is MemberState.UNREVOKED_PARTITIONS
    assert g.member("a").pending_revocation == {"t": frozenset({3, 4, 5})}
    assert g.group().state.value == "Reconciling"
    # still owning them: nothing changes, no assignment in the answer
    r = g.hb("a", 1, owned={"t": range(6)})
    assert (r.member_epoch, r.assignment) == (1, None)
    # b cannot have them yet
    assert g.hb("b", 2, owned={}).assignment is None
    # a acknowledges: it moves to epoch 2, stable
    r = g.hb("a", 1, owned={"t": {0, 1, 2}})
    assert r.member_epoch == 2 and g.member("a").state is MemberState.STABLE
    r = g.hb("b", 2, owned={})
    assert parts(r.assignment) == {"t": {3, 4, 5}} and g.member("b").state is MemberState.STABLE
    assert g.group().state.value == "Stable"


def test_null_owned_partitions_mean_still_owned():
    g = two_members()
    g.hb("a", 1, owned={"t": range(6)})
    g.hb("a", 1, owned=None)
    assert g.member("a").state is MemberState.UNREVOKED_PARTITIONS


def test_revocation_skipped_when_member_already_dropped_them():
    g = two_members()
    r = g.hb("a", 1, owned={"t": {0, 1, 2}})  # it reports only what it keeps
    assert r.member_epoch == 2 and g.member("a").state is MemberState.STABLE


def test_fenced_when_epoch_ahead_or_stale():
    g = two_members()
    assert g.hb("b", 3, owned={}).error == E.FENCED_MEMBER_EPOCH
    g.hb("a", 1, owned={"t": {0, 1, 2}})  # a: epoch 2, previous 1
    # previous epoch with a subset of the assignment is accepted (lost response)
    assert g.hb("a", 1, owned={"t": {0}}).error == E.NONE
    # previous epoch owning something outside the assignment is fenced
    assert g.hb("a", 1, owned={"t": {5}}).error == E.FENCED_MEMBER_EPOCH
    assert g.hb("a", 1, owned=None).error == E.FENCED_MEMBER_EPOCH


def test_unknown_member_and_unknown_group():
    g = two_members()
    assert g.hb("zzz", 1, owned={}).error == E.UNKNOWN_MEMBER_ID
    r = g.hb("a", 1, owned={}, group="nope")
    assert r.error == E.GROUP_ID_NOT_FOUND and "not found" in r.error_message
    assert g.hb("zzz", -1, owned=None).error == E.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("kw,message", [
    (dict(member_id="", epoch=1), "MemberId can't be empty."),
    (dict(member_id="x", epoch=0, rebalance_timeout_ms=-1), "RebalanceTimeoutMs must be provided"),
    (dict(member_id="x", epoch=0, owned={"t": {1}}), "TopicPartitions must be empty"),
    (dict(member_id="x", epoch=0, owned=None), "TopicPartitions must be empty"),
    (dict(member_id="x", epoch=-3), "MemberEpoch is invalid."),
    (dict(member_id="x", epoch=-2), "InstanceId can't be null."),
    (dict(member_id="x", epoch=0, instance_id=""), "InstanceId can't be empty."),
    (dict(member_id="x", epoch=0, rack_id=""), "RackId can't be empty."),
    (dict(member_id="x", epoch=0, group=""), "GroupId can't be empty."),
])
def test_invalid_requests(kw, message):
    g = CG()
    member_id, epoch = kw.pop("member_id"), kw.pop("epoch")
    r = g.hb(member_id, epoch, **kw)
    assert r.error == E.INVALID_REQUEST and message in r.error_message


def test_v0_may_join_without_member_id():
    g = CG()
    r = g.hb("", 0, member_id_required=False)
    assert r.error == E.NONE and r.member_id.startswith("gen-")
    assert g.hb("", 0).error == E.INVALID_REQUEST  # v1: the client makes its id


def test_unsupported_assignor_and_member_choice():
    g = CG()
    r = g.hb("a", 0, server_assignor="sticky")
    assert r.error == E.UNSUPPORTED_ASSIGNOR and "uniform, range" in r.error_message
    g.hb("a", 0, server_assignor="range")
    d = g.other(ConsumerGroupDescribe(request_id="d", group_ids=("g",))).groups[0]
    assert d.assignor_name == "range"


def test_default_assignor_is_first_configured():
    g = CG(group_consumer_assignors=("range", "uniform"))
    g.hb("a", 0)
    assert g.other(ConsumerGroupDescribe(request_id="d", group_ids=("g",))).groups[0].assignor_name == "range"


def test_leave_bumps_group_epoch_and_frees_partitions():
    g = two_members()
    g.hb("a", 1, owned={"t": {0, 1, 2}})
    g.hb("b", 2, owned={})
    r = g.hb("b", -1, owned=None)
    assert (r.error, r.member_epoch, r.member_id) == (E.NONE, -1, "b")
    assert g.group().group_epoch == 3 and "b" not in g.group().members
    r = g.hb("a", 2, owned={"t": {0, 1, 2}})
    assert (r.member_epoch, parts(r.assignment)) == (3, {"t": set(range(6))})


def test_session_timeout_fences_member():
    g = two_members()
    g.advance(30_000)
    g.hb("a", 1, owned={"t": {0, 1, 2}})  # a keeps heartbeating, b does not
    g.advance(15_001)
    assert "b" not in g.group().members and g.group().group_epoch == 3


def test_rebalance_timeout_fences_member_stuck_revoking():
    g = two_members()
    g.hb("a", 1, owned={"t": range(6)})  # told to revoke 3-5, rebalance timeout 30 s
    g.advance(20_000)
    g.hb("a", 1, owned={"t": range(6)})  # heartbeats but never revokes
    g.hb("b", 2, owned={})
    g.advance(10_001)
    assert "a" not in g.group().members
    assert parts(g.hb("b", 2, owned={}).assignment) == {"t": set(range(6))}


def test_static_member_leave_and_rejoin_keeps_assignment_without_epoch_bump():
    g = CG()
    g.hb("a", 0, instance_id="i-a")
    g.hb("b", 0, instance_id="i-b")
    g.hb("a", 1, owned={"t": {0, 1, 2}}, instance_id="i-a")
    g.hb("b", 2, owned={}, instance_id="i-b")
    epoch = g.group().group_epoch
    r = g.hb("b", -2, owned=None, instance_id="i-b")
    assert r.member_epoch == -2 and g.member("b").member_epoch == -2
    # a new process with the same instance id and a new member id takes over
    r = g.hb("b2", 0, instance_id="i-b")
    assert r.error == E.NONE and parts(r.assignment) == {"t": {3, 4, 5}}
    assert g.group().group_epoch == epoch and "b" not in g.group().members


def test_static_instance_in_use_is_unreleased():
    g = CG()
    g.hb("a", 0, instance_id="i")
    r = g.hb("a2", 0, instance_id="i")
    assert r.error == E.UNRELEASED_INSTANCE_ID
    assert g.hb("a2", 1, owned={}, instance_id="i").error == E.FENCED_INSTANCE_ID
    assert g.hb("a", 1, owned={}, instance_id="other").error == E.UNKNOWN_MEMBER_ID


def test_static_member_gone_with_minus_two_is_fenced_by_session_timeout():
    g = CG()
    g.hb("a", 0, instance_id="i")
    g.hb("a", -2, owned=None, instance_id="i")
    g.advance(45_001)
    assert g.group().members == {} and g.group().state.value == "Empty"


def test_subscription_change_bumps_epoch_and_moves_partitions():
    g = CG(topics={"t": 2, "u": 2})
    g.hb("a", 0, names=("t", "u"))
    r = g.hb("a", 1, owned={"t": {0, 1}, "u": {0, 1}}, names=("u",))
    assert g.group().group_epoch == 2
    assert parts(r.assignment) == {"u": {0, 1}}


def test_partition_count_change_bumps_epoch():
    g = CG(topics={"t": 2})
    g.hb("a", 0)
    g.topics["t"] = 4
    r = g.hb("a", 1, owned={"t": {0, 1}})
    assert g.group().group_epoch == 2 and parts(r.assignment) == {"t": {0, 1, 2, 3}}


def test_regex_subscription_resolves_against_catalogue_fully():
    g = CG(topics={"orders": 1, "orders-eu": 1, "xorders": 1})
    r = g.hb("a", 0, subscribed_topic_regex="orders.*")
    assert (r.member_epoch, parts(r.assignment)) == (1, {})  # resolved after this answer (Kafka)
    r = g.hb("a", 1, owned={})
    assert (r.member_epoch, parts(r.assignment)) == (2, {"orders": {0}, "orders-eu": {0}})
    g.topics["orders-us"] = 1
    g.hb("a", 2, owned={"orders": {0}, "orders-eu": {0}})
    r = g.hb("a", 2, owned={"orders": {0}, "orders-eu": {0}})
    assert "orders-us" in parts(r.assignment)


@pytest.mark.parametrize("pattern", [r"(a)\1", r"a(?=b)", r"(?<!x)a", r"(?>a)", r"a*+", "a[", r"\C", "a{1001}"])
def test_regex_rejected_as_re2j_rejects(pattern):
    assert compile_topic_regex(pattern) is None
    r = CG().hb("a", 0, subscribed_topic_regex=pattern)
    assert r.error == E.INVALID_REGULAR_EXPRESSION


def test_group_max_size():
    g = CG(group_consumer_max_size=1)
    g.hb("a", 0)
    assert g.hb("b", 0).error == E.GROUP_MAX_SIZE_REACHED
    assert g.hb("a", 0).error == E.NONE  # an existing member may rejoin


def test_known_member_rejoining_with_epoch_zero_goes_on_from_its_state():
    g = two_members()
    r = g.hb("a", 0)  # a's answer got lost, say; it rejoins owning nothing (KAFKA-19233)
    assert r.error == E.NONE and r.member_epoch == 2 and parts(r.assignment) == {"t": {0, 1, 2}}
    assert g.group().group_epoch == 2  # no bump: nothing about a changed
    assert parts(g.hb("b", 2, owned={}).assignment) == {"t": {3, 4, 5}}


def test_static_member_rejoining_without_leaving_is_unreleased_even_with_its_own_id():
    g = CG()
    g.hb("a", 0, instance_id="i")
    assert g.hb("a", 0, instance_id="i").error == E.UNRELEASED_INSTANCE_ID
    g.hb("a", -2, owned=None, instance_id="i")
    r = g.hb("a", 0, instance_id="i")
    assert r.error == E.NONE and parts(r.assignment) == {"t": set(range(6))}


# ------------------------------------------------------------------------------- offsets
def commit(g, member, epoch, v9=True):
    return g.other(OffsetCommit(request_id="c", group_id="g", generation_id=epoch, member_id=member,
                                group_instance_id=None,
                                offsets=(CommitOffset(topic="t", partition=0, offset=5),),
                                supports_member_epochs=v9)).partitions[0].error


def test_offset_commit_member_epoch_rules():
    g = two_members()
    assert commit(g, "a", 1) == E.NONE
    assert commit(g, "a", 0) == E.STALE_MEMBER_EPOCH
    assert commit(g, "zz", 1) == E.UNKNOWN_MEMBER_ID
    assert commit(g, "a", 1, v9=False) == E.UNSUPPORTED_VERSION
    assert commit(g, "", -1) == E.UNKNOWN_MEMBER_ID  # members present: no admin commits


def test_offset_fetch_member_epoch_rules():
    g = two_members()
    commit(g, "a", 1)

    def fetch(member_id, epoch):
        return g.other(OffsetFetch(request_id="f", group_id="g", topics=(("t", (0,)),),
                                   member_id=member_id, member_epoch=epoch))
    assert fetch(None, -1).partitions[0].offset == 5
    assert fetch("a", 1).partitions[0].offset == 5
    assert fetch("a", 7).error == E.STALE_MEMBER_EPOCH
    assert fetch("nobody", 1).error == E.UNKNOWN_MEMBER_ID


def test_empty_group_accepts_admin_commit_and_can_be_deleted():
    g = CG()
    g.hb("a", 0)
    g.hb("a", -1, owned=None)
    assert g.group().state.value == "Empty"
    assert commit(g, "", -1) == E.NONE
    assert g.other(DeleteGroups(request_id="d", group_ids=("g",))).results == (("g", E.NONE),)
    assert g.group() is None


# -------------------------------------------------------------------- list / describe / mixing
def test_list_and_describe_groups():
    g = two_members()
    listed = g.other(ListGroups(request_id="l", types_filter=("Consumer",))).groups
    assert [(x.group_id, x.group_type, x.protocol_type, x.state) for x in listed] == \
        [("g", "consumer", "consumer", "Reconciling")]
    assert g.other(ListGroups(request_id="l", types_filter=("classic",))).groups == ()
    d = g.other(DescribeGroups(request_id="d", group_ids=("g",))).groups[0]
    assert d.error == E.GROUP_ID_NOT_FOUND and d.error_message == "Group g is not a classic group."
    assert g.other(DeleteGroups(request_id="x", group_ids=("g",))).results == (("g", E.NON_EMPTY_GROUP),)
    cd = g.other(ConsumerGroupDescribe(request_id="c", group_ids=("g", "nope", ""))).groups
    assert (cd[0].group_epoch, cd[0].assignment_epoch, cd[0].state) == (2, 2, "Reconciling")
    assert [m.member_id for m in cd[0].members] == ["a", "b"]
    assert dict(cd[0].members[1].target_assignment) == {"t": (3, 4, 5)}
    assert cd[1].error == E.GROUP_ID_NOT_FOUND and cd[2].error == E.INVALID_GROUP_ID


def join(g, group="g"):
    """A classic JoinGroup; its replies (a first join is parked until the rebalance completes)."""
    return g.c.handle(JoinGroup(request_id="j", group_id=group, member_id="", group_instance_id=None,
                             session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                             protocol_type="consumer", protocols=(("range", b""),),
                             client_id="c", client_host="/h", require_known_member_id=False), g.now)


def test_classic_join_to_non_empty_consumer_group_needs_a_consumer_subscription():
    # Kafka 4.x lets classic members into a consumer group (tests/coordinator/consumer/
    # test_migration*.py); metadata that is no ConsumerProtocol subscription fails unexpectedly
    # there (IllegalStateException), and another protocol type is inconsistent.
    g = two_members()
    assert join(g)[0].result.error == E.UNKNOWN_SERVER_ERROR
    other = g.c.handle(JoinGroup(request_id="j", group_id="g", member_id="", group_instance_id=None,
                                 session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                                 protocol_type="connect", protocols=(("range", b""),),
                                 client_id="c", client_host="/h", require_known_member_id=False), g.now)
    assert other[0].result.error == E.INCONSISTENT_GROUP_PROTOCOL
    assert set(g.group().members) == {"a", "b"}


def test_empty_consumer_group_becomes_classic_on_join_and_back():
    g = CG(group_consumer_migration_policy="disabled")  # the policy allowing no upgrade
    g.hb("a", 0)
    commit(g, "a", 1)
    g.hb("a", -1, owned=None)
    join(g)
    assert g.group() is None and g.c.group("g") is not None
    assert g.c.group("g").members
    # the classic group is not empty now: a consumer-protocol member is refused
    r = g.hb("b", 0)
    assert r.error == E.GROUP_ID_NOT_FOUND and r.error_message == "Group g is not a consumer group."


def test_empty_classic_group_is_replaced_and_keeps_offsets():
    g = CG()
    g.other(OffsetCommit(request_id="c", group_id="g", generation_id=-1, member_id="",
                         group_instance_id=None, offsets=(CommitOffset(topic="t", partition=0, offset=9),)))
    assert g.hb("a", 0).error == E.NONE
    f = g.other(OffsetFetch(request_id="f", group_id="g", topics=(("t", (0,)),)))
    assert f.partitions[0].offset == 9


# ------------------------------------------------------------------------------- assignors
def test_uniform_is_balanced_and_sticky():
    topics = {"t": 7}
    first = uniform_assignor({"a": frozenset({"t"}), "b": frozenset({"t"})}, topics, {})
    assert sorted(len(x["t"]) for x in first.values()) == [3, 4]
    second = uniform_assignor({m: frozenset({"t"}) for m in "abc"}, topics, first)
    assert sorted(len(x.get("t", ())) for x in second.values()) == [2, 2, 3]
    for m in "ab":  # a and b only lose partitions, never swap
        assert second[m]["t"] <= first[m]["t"]


def test_uniform_heterogeneous_respects_subscriptions():
    out = uniform_assignor({"a": frozenset({"t"}), "b": frozenset({"t", "u"})}, {"t": 2, "u": 2}, {})
    assert "u" not in out["a"]
    assert sum(len(p) for x in out.values() for p in x.values()) == 4


def test_range_co_partitions():
    out = range_assignor({"a": frozenset({"t", "u"}), "b": frozenset({"t", "u"})}, {"t": 3, "u": 3}, {})
    assert out["a"] == {"t": frozenset({0, 1}), "u": frozenset({0, 1})}
    assert out["b"] == {"t": frozenset({2}), "u": frozenset({2})}


def test_unloaded_classic_group_is_not_taken_over():
    g = CG()
    g.other(OffsetCommit(request_id="c", group_id="g", generation_id=-1, member_id="",
                         group_instance_id=None, offsets=(CommitOffset(topic="t", partition=0, offset=9),)))
    g.c.mark_dead("g", g.now)
    assert g.hb("a", 0).error == E.COORDINATOR_NOT_AVAILABLE


@given(topics=st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(0, 8), min_size=1),
       n=st.integers(1, 6), before=st.integers(1, 6), grow=st.integers(-2, 2))
@settings(max_examples=200, deadline=None)
def test_uniform_homogeneous_covers_balances_and_sticks(topics, n, before, grow):
    members = [f"m{i}" for i in range(n)]
    old_topics = {t: max(0, c + grow) for t, c in topics.items()}
    previous = uniform_assignor({f"m{i}": frozenset(topics) for i in range(before)}, old_topics, {})
    out = uniform_assignor({m: frozenset(topics) for m in members}, topics, previous)
    owned = sorted((t, p) for a in out.values() for t, ps in a.items() for p in ps)
    assert owned == sorted((t, p) for t, c in topics.items() for p in range(c))
    sizes = [sum(len(ps) for ps in a.values()) for a in out.values()]
    assert max(sizes) - min(sizes) <= 1 and set(out) == set(members)
    if old_topics == topics:  # sticky: a member keeps as much of its old share as its quota allows
        quota = sum(topics.values()) // n
        for m, a in previous.items():
            if m in out:
                old = {(t, p) for t, ps in a.items() for p in ps}
                new = {(t, p) for t, ps in out[m].items() for p in ps}
                assert len(old & new) >= min(len(old), quota)


# ------------------------------------------------------------------- operator (control plane)
def test_operator_expire_member_fences_it_now():
    from kafka_emu.coordinator import ExpireMember
    g = two_members()
    r = g.other(ExpireMember(request_id="x", group_id="g", member_id="b"))
    assert (r.error, r.member_ids) == (E.NONE, ("b",))
    assert "b" not in g.group().members and g.group().group_epoch == 3
    assert g.other(ExpireMember(request_id="y", group_id="g", member_id="b")).error == E.UNKNOWN_MEMBER_ID


def test_operator_ignore_heartbeats_lets_the_session_run_out():
    from kafka_emu.coordinator import IgnoreHeartbeats
    g = two_members()
    assert g.other(IgnoreHeartbeats(request_id="x", group_id="g", member_id="a")).error == E.NONE
    answers, epoch = [], 1
    for _ in range(5):
        g.advance(10_000)
        r = g.hb("a", epoch, owned={"t": {0, 1, 2}})  # it revokes in time: no rebalance timeout
        answers.append(r.error)
        epoch = r.member_epoch or epoch
        g.hb("b", g.member("b").member_epoch, owned={})
    assert answers == [E.NONE] * 4 + [E.UNKNOWN_MEMBER_ID]  # answered, yet fenced at 45 s
    assert "b" in g.group().members


def test_operator_trigger_rebalance_bumps_group_epoch_and_delete_with_force():
    from kafka_emu.coordinator import DeleteGroup, TriggerRebalance
    g = two_members()
    assert g.other(TriggerRebalance(request_id="x", group_id="g")).error == E.NONE
    assert g.group().group_epoch == 3 and g.group().state.value == "Assigning"
    assert g.hb("a", 1, owned=None).error == E.NONE and g.group().assignment_epoch == 3
    assert g.other(DeleteGroup(request_id="d", group_id="g")).error == E.NON_EMPTY_GROUP
    r = g.other(DeleteGroup(request_id="d", group_id="g", force=True))
    assert r.error == E.NONE and set(r.member_ids) == {"a", "b"} and g.group() is None


def test_offsets_of_unsubscribed_topics_expire_and_an_empty_group_goes():
    g = CG(topics={"t": 1, "old": 1}, offsets_retention_minutes=1, offsets_retention_check_interval_ms=10_000)
    g.hb("a", 0)
    for topic in ("t", "old"):
        g.other(OffsetCommit(request_id="c", group_id="g", generation_id=1, member_id="a",
                             group_instance_id=None, offsets=(CommitOffset(topic=topic, partition=0, offset=4),)))
    for _ in range(3):  # 75 s, heartbeating within the 45 s session
        g.advance(25_000)
        g.hb("a", 1, owned=None)
    fetched = g.other(OffsetFetch(request_id="f", group_id="g", topics=None)).partitions
    assert [(f.topic, f.offset) for f in fetched] == [("t", 4)]  # subscribed: kept
    g.hb("a", -1, owned=None)
    g.advance(70_000)
    assert g.group() is None  # Empty and without offsets: deleted
