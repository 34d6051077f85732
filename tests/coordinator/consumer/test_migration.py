"""Online migration between the classic and the consumer group types, in the pure coordinator
with explicit time (Kafka 4.x's group.consumer.migration.policy, GroupMetadataManager)."""

from __future__ import annotations

import pytest

from kafka_emu.conformance.timeline_rules import consumer_group_rules
from kafka_emu.control.timeline import event_dict
from kafka_emu.coordinator import CoordinatorConfig, JoinGroup, ListGroups
from kafka_emu.coordinator.events import GroupCreated, GroupDeleted
from kafka_emu.coordinator.state import GroupState
from kafka_emu.coordinator.consumer import ConsumerGroupHeartbeat, MemberState
from kafka_emu.coordinator.consumer.events import MemberReconciled, TargetAssignmentComputed

from .migration_harness import (E, Mixed, assignment_v0, parts, read_assignment, sub_v0,
                                sub_v1)


def upgraded(**config):
    """Two classic members (0-2, 3-5) joined by consumer-protocol member n1."""
    m = Mixed(**config)
    ids, gen = m.classic_group()
    m.commit(ids[0], gen, {("t", 0): 5, ("t", 3): 7}, v9=False)
    r = m.hb("n1", 0)
    assert r.error == E.NONE
    return m, ids, gen, r


def rejoin(m, member_id, **kw):
    """A classic member's rejoin and sync; its new assignment and generation."""
    j = m.join(member_id, **kw)
    assert j.error == E.NONE, j
    s = m.sync(member_id, j.generation_id)
    assert s.error == E.NONE, s
    return read_assignment(s.assignment), j.generation_id


def owned_once(m):
    seen = {}
    for member in m.cgroup().members.values():
        for t, ps in list(member.assigned.items()) + list(member.pending_revocation.items()):
            for p in ps:
                assert (t, p) not in seen, f"{t}-{p} held by {seen[(t, p)]} and {member.member_id}"
                seen[(t, p)] = member.member_id
    return seen


# ----------------------------------------------------------------------------------- upgrade
def test_first_consumer_heartbeat_converts_a_live_classic_group():
    m, ids, gen, r = upgraded()
    assert m.c.group("g") is None and m.cgroup() is not None
    cg = m.cgroup()
    c1, c2 = (cg.members[i] for i in ids)
    # members, their assignments and the classic generation are kept
    assert (c1.member_epoch, c1.state, parts(c1.assigned.items())) == (gen, MemberState.STABLE, {"t": {0, 1, 2}})
    assert parts(c2.assigned.items()) == {"t": {3, 4, 5}}
    assert c1.classic is not None and c1.classic.session_timeout_ms == Mixed.SESSION
    # the new member bumps the group epoch and waits for partitions the others hold
    assert (cg.group_epoch, r.member_epoch, parts(r.assignment)) == (gen + 1, gen + 1, {})
    assert m.fetch() == {("t", 0): 5, ("t", 3): 7}
    reasons = [e.reason for e in m.events if isinstance(e, GroupDeleted)]
    assert reasons == ["converted_to_consumer"]
    assert any(isinstance(e, GroupCreated) for e in m.events)
    owned_once(m)


def test_classic_members_rejoin_and_the_group_settles():
    m, (c1, c2), gen, r = upgraded()
    assert m.heartbeat(c1, gen) == E.REBALANCE_IN_PROGRESS
    a1, g1 = rejoin(m, c1)
    assert g1 == gen + 1 and a1["t"] < {0, 1, 2}
    assert m.heartbeat(c2, gen) == E.REBALANCE_IN_PROGRESS
    a2, _ = rejoin(m, c2)
    r = m.hb("n1", r.member_epoch)
    got = parts(r.assignment)
    assert sorted(a1["t"] | a2["t"] | got["t"]) == list(range(6))
    assert not (a1["t"] & a2["t"]) and not (a1["t"] & got["t"]) and not (a2["t"] & got["t"])
    assert m.heartbeat(c1, g1) == E.NONE
    assert m.cgroup().state.value == "Stable"
    d = m.describe()
    assert {x.member_id: x.member_type for x in d.members} == {c1: 0, c2: 0, "n1": 1}
    listed = m.one(ListGroups(request_id="l")).groups
    assert [(x.group_id, x.protocol_type, x.group_type) for x in listed] == [("g", "consumer", "consumer")]


