"""ShareGroupHeartbeat in the pure coordinator, with explicit now_ms (Kafka 4.2's
GroupMetadataManager share paths): joins, epochs, leave, session expiry, errors, the other group
types' APIs on a share group id, describe / list / delete, and the queries ShareFetch uses."""

from __future__ import annotations

import itertools

import pytest

from kafka_emu.coordinator.commands import (DeleteGroups, DescribeGroups, ExpireMember,
                                            Heartbeat, JoinGroup, ListGroups, OffsetCommit,
                                            CommitOffset, OffsetFetch)
from kafka_emu.coordinator.config import CoordinatorConfig
from kafka_emu.coordinator.consumer.commands import ConsumerGroupHeartbeat
from kafka_emu.coordinator.coordinator import Coordinator
from kafka_emu.coordinator.share.commands import ShareGroupDescribe, ShareGroupHeartbeat
from kafka_emu.coordinator.share.config import ShareGroupConfig
from kafka_emu.errors import ErrorCode

TOPICS = {"t": 3, "u": 1}
_ids = itertools.count()


def hb(coord, now, member, epoch, topics=None, group="g", catalogue=TOPICS, **kw):
    cmd = ShareGroupHeartbeat(request_id=next(_ids), group_id=group, member_id=member,
                              member_epoch=epoch,
                              subscribed_topic_names=None if topics is None else tuple(topics),
                              topics=catalogue, client_id="cid", client_host="/127.0.0.1", **kw)
    [reply] = coord.handle(cmd, now)
    return reply.result


def assigned(result):
    return {t: set(ps) for t, ps in result.assignment}


def test_join_assigns_everything_to_a_lone_member_at_epoch_1():
    c = Coordinator()
    r = hb(c, 0, "m1", 0, ["t"])
    assert r.error == ErrorCode.NONE
    assert (r.member_id, r.member_epoch) == ("m1", 1)
    assert r.heartbeat_interval_ms == CoordinatorConfig().share.heartbeat_interval_ms
    assert assigned(r) == {"t": {0, 1, 2}}
    assert c.share_assignment("g", "m1") == {"t": frozenset({0, 1, 2})}
    assert c.share_group_state("g") == "Stable"
    assert c.group_type("g") == "share"


def test_second_member_rebalances_and_first_gets_its_share_at_next_heartbeat():
    c = Coordinator()
    hb(c, 0, "m1", 0, ["t"])
    r2 = hb(c, 10, "m2", 0, ["t"])
    assert r2.member_epoch == 2
    r1 = hb(c, 20, "m1", 1)
    assert r1.member_epoch == 2
    got = [set().union(*c.share_assignment("g", m).values()) for m in ("m1", "m2")]
    assert got[0] | got[1] == {0, 1, 2} and not got[0] & got[1]
    assert sorted(map(len, got)) == [1, 2]
    # an unchanged heartbeat carries no assignment
    assert hb(c, 30, "m1", 2).assignment is None


def test_more_members_than_partitions_share_the_partition():
    c = Coordinator()
    for i, m in enumerate(("a", "b", "c")):
        hb(c, i, m, 0, ["u"])
    for m in ("a", "b"):
        hb(c, 10, m, c.share_member_epoch("g", m))
    for m in ("a", "b", "c"):
        assert c.share_assignment("g", m) == {"u": frozenset({0})}


def test_previous_epoch_is_accepted_other_epochs_are_fenced():
    c = Coordinator()
    hb(c, 0, "m1", 0, ["t"])
    hb(c, 1, "m2", 0, ["t"])
    assert hb(c, 2, "m1", 1).member_epoch == 2  # m1 moves 1 -> 2
    assert hb(c, 3, "m1", 1).error == ErrorCode.NONE  # the previous epoch: lost answer
    r = hb(c, 4, "m1", 7)
    assert r.error == ErrorCode.FENCED_MEMBER_EPOCH and "greater member epoch (7)" in r.error_message
    hb(c, 5, "m3", 0, ["t"])
    hb(c, 6, "m1", 2)  # m1: 2 -> 3, previous 2
    r = hb(c, 7, "m1", 1)
    assert r.error == ErrorCode.FENCED_MEMBER_EPOCH and "smaller member epoch (1)" in r.error_message


