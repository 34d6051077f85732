"""DescribeGroups hands out a group's last description again while nothing it reports has
changed (admin.describe_group; the broker reuses the encoded members of the same description).

After every kind of change the description is exactly what a build from scratch gives, and while
nothing reported changed it is the very same object. Checked step by step for each kind of change,
and as a property over the coordinator state machine's random operation sequences (every join,
rejoin, sync, heartbeat, leave, static replacement, expiry, operator command, deletion and time
advance it makes), with coordinator moves (unload, reload) added.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis.stateful import invariant, rule

from kafka_emu.coordinator import (DescribedGroup, DescribedMember, ExpireMember, GroupState,
                                   IgnoreHeartbeats, TriggerRebalance)
from kafka_emu.coordinator.consumer import ConsumerGroupHeartbeat

from .harness import SESSION, E, Harness, subscription
from .test_stateful import CoordinatorMachine


def from_scratch(coord, group_id: str) -> DescribedGroup:
    """What DescribeGroups (v6) reports, built straight from the group as reference 3.14 says:
    the state; in Stable the selected protocol and each member's metadata for it, else empty;
    each member's ids, client id and host and last assignment, in member order."""
    group = coord.group(group_id)
    if group is None:
        classic = not coord.has_group(group_id)
        return DescribedGroup(
            error=E.GROUP_ID_NOT_FOUND, group_id=group_id, state="Dead",
            error_message=f"Group {group_id} {'not found' if classic else 'is not a classic group'}.")
    stable = group.state is GroupState.STABLE
    return DescribedGroup(
        error=E.NONE, group_id=group_id, state=group.state.value,
        protocol_type=group.protocol_type or "",
        protocol_data=(group.protocol_name or "") if stable else "",
        members=tuple(DescribedMember(
            member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
            client_host=m.client_host, metadata=m.metadata(group.protocol_name) if stable else b"",
            assignment=m.assignment) for m in group.members.values()))


def described(h: Harness, group_id: str = "g") -> DescribedGroup:
    """The description now: right, and handed out again while nothing changes."""
    first = h.coord.describe(group_id)
    assert first == from_scratch(h.coord, group_id)
    again = h.coord.describe(group_id)
    assert again == first
    if h.coord.group(group_id) is not None:
        assert again is first
    # the DescribeGroups command gives the same object as the query
    (through_command,) = h.describe(group_id).groups
    assert through_command == first
    return first


def test_an_unchanged_group_gets_the_same_description_object():
    h = Harness()
    a, b, c = h.stable_group(3)
    before = described(h)
    # heartbeats, commits and fetches change nothing DescribeGroups reports
    for m in (a, b, c):
        assert h.heartbeat(m, 1, now=h.now + 100).error == E.NONE
    h.commit([("t", 0, 5)], member_id=a, generation=1)
    h.fetch(None)
    h.rid()
    h.coord._core.timers  # noqa: B018 - looking is not changing
    assert h.coord.describe("g") is before
    assert [m.assignment for m in before.members] == [b"a0", b"a1", b"a2"]