def test_an_upgrade_mid_rebalance_puts_the_carried_over_targets_on_the_timeline():
    """confluent-kafka 2.10.1's consumer_rolling_upgrade (#34): the first consumer-protocol
    member arrived while the classic group rebalanced after a member left, so the members kept
    their last classic partitions (2-3, 4-5) and the next target changed only the joiner's
    (0-1). The carried-over targets were on no event, and the conformance kit's timeline rule,
    which builds each epoch's target from the events, saw 2-5 assigned to no member."""
    m = Mixed()
    (c1, c2, c3), gen = m.classic_group(members=("c1", "c2", "c3"))
    assert m.leave(c1).error == E.NONE
    assert m.c.group("g").state is GroupState.PREPARING_REBALANCE
    r = m.hb("n1", 0)
    assert r.error == E.NONE and parts(r.assignment) == {"t": {0, 1}}
    assert {c: m.cgroup().target[c] for c in (c2, c3)} == {
        c2: {"t": frozenset({2, 3})}, c3: {"t": frozenset({4, 5})}}
    carried = [e for e in m.events if isinstance(e, TargetAssignmentComputed)][0]
    assert (carried.assignment_epoch, carried.assignor, dict(carried.changed)) == (
        gen, "", {c2: (("t", (2, 3)),), c3: (("t", (4, 5)),)})
    assert {e.member_id: e.assigned for e in m.events if isinstance(e, MemberReconciled)
            and e.member_epoch == gen} == {c2: (("t", (2, 3)),), c3: (("t", (4, 5)),)}
    timeline = [event_dict(i, e) for i, e in enumerate(m.events)]
    assert consumer_group_rules(timeline, group_id="g",
                                partitions=[("t", p) for p in range(6)]) == []


def test_upgrade_answers_parked_requests_rebalance_in_progress():
    m = Mixed()
    ids, gen = m.classic_group()
    join = m.join_cmd(ids[0])  # a rejoin starts a rebalance and parks
    assert m.run(join) == {}
    cmd = ConsumerGroupHeartbeat(request_id="n", group_id="g", member_id="n1", member_epoch=0,
                                 owned=(), subscribed_topic_names=("t",),
                                 rebalance_timeout_ms=30_000, topics=m.topics)
    replies = m.run(cmd)
    assert replies[join.request_id].error == E.REBALANCE_IN_PROGRESS
    assert replies["n"].error == E.NONE