def test_known_member_rejoining_with_epoch_0_keeps_the_group_epoch():
    c = Coordinator()
    hb(c, 0, "m1", 0, ["t"])
    r = hb(c, 1, "m1", 0, ["t"])
    assert r.error == ErrorCode.NONE and r.member_epoch == 1
    assert assigned(r) == {"t": {0, 1, 2}}  # a join always carries the assignment


def test_leave_fences_and_answers_minus_one():
    c = Coordinator()
    hb(c, 0, "m1", 0, ["t"])
    hb(c, 1, "m2", 0, ["t"])
    r = hb(c, 2, "m2", -1)
    assert (r.error, r.member_id, r.member_epoch) == (ErrorCode.NONE, "m2", -1)
    assert c.share_assignment("g", "m2") is None
    assert hb(c, 3, "m1", 1).member_epoch == 3
    assert c.share_assignment("g", "m1") == {"t": frozenset({0, 1, 2})}
    hb(c, 4, "m1", -1)
    assert c.share_group_state("g") == "Empty"


def test_session_expiry_on_the_coordinator_clock():
    c = Coordinator()
    session = CoordinatorConfig().share.session_timeout_ms
    hb(c, 0, "m1", 0, ["t"])
    hb(c, 100, "m2", 0, ["t"])
    hb(c, session - 1, "m1", 1)  # m1 keeps heartbeating, m2 does not
    c.expire(session + 100)
    assert c.share_assignment("g", "m2") is None
    assert c.share_assignment("g", "m1") is not None
    assert [d.kind for d in c.deadlines() if d.group_id == "g"] == ["session"]


def test_group_session_timeout_override_rides_on_the_heartbeat():
    c = Coordinator()
    hb(c, 0, "m1", 0, ["t"], session_timeout_ms=50_000, heartbeat_interval_ms=6000)
    r = hb(c, 1, "m1", 1, session_timeout_ms=50_000, heartbeat_interval_ms=6000)
    assert r.heartbeat_interval_ms == 6000
    [d] = c.deadlines()[:1]
    assert d.deadline_ms == 50_001


@pytest.mark.parametrize("member, group, rack, epoch, topics, message", [
    ("", "g", None, 0, ["t"], "MemberId can't be empty."),
    ("  ", "g", None, 0, ["t"], "MemberId can't be empty."),
    ("m", "", None, 0, ["t"], "GroupId can't be empty."),
    ("m", "g", " ", 0, ["t"], "RackId can't be empty."),
    ("m", "g", None, 0, None, "SubscribedTopicNames must be set in first request."),
    ("m", "g", None, 0, [], "SubscribedTopicNames must be set in first request."),
    ("m", "g", None, -2, None, "MemberEpoch is invalid."),
])
def test_invalid_requests(member, group, rack, epoch, topics, message):
    c = Coordinator()
    r = hb(c, 0, member, epoch, topics, group=group, rack_id=rack)
    assert (r.error, r.error_message) == (ErrorCode.INVALID_REQUEST, message)