def test_every_kind_of_change_is_described_as_a_fresh_build():
    h = Harness()
    a, b = h.stable_group(2, client_id="cli", client_host="/10.0.0.1")
    seen = [described(h)]

    def changed() -> DescribedGroup:
        now = described(h)
        assert now is not seen[-1] and now != seen[-1]
        seen.append(now)
        return now

    # a new member joins: PreparingRebalance, no metadata, the newcomer listed
    new, _, _ = h.new_member(client_id="other", client_host="/10.0.0.2")
    d = changed()
    assert d.state == "PreparingRebalance" and d.members[-1].client_id == "other"
    # the others rejoin, one with a different subscription: CompletingRebalance
    h.join(a)
    h.join(b, protocols=(("range", subscription("t", "u")),))
    d = changed()
    assert d.state == "CompletingRebalance" and all(m.metadata == b"" for m in d.members)
    # the leader's assignment: Stable, metadata for the chosen protocol, new assignments
    leader = h.group().leader_id
    generation = h.group().generation
    for m in (a, b, new):
        if m != leader:
            h.sync(m, generation)
    h.sync(leader, generation, [(a, b"x0"), (b, b"x1"), (new, b"x2")])
    d = changed()
    assert d.state == "Stable" and [m.assignment for m in d.members] == [b"x0", b"x1", b"x2"]
    assert d.members[1].metadata == subscription("t", "u")
    # a member leaves
    h.leave(new)
    d = changed()
    assert new not in [m.member_id for m in d.members]
    # the rest rejoin and sync with new assignments: Stable again with those assignments
    _, ra = h.join(a)
    _, rb = h.join(b)
    leader, generation = h.group().leader_id, h.group().generation
    h.sync(b if leader == a else a, generation)
    h.sync(leader, generation, [(a, b"y0"), (b, b"y1")])
    d = changed()
    assert d.state == "Stable" and [m.assignment for m in d.members] == [b"y0", b"y1"]
    # the same assignments again, in a new generation: the same bytes, reported alike
    h.join(a)
    h.join(b)
    leader, generation = h.group().leader_id, h.group().generation
    changed()  # CompletingRebalance
    h.sync(b if leader == a else a, generation)
    h.sync(leader, generation, [(a, b"y0"), (b, b"y1")])
    d = changed()
    assert d == seen[-3]  # equal to the last Stable description, a new object all the same
    # a session expires: the member is gone, a rebalance starts
    h.heartbeat(a, generation, now=h.now + SESSION - 1)
    h.expire(h.now + 2)
    d = changed()
    assert [m.member_id for m in d.members] == [a] and d.state == "PreparingRebalance"
    # the rebalance completes with the one member left; an operator triggers another
    h.tick()
    h.join(a) if h.group().state is GroupState.PREPARING_REBALANCE else None
    h.tick()
    described(h)
    rid = h.rid()
    h.coord.handle(TriggerRebalance(request_id=rid, group_id="g"), h.now)
    assert described(h).state in ("PreparingRebalance", "CompletingRebalance")
    # the operator expires the last member: Empty, no members
    rid = h.rid()
    h.coord.handle(ExpireMember(request_id=rid, group_id="g", member_id=a), h.now)
    h.tick()
    d = described(h)
    assert d.members == () and d.state == "Empty"
    # the group is deleted: described as not found; then formed again under the same id
    assert h.delete_groups("g").results == (("g", E.NONE),)
    d = described(h)
    assert d.error == E.GROUP_ID_NOT_FOUND
    h.stable_group(2)
    d = described(h)
    assert d.state == "Stable" and len(d.members) == 2


def test_static_replacement_is_described_with_the_new_member_id():
    h = Harness()
    (old,) = h.stable_group(1, static=True)
    before = described(h)
    rid, replies = h.join(instance="i0", now=h.now + 10)  # the instance restarts
    new = replies[rid].member_id
    assert new != old
    after = described(h)
    assert after is not before
    assert [(m.member_id, m.group_instance_id, m.assignment) for m in after.members] == [
        (new, "i0", b"a0")]


def test_ignoring_heartbeats_changes_nothing_reported():
    h = Harness()
    (a,) = h.stable_group(1)
    before = described(h)
    rid = h.rid()
    h.coord.handle(IgnoreHeartbeats(request_id=rid, group_id="g", member_id=a, ignore=True), h.now)
    assert described(h) is before


def test_a_coordinator_move_is_described_as_a_fresh_build():
    h = Harness()
    h.stable_group(2)
    before = described(h)
    h.coord.mark_dead("g", h.now + 1)
    dead = described(h)
    assert dead.state == "Dead" and dead is not before
    h.coord.load_group("g", h.now + 2)
    loaded = described(h)
    assert loaded.state == "Stable" and loaded == before and loaded is not dead


def test_a_kip_848_group_is_not_described_as_classic():
    h = Harness()
    h.stable_group(1, group_id="classic")
    h.coord.handle(ConsumerGroupHeartbeat(
        request_id=h.rid(), group_id="k", member_id="m", member_epoch=0, owned=(),
        subscribed_topic_names=("t",), topics={"t": 2}, rebalance_timeout_ms=30_000), h.now)
    assert h.coord.has_group("k") and h.coord.group("k") is None
    d = described(h, "k")
    assert d.error == E.GROUP_ID_NOT_FOUND and d.error_message == "Group k is not a classic group."
    described(h, "classic")


# --------------------------------------------------------------------------- the property
class DescribedMachine(CoordinatorMachine):
    """The coordinator state machine (test_stateful.py), every step followed by a check that
    the description is what a fresh build gives; plus coordinator moves."""

    @rule()
    def coordinator_move(self):
        """The group's partition moves: unloaded (Dead, described so in between), then loaded
        by the new coordinator as it was last stored."""
        self._mark = len(self.events)
        self._absorb(self.coord.mark_dead("g", self.now), None)
        self.description_is_a_fresh_build()
        self._mark = len(self.events)
        self._absorb(self.coord.load_group("g", self.now), None)
        # reloaded as last stored, which may be an earlier generation (or not at all)
        self.last_generation = 0

    @invariant()
    def description_is_a_fresh_build(self):
        if self.coord is None:
            return
        first = self.coord.describe("g")
        assert first == from_scratch(self.coord, "g")
        if self.coord.group("g") is not None:
            assert self.coord.describe("g") is first


DescribedMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=50, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
TestDescribedMachine = DescribedMachine.TestCase

