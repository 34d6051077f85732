"""Share group membership under random joins, heartbeats, leaves, subscription and partition
count changes and session expiries (hypothesis RuleBasedStateMachine), with explicit now_ms.

Invariants: Empty exactly when there are no members; the group epoch never decreases and is never
behind the assignment epoch, and no member's epoch is ahead of it; a member only holds
partitions of topics it subscribes to, that exist; once every member has heartbeated at the
current epochs, every partition of every subscribed topic is held by somebody, no partition by
more than ceil(M / P) members when all subscribe alike, and each member holds its target."""

from __future__ import annotations

import itertools

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafka_emu.coordinator.config import CoordinatorConfig
from kafka_emu.coordinator.coordinator import Coordinator
from kafka_emu.coordinator.share.commands import ShareGroupHeartbeat
from kafka_emu.errors import ErrorCode

MEMBERS = ["m1", "m2", "m3", "m4"]
TOPICS = ["a", "b"]
SESSION = CoordinatorConfig().share.session_timeout_ms


class ShareMembership(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.c = Coordinator()
        self.now = 0
        self.ids = itertools.count()
        self.catalogue = {"a": 2, "b": 1}
        self.epochs: dict[str, int] = {}  # what each client believes its epoch is
        self.last_group_epoch = 0

    def group(self):
        return self.c._core.share_groups.get("g")

    def send(self, member, epoch, topics=None):
        [reply] = self.c.handle(ShareGroupHeartbeat(
            request_id=next(self.ids), group_id="g", member_id=member, member_epoch=epoch,
            subscribed_topic_names=topics, topics=dict(self.catalogue)), self.now)
        return reply.result

    @rule(member=st.sampled_from(MEMBERS),
          topics=st.lists(st.sampled_from(TOPICS), min_size=1, unique=True))
    def join(self, member, topics):
        r = self.send(member, 0, tuple(topics))
        assert r.error == ErrorCode.NONE
        assert r.assignment is not None  # a join always carries the assignment
        self.epochs[member] = r.member_epoch

    @precondition(lambda self: self.epochs)
    @rule(data=st.data())
    def heartbeat(self, data):
        member = data.draw(st.sampled_from(sorted(self.epochs)))
        r = self.send(member, self.epochs[member])
        if r.error == ErrorCode.UNKNOWN_MEMBER_ID:  # expired meanwhile
            del self.epochs[member]
            return
        assert r.error == ErrorCode.NONE, r
        self.epochs[member] = r.member_epoch

    @precondition(lambda self: self.epochs)
    @rule(data=st.data(), topics=st.lists(st.sampled_from(TOPICS), min_size=1, unique=True))
    def resubscribe(self, data, topics):
        member = data.draw(st.sampled_from(sorted(self.epochs)))
        r = self.send(member, self.epochs[member], tuple(topics))
        if r.error == ErrorCode.UNKNOWN_MEMBER_ID:
            del self.epochs[member]
            return
        assert r.error == ErrorCode.NONE
        self.epochs[member] = r.member_epoch

    @precondition(lambda self: self.epochs)
    @rule(data=st.data())
    def leave(self, data):
        member = data.draw(st.sampled_from(sorted(self.epochs)))
        r = self.send(member, -1)
        assert r.error in (ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID)
        del self.epochs[member]

    @rule(topic=st.sampled_from(TOPICS))
    def add_partition(self, topic):
        self.catalogue[topic] += 1

    @rule(ms=st.sampled_from([1000, SESSION // 2, SESSION + 1]))
    def advance(self, ms):
        self.now += ms
        self.c.expire(self.now)

    @invariant()
    def consistent(self):
        g = self.group()
        if g is None:
            return
        assert (g.state.value == "Empty") == (not g.members)
        assert g.group_epoch >= self.last_group_epoch
        self.last_group_epoch = g.group_epoch
        assert g.group_epoch >= g.assignment_epoch
        counts: dict[str, int] = {}
        for m in g.members.values():
            for t in m.subscribed_topic_names:
                counts[t] = counts.get(t, 0) + 1
        assert g.topic_subscribers == counts
        for m in g.members.values():
            assert m.member_epoch <= g.assignment_epoch
            for topic, parts in m.assigned.items():
                assert topic in m.subscribed_topic_names
                assert all(0 <= p < self.catalogue[topic] for p in parts)

    @invariant()
    def settled_group_covers_everything(self):
        g = self.group()
        if g is None or not g.members or g.group_epoch != g.assignment_epoch:
            return
        if any(m.member_epoch != g.assignment_epoch for m in g.members.values()):
            return
        holders: dict[tuple[str, int], int] = {}
        for m in g.members.values():
            assert m.assigned == g.target.get(m.member_id, {})
            for t, ps in m.assigned.items():
                for p in ps:
                    holders[(t, p)] = holders.get((t, p), 0) + 1
        subscribed = g.subscribed_topics()
        for t in subscribed:
            for p in range(g.subscription_metadata.get(t, 0)):
                assert holders.get((t, p)), f"{t}-{p} held by nobody"
        if len({m.subscribed_topic_names for m in g.members.values()}) == 1:
            total = sum(g.subscription_metadata.get(t, 0) for t in subscribed)
            sharing = -(-len(g.members) // total) if total else 0
            assert all(n <= sharing for n in holders.values())


ShareMembership.TestCase.settings = settings(max_examples=150, stateful_step_count=30,
                                             deadline=None)
TestShareMembership = ShareMembership.TestCase