def test_lookup_errors():
    c = Coordinator()
    r = hb(c, 0, "m", 1)
    assert (r.error, r.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Share group g not found.")
    r = hb(c, 0, "m", -1)
    assert (r.error, r.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group g not found.")
    hb(c, 0, "m1", 0, ["t"])
    r = hb(c, 1, "nobody", 3)
    assert (r.error, r.error_message) == (ErrorCode.UNKNOWN_MEMBER_ID,
                                          "Member nobody is not a member of group g.")
    r = hb(c, 1, "nobody", -1)
    assert r.error == ErrorCode.UNKNOWN_MEMBER_ID


def test_group_max_size():
    c = Coordinator(CoordinatorConfig(share=ShareGroupConfig(max_size=1)))
    hb(c, 0, "m1", 0, ["t"])
    r = hb(c, 1, "m2", 0, ["t"])
    assert (r.error, r.error_message) == (
        ErrorCode.GROUP_MAX_SIZE_REACHED,
        "The share group has reached its maximum capacity of 1 members.")
    assert hb(c, 2, "m1", 0, ["t"]).error == ErrorCode.NONE  # a known member may rejoin


def classic_join(group):
    return JoinGroup(request_id=next(_ids), group_id=group, member_id="", group_instance_id=None,
                     session_timeout_ms=10000, rebalance_timeout_ms=10000, protocol_type="consumer",
                     protocols=(("range", b""),), client_id="c", client_host="h",
                     require_known_member_id=False)


def test_share_heartbeat_on_a_classic_or_consumer_group_id():
    c = Coordinator()
    c.handle(classic_join("classic"), 0)
    c.handle(ConsumerGroupHeartbeat(request_id=1, group_id="kip848", member_id="x", member_epoch=0,
                                    rebalance_timeout_ms=1000, subscribed_topic_names=("t",),
                                    owned=(), topics=TOPICS), 0)
    for gid in ("classic", "kip848"):
        for epoch in (0, 1, -1):
            r = hb(c, 1, "m", epoch, ["t"] if epoch == 0 else None, group=gid)
            assert (r.error, r.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                  f"Group {gid} is not a share group.")


def test_other_types_apis_on_a_share_group():
    c = Coordinator()
    hb(c, 0, "m1", 0, ["t"])
    [reply] = c.handle(classic_join("g"), 1)
    assert (reply.result.error, reply.result.member_id) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "")
    [reply] = c.handle(Heartbeat(request_id=2, group_id="g", generation_id=1, member_id="m1",
                                 group_instance_id=None), 1)
    assert reply.result.error == ErrorCode.UNKNOWN_MEMBER_ID
    [reply] = c.handle(ConsumerGroupHeartbeat(request_id=3, group_id="g", member_id="m1",
                                              member_epoch=0, rebalance_timeout_ms=1000,
                                              subscribed_topic_names=("t",), owned=(),
                                              topics=TOPICS), 1)
    assert (reply.result.error, reply.result.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    [reply] = c.handle(OffsetCommit(request_id=4, group_id="g", generation_id=-1, member_id="", group_instance_id=None,
                                    offsets=(CommitOffset(topic="t", partition=0, offset=1),)), 1)
    assert reply.result.partitions[0].error == ErrorCode.GROUP_ID_NOT_FOUND
    [reply] = c.handle(OffsetFetch(request_id=5, group_id="g", topics=None), 1)
    assert reply.result.error == ErrorCode.GROUP_ID_NOT_FOUND
    from kafka_emu.coordinator.txn_offsets import TxnOffsetCommit
    [reply] = c.handle(TxnOffsetCommit(request_id=6, group_id="g", producer_id=1, producer_epoch=0,
                                       offsets=(CommitOffset(topic="t", partition=0, offset=1),)), 1)
    assert reply.result.partitions[0].error == ErrorCode.GROUP_ID_NOT_FOUND
    assert c.group_type("g") == "share"  # nothing converted it


def test_describe_list_delete():
    c = Coordinator()
    c.handle(classic_join("classic"), 0)
    hb(c, 0, "m1", 0, ["t", "u"], rack_id="r1")
    [reply] = c.handle(ShareGroupDescribe(request_id=1, group_ids=("g", "classic", "none", "")), 1)
    g, classic, none, empty = reply.result.groups
    assert (g.error, g.state, g.group_epoch, g.assignment_epoch, g.assignor_name) == (
        ErrorCode.NONE, "Stable", 1, 1, "simple")
    [m] = g.members
    assert (m.member_id, m.rack_id, m.member_epoch, m.subscribed_topic_names, m.assignment) == (
        "m1", "r1", 1, ("t", "u"), (("t", (0, 1, 2)), ("u", (0,))))
    assert (classic.error, classic.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                      "Group classic is not a share group.")
    assert (none.error, none.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group none not found.")
    assert empty.error == ErrorCode.INVALID_GROUP_ID

    [reply] = c.handle(ListGroups(request_id=2, states_filter=(), types_filter=("share",)), 1)
    assert [(x.group_id, x.protocol_type, x.state, x.group_type) for x in reply.result.groups] == [
        ("g", "share", "Stable", "share")]
    [reply] = c.handle(ListGroups(request_id=3, states_filter=("empty",), types_filter=()), 1)
    assert "g" not in [x.group_id for x in reply.result.groups]

    [reply] = c.handle(DescribeGroups(request_id=4, group_ids=("g",), not_found_is_error=True), 1)
    assert (reply.result.groups[0].error, reply.result.groups[0].error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a classic group.")
    [reply] = c.handle(DescribeGroups(request_id=5, group_ids=("g",), not_found_is_error=False), 1)
    assert (reply.result.groups[0].error, reply.result.groups[0].state) == (ErrorCode.NONE, "Dead")

    [reply] = c.handle(DeleteGroups(request_id=6, group_ids=("g",)), 1)
    assert reply.result.results == (("g", ErrorCode.NON_EMPTY_GROUP),)
    hb(c, 2, "m1", -1)
    [reply] = c.handle(DeleteGroups(request_id=7, group_ids=("g",)), 3)
    assert reply.result.results == (("g", ErrorCode.NONE),)
    assert c.group_type("g") is None


def test_subscription_and_metadata_changes_bump_the_group_epoch():
    c = Coordinator()
    hb(c, 0, "m1", 0, ["t"])
    r = hb(c, 1, "m1", 1, ["t", "u"])
    assert r.member_epoch == 2 and assigned(r) == {"t": {0, 1, 2}, "u": {0}}
    r = hb(c, 2, "m1", 2, catalogue={"t": 4, "u": 1})  # a partition added to t
    assert r.member_epoch == 3 and assigned(r)["t"] == {0, 1, 2, 3}
    assert hb(c, 3, "m1", 3, catalogue={"t": 4, "u": 1}).member_epoch == 3


def test_operator_expire_member():
    c = Coordinator()
    hb(c, 0, "m1", 0, ["t"])
    [reply] = c.handle(ExpireMember(request_id=1, group_id="g", member_id="m1"), 1)
    assert reply.result.error == ErrorCode.NONE
    assert c.share_group_state("g") == "Empty"


def test_departures_for_the_share_partitions():
    c = Coordinator()
    hb(c, 0, "m0", 0, ["t"])
    hb(c, 0, "m0", -1)
    assert c.take_share_departures() == []  # not tracked until asked
    c.track_share_departures()
    hb(c, 1, "m1", 0, ["t"])
    hb(c, 2, "m2", 0, ["t"])
    hb(c, 3, "m1", -1)
    session = CoordinatorConfig().share.session_timeout_ms
    c.expire(2 + session)
    assert c.take_share_departures() == [("g", "m1", 3), ("g", "m2", 2 + session)]
    c.handle(DeleteGroups(request_id=99, group_ids=("g",)), 3 + session)
    assert c.take_share_departures() == [("g", None, 3 + session)]
    assert c.take_share_departures() == []


def test_coordinator_move_stops_then_restarts_the_sessions():
    c = Coordinator()
    hb(c, 0, "m1", 0, ["t"], session_timeout_ms=50_000)
    c.mark_dead("g", 10)
    assert [d for d in c.deadlines() if d.group_id == "g"] == []
    c.expire(200_000)  # no session runs while unloaded
    assert c.share_assignment("g", "m1") is not None
    c.load_group("g", 200_000)
    [d] = [d for d in c.deadlines() if d.group_id == "g"]
    assert (d.kind, d.member_id, d.deadline_ms) == ("session", "m1", 250_000)
    assert hb(c, 200_001, "m1", 1).error == ErrorCode.NONE


def test_consumer_group_describe_of_a_share_group():
    from kafka_emu.coordinator.consumer.commands import ConsumerGroupDescribe
    c = Coordinator()
    hb(c, 0, "m1", 0, ["t"])
    [reply] = c.handle(ConsumerGroupDescribe(request_id=1, group_ids=("g",)), 1)
    [g] = reply.result.groups
    assert (g.error, g.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                          "Group g is not a consumer group.")