@pytest.mark.parametrize("config, why", [
    ({"group_consumer_migration_policy": "disabled"}, "policy"),
    ({"group_consumer_migration_policy": "downgrade"}, "policy"),
    ({"group_consumer_max_size": 1}, "size"),
])
def test_upgrade_refused(config, why):
    m = Mixed(**config)
    m.classic_group()
    r = m.hb("n1", 0)
    assert (r.error, r.error_message) == (E.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    assert m.c.group("g").state is GroupState.STABLE and m.cgroup() is None


def test_upgrade_refused_for_another_protocol_type():
    m = Mixed()
    m.run(m.join_cmd(protocol_type="connect"))
    m.advance(0)
    assert m.hb("n1", 0).error == E.GROUP_ID_NOT_FOUND


def test_upgrade_of_malformed_or_custom_assignments_is_refused():
    m = Mixed()
    ids, gen = m.classic_group(members=("c1",), split={"classic-m1": {"t": {0}}})
    m.c.group("g").members[ids[0]].assignment = b"\x00"
    r = m.hb("n1", 0)
    assert r.error == E.GROUP_ID_NOT_FOUND and "embedded consumer protocol is malformed" in r.error_message
    # assignor user data would be lost: UNSUPPORTED_VERSION, as Kafka refuses it
    m.c.group("g").members[ids[0]].assignment = assignment_v0({"t": {0}})[:-4] + b"\x00\x00\x00\x01x"
    r = m.hb("n1", 0)
    assert (r.error, r.error_message) == (E.UNSUPPORTED_VERSION, "userData from a custom assignor would be lost")
    assert m.c.group("g") is not None


# -------------------------------------------------------------------- classic members inside
def test_classic_member_joins_a_consumer_group():
    m = Mixed()
    a = m.hb("a", 0)
    assert parts(a.assignment) == {"t": set(range(6))}
    j = m.join(v4=True)
    assert j.error == E.MEMBER_ID_REQUIRED and j.member_id  # Kafka keeps no pending member
    assert set(m.cgroup().members) == {"a"}
    mid = j.member_id
    j = m.join(mid, v4=True)
    assert (j.error, j.generation_id, j.protocol_type, j.protocol_name, j.leader, j.members) == (
        E.NONE, 2, "consumer", "range", "", ())
    s = m.sync(mid, 2)
    assert read_assignment(s.assignment) == {}  # a still holds them all
    assert m.heartbeat(mid, 2) == E.NONE  # waiting on partitions still held
    a = m.hb("a", a.member_epoch, owned={"t": set(range(6))})
    kept = parts(a.assignment)["t"]
    m.hb("a", a.member_epoch, owned={"t": kept})
    assert m.heartbeat(mid, 2) == E.REBALANCE_IN_PROGRESS  # its partitions are free now
    got, gen = rejoin(m, mid)
    assert gen == 2 and got["t"] == set(range(6)) - kept
    owned_once(m)


def test_classic_sync_and_heartbeat_checks():
    m = Mixed()
    m.hb("a", 0)
    mid = m.join().member_id
    assert m.sync(mid, 99).error == E.ILLEGAL_GENERATION
    assert m.sync(mid, 2, name="roundrobin").error == E.INCONSISTENT_GROUP_PROTOCOL
    assert m.sync("a", 1).error == E.UNKNOWN_MEMBER_ID  # a consumer-protocol member
    assert m.sync("nobody", 2).error == E.UNKNOWN_MEMBER_ID
    assert m.heartbeat(mid, 99) == E.ILLEGAL_GENERATION
    assert m.heartbeat("a", 1) == E.UNKNOWN_MEMBER_ID
    # a protocol no classic member supports
    assert m.join(name="roundrobin").error == E.INCONSISTENT_GROUP_PROTOCOL


def test_classic_member_offsets_use_the_generation():
    m = Mixed()
    m.hb("a", 0)
    mid = m.join().member_id
    assert m.commit(mid, 2, {("t", 1): 3}, v9=False).partitions[0].error == E.NONE
    assert m.commit(mid, 1, {("t", 1): 3}).partitions[0].error == E.ILLEGAL_GENERATION
    assert m.commit("a", 0, {("t", 1): 3}).partitions[0].error == E.STALE_MEMBER_EPOCH


def test_classic_leave_bumps_the_epoch_once_and_names_each_member():
    m = Mixed()
    m.hb("a", 0)
    c1 = m.join().member_id
    c2 = m.join().member_id
    epoch = m.cgroup().group_epoch
    out = m.leave(c1, c2, "a", "nobody")
    assert [(x.member_id, x.error) for x in out.members] == [
        (c1, E.NONE), (c2, E.NONE), ("a", E.UNKNOWN_MEMBER_ID), ("nobody", E.UNKNOWN_MEMBER_ID)]
    assert m.cgroup().group_epoch == epoch + 1 and set(m.cgroup().members) == {"a"}


def test_classic_member_session_join_and_sync_timeouts_fence_it():
    m = Mixed()
    a = m.hb("a", 0)
    c = m.join().member_id  # never syncs: the sync timer (its rebalance timeout) fences it
    m.advance(Mixed.SESSION - 1)
    m.hb("a", a.member_epoch)
    assert c in m.cgroup().members
    m.advance(1)  # its session (10 s) runs out first
    assert c not in m.cgroup().members
    # a member told to rejoin that never does: the join timer fences it
    c = m.join().member_id
    gen = m.sync(c, m.cgroup().members[c].member_epoch) and m.cgroup().members[c].member_epoch
    m.hb("b", 0)  # bumps the group epoch
    assert m.heartbeat(c, gen) == E.REBALANCE_IN_PROGRESS
    for _ in range(int(Mixed.REBALANCE / 5000)):
        m.advance(5000)
        m.heartbeat(c, gen)  # keeps its session alive, never rejoins
        m.hb("a", m.cgroup().members["a"].member_epoch)
        m.hb("b", m.cgroup().members["b"].member_epoch)
    assert c not in m.cgroup().members


def test_cooperative_classic_member_revokes_before_partitions_move():
    m = Mixed()
    ids, gen = m.classic_group(members=("c1",), split={"classic-m1": {"t": set(range(6))}})
    c1 = ids[0]
    r = m.hb("n1", 0)
    assert m.heartbeat(c1, gen) == E.REBALANCE_IN_PROGRESS
    all6 = {"t": set(range(6))}
    j = m.join(c1, metadata=sub_v1(["t"], all6))  # still owns all six
    assert j.generation_id == gen  # revoking: epoch unchanged
    assert m.cgroup().members[c1].state is MemberState.UNREVOKED_PARTITIONS
    s = m.sync(c1, gen)
    kept = read_assignment(s.assignment)["t"]
    assert kept < set(range(6))
    r = m.hb("n1", r.member_epoch)
    assert parts(r.assignment) == {}  # nothing free while c1 revokes
    assert m.heartbeat(c1, gen) == E.REBALANCE_IN_PROGRESS
    j = m.join(c1, metadata=sub_v1(["t"], {"t": kept}))
    assert j.generation_id == gen + 1
    r = m.hb("n1", r.member_epoch)
    assert parts(r.assignment)["t"] == set(range(6)) - kept
    owned_once(m)


def test_static_classic_member_restarting_takes_its_place():
    m = Mixed()
    m.hb("a", 0)
    j = m.join(instance="i1")
    assert j.error == E.NONE
    old = j.member_id
    j2 = m.join(instance="i1")
    assert j2.error == E.NONE and j2.member_id != old
    assert m.cgroup().static_members == {"i1": j2.member_id} and old not in m.cgroup().members
    assert m.join(old, instance="i1").error == E.FENCED_INSTANCE_ID


# --------------------------------------------------------------------------------- downgrade
def test_last_consumer_member_leaving_converts_back_and_rebalances():
    m, (c1, c2), gen, r = upgraded()
    a1, g1 = rejoin(m, c1)
    epoch = m.cgroup().group_epoch
    out = m.hb("n1", -1, owned=None)
    assert (out.error, out.member_epoch) == (E.NONE, -1)
    assert m.cgroup() is None
    group = m.c.group("g")
    assert group.state is GroupState.PREPARING_REBALANCE
    assert group.generation == epoch and group.protocol_name == "range"
    assert set(group.members) == {c1, c2}
    assert read_assignment(group.members[c1].assignment) == a1  # its target, kept for describe
    assert m.heartbeat(c1, g1) == E.REBALANCE_IN_PROGRESS
    assert m.run(m.join_cmd(c1)) == {}  # parked until c2 rejoins
    out = m.run(m.join_cmd(c2))
    assert {r.member_id for r in out.values()} == {c1, c2}
    assert all(r.generation_id == epoch + 1 for r in out.values())
    assert m.fetch() == {("t", 0): 5, ("t", 3): 7}
    assert [e.reason for e in m.events if isinstance(e, GroupDeleted)] == [
        "converted_to_consumer", "converted_to_classic"]


def test_after_a_rollback_the_leader_rejoining_in_stable_rebalances_a_follower_does_not():
    """The range rollback with real clients (#34): after the downgrade the classic group's leader
    is the first member kept (kafka-python there); once the group is Stable again, a JoinGroup
    from the leader forces a rebalance and one from a follower with unchanged metadata gets the
    current generation back (Kafka's classicGroupJoinExistingMember in Stable). kafka-python
    3.0.12 sends that leader JoinGroup whenever a rebalance completes while no poll() waits for
    it, which kept the group rebalancing; the coordinator's part is this, as Kafka's."""
    m, (c1, c2), gen, r = upgraded()
    rejoin(m, c1)
    m.hb("n1", -1, owned=None)
    group = m.c.group("g")
    epoch = group.generation
    assert (group.state, group.leader_id) == (GroupState.PREPARING_REBALANCE, c1)
    assert m.heartbeat(c2, gen) == E.ILLEGAL_GENERATION  # its epoch never reached the group's
    assert m.run(m.join_cmd(c1)) == {}
    joined = m.run(m.join_cmd(c2))
    by_member = {j.member_id: j for j in joined.values()}
    assert by_member[c1].leader == c1 and len(by_member[c1].members) == 2
    assert by_member[c2].members == () and by_member[c2].generation_id == epoch + 1
    split = {c1: {"t": {0, 1, 2}}, c2: {"t": {3, 4, 5}}}
    assert m.sync(c1, epoch + 1, [(c, assignment_v0(split[c])) for c in (c1, c2)]).error == E.NONE
    assert read_assignment(m.sync(c2, epoch + 1).assignment) == split[c2]
    assert group.state is GroupState.STABLE

    m.now += 10
    again = m.join(c2)  # a follower, same protocols: the current generation, no rebalance
    assert (again.error, again.generation_id, again.leader, again.members) == (
        E.NONE, epoch + 1, c1, ())
    assert group.state is GroupState.STABLE and m.heartbeat(c1, epoch + 1) == E.NONE

    assert m.run(m.join_cmd(c1)) == {}  # the leader: a new rebalance, parked until c2 rejoins
    assert group.state is GroupState.PREPARING_REBALANCE
    assert m.heartbeat(c2, epoch + 1) == E.REBALANCE_IN_PROGRESS
    assert {j.generation_id for j in m.run(m.join_cmd(c2)).values()} == {epoch + 2}
    assert m.fetch() == {("t", 0): 5, ("t", 3): 7}  # commits of the first classic generation


def test_consumer_member_session_expiry_converts_back():
    m, (c1, c2), gen, r = upgraded()
    gens = {c: rejoin(m, c)[1] for c in (c1, c2)}  # n1 goes silent from here
    for _ in range(5):
        m.advance(Mixed.SESSION - 1000)
        if m.cgroup() is not None:
            for c in (c1, c2):
                assert m.heartbeat(c, gens[c]) in (E.NONE, E.REBALANCE_IN_PROGRESS)
    group = m.c.group("g")
    assert group is not None and set(group.members) == {c1, c2}
    assert group.state is GroupState.PREPARING_REBALANCE


@pytest.mark.parametrize("policy", ["upgrade", "disabled"])
def test_no_downgrade_without_the_policy(policy):
    m, (c1, c2), gen, r = upgraded()
    m.c._core.config = CoordinatorConfig(group_consumer_migration_policy=policy)
    m.hb("n1", -1, owned=None)
    assert m.c.group("g") is None and set(m.cgroup().members) == {c1, c2}
    assert m.heartbeat(c1, gen) == E.REBALANCE_IN_PROGRESS  # they rejoin the consumer group
    got, _ = rejoin(m, c1)
    assert m.cgroup().members[c1].classic is not None


def test_last_member_leaving_leaves_an_empty_consumer_group_a_classic_join_replaces():
    m = Mixed(group_consumer_migration_policy="disabled")
    m.hb("a", 0)
    m.hb("a", -1, owned=None)
    assert m.cgroup() is not None and not m.cgroup().members
    m.run(m.join_cmd())
    assert m.cgroup() is None and m.c.group("g") is not None


# ----------------------------------------------------------------------------------- config
@pytest.mark.parametrize("raw, value", [("Bidirectional", "bidirectional"), ("UPGRADE", "upgrade"),
                                        ("downgrade", "downgrade"), (" disabled ", "disabled")])
def test_policy_config_values(raw, value):
    config = CoordinatorConfig.from_kafka({"group.consumer.migration.policy": raw})
    assert config.group_consumer_migration_policy == value


def test_policy_default_is_bidirectional_and_unknown_values_are_refused():
    assert CoordinatorConfig().group_consumer_migration_policy == "bidirectional"
    with pytest.raises(ValueError, match="expected one of"):
        CoordinatorConfig.from_kafka({"group.consumer.migration.policy": "sideways"})


def test_sub_v0_is_what_the_harness_means():
    # the independent encoder and ours agree on a v0 subscription
    from kafka_emu.protocol.messages.consumer_protocol import decode_subscription
    assert decode_subscription(sub_v0("t", "u")).topics == ["t", "u"]


def test_classic_static_member_replacing_the_last_consumer_member_converts_without_rebalance():
    m = Mixed()
    m.hb("n1", 0, instance_id="i1")
    c = m.join().member_id  # a classic member beside it
    rejoin(m, c)
    n1 = m.hb("n1", m.cgroup().members["n1"].member_epoch, instance_id="i1",
              owned={"t": set(range(6))})
    target = parts(m.cgroup().target["n1"].items())
    m.hb("n1", -2, instance_id="i1", owned=None)  # a static member's temporary leave
    j = m.join(instance="i1")  # the same instance restarts on the classic protocol
    assert j.error == E.NONE
    group = m.c.group("g")
    assert m.cgroup() is None and group.state is GroupState.STABLE  # no rebalance
    assert group.generation == j.generation_id
    assert set(group.members) == {c, j.member_id}
    s = m.sync(j.member_id, j.generation_id)
    assert s.error == E.NONE and read_assignment(s.assignment) == target
    assert n1.error == E.NONE


def test_consumer_member_takes_over_a_classic_static_members_instance_id():
    m = Mixed()
    m.hb("a", 0)
    c = m.join(instance="i1").member_id
    rejoin(m, c, instance="i1")
    before = dict(m.cgroup().target[c])
    r = m.hb("n1", 0, instance_id="i1")  # the same instance restarted on the consumer protocol
    assert r.error == E.NONE  # no UNRELEASED_INSTANCE_ID: its predecessor spoke classic
    group = m.cgroup()
    assert c not in group.members and group.static_members == {"i1": "n1"}
    assert group.members["n1"].classic is None
    assert group.target["n1"] == before  # it takes its predecessor's place, no rebalance


def test_a_classic_group_with_only_member_id_required_ids_is_empty_and_replaced():
    m = Mixed()
    j = m.join(v4=True)
    assert j.error == E.MEMBER_ID_REQUIRED and m.c.group("g").state is GroupState.EMPTY
    assert m.hb("n1", 0).error == E.NONE  # Kafka: isEmptyClassicGroup, whatever is pending
    assert m.c.group("g") is None and set(m.cgroup().members) == {"n1"}
    assert not [d for d in m.c.deadlines() if d.kind == "pending_member"]


def test_a_classic_join_to_a_consumer_group_checks_the_session_timeout_first():
    m = Mixed()
    m.hb("a", 0)
    out = m.one(JoinGroup(
        request_id="s", group_id="g", member_id="", group_instance_id=None,
        session_timeout_ms=1, rebalance_timeout_ms=1000, protocol_type="consumer",
        protocols=(("range", sub_v0("t")),), client_id="c", client_host="/h", topics=m.topics))
    assert out.error == E.INVALID_SESSION_TIMEOUT and set(m.cgroup().members) == {"a"}
