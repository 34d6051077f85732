"""A hypothesis RuleBasedStateMachine over consumer groups (KIP-848) in the pure coordinator.

Five client slots (three dynamic, two static) share topics "t" and "u" in group "g". Clients
join, heartbeat acknowledging what they were told (they own exactly the last assignment they
received, once reconciled), heartbeat without acknowledging (still owning revoked partitions, or sending null
owned partitions), change subscription or assignor, leave (-1), leave statically (-2) and come
back under a new member id, or go silent; time advances past session and rebalance timeouts;
topics grow. The model keeps what each live client believes it owns.

Invariants after every step:
- a partition is owned by at most one member at any epoch: the coordinator's owner map agrees with
  the members' assigned + pending partitions, which are pairwise disjoint, and every owner entry
  carries its member's current epoch;
- what live (not fenced) clients believe they own is pairwise disjoint;
- epochs never go back: the group epoch and assignment epoch never decrease (per incarnation of
  the group: retention may delete an Empty one), assignment epoch <= group epoch, and a member's epoch in successive answers never decreases while it stays;
- a member's assigned partitions are always a subset of the partitions it was told about;
- each member keeps an assignment epoch (KIP-1251) for exactly the partitions it holds (assigned
  or pending revocation), between 0 and its member epoch;
- the group state is the one derived from members and epochs.
``settle`` (a rule, and at teardown) heartbeats every live client well-behaved a few rounds and
then checks that every subscribed partition is assigned to exactly one member and the group is
Stable: subscribed partitions are eventually assigned while members are alive.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafka_emu.coordinator import Coordinator, CoordinatorConfig
from kafka_emu.coordinator.consumer import ConsumerGroupHeartbeat, ConsumerGroupState
from kafka_emu.errors import ErrorCode

settings.register_profile("consumer-groups", max_examples=60, stateful_step_count=30,
                          deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("consumer-groups-long", max_examples=1500, stateful_step_count=80,
                          deadline=None, suppress_health_check=list(HealthCheck))

SLOTS = 5
STATIC = {3: "inst-3", 4: "inst-4"}
SUBSCRIPTIONS = [("t",), ("u",), ("t", "u")]


class Client:
    def __init__(self, slot: int, generation: int) -> None:
        self.slot = slot
        self.member_id = f"m{slot}-{generation}"
        self.epoch = 0
        self.owned: dict[str, set[int]] = {}
        self.pending: dict[str, set[int]] | None = None  # received, not yet reconciled
        self.joined = False
        self.subscription = ("t",)


class ConsumerGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.c = Coordinator(CoordinatorConfig(group_consumer_session_timeout_ms=45_000))
        self.now = 0
        self.topics = {"t": 4, "u": 3}
        self.generation = 0
        self.clients: dict[int, Client] = {}
        self.request = 0
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.incarnation = None

    # ------------------------------------------------------------------------- helpers
    def group(self):
        return self.c._core.consumer_groups.get("g")

    def send(self, client: Client, epoch: int, *, owned="ack", names=None, assignor=None,
             rebalance_timeout_ms=-1, full=False):
        self.request += 1
        if owned == "ack":
            owned = tuple((t, tuple(sorted(ps))) for t, ps in sorted(client.owned.items()))
        if epoch == 0:
            owned, names, rebalance_timeout_ms = (), client.subscription, 20_000
        cmd = ConsumerGroupHeartbeat(
            request_id=self.request, group_id="g", member_id=client.member_id, member_epoch=epoch,
            instance_id=STATIC.get(client.slot), rebalance_timeout_ms=rebalance_timeout_ms,
            subscribed_topic_names=names, server_assignor=assignor, owned=owned,
            topics=dict(self.topics))
        replies = self.c.handle(cmd, self.now)
        assert [r.request_id for r in replies] == [self.request]
        return replies[0].result

    def absorb(self, client: Client, result) -> None:
        if result.error != ErrorCode.NONE:
            if result.error in (ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID):
                self.drop(client)  # the client gives everything up and rejoins later
            return
        if client.joined:
            assert result.member_epoch >= client.epoch, "member epoch went back"
        client.joined = True
        client.epoch = result.member_epoch
        if result.assignment is not None:
            # like librdkafka: revoke, then assign, then report it on the next heartbeat
            client.pending = {t: set(ps) for t, ps in result.assignment}

    def reconcile(self, client: Client) -> None:
        if client.pending is not None:
            client.owned, client.pending = client.pending, None

    def drop(self, client: Client) -> None:
        self.clients.pop(client.slot, None)

    def client(self, slot: int) -> Client | None:
        return self.clients.get(slot)

    # --------------------------------------------------------------------------- rules
    @rule(slot=st.integers(0, SLOTS - 1), sub=st.sampled_from(SUBSCRIPTIONS))
    def join(self, slot, sub):
        if slot in self.clients:
            return
        self.generation += 1
        client = Client(slot, self.generation)
        client.subscription = sub
        self.clients[slot] = client
        result = self.send(client, 0)
        if result.error != ErrorCode.NONE:
            # a static instance id still held by a live member is refused
            assert result.error == ErrorCode.UNRELEASED_INSTANCE_ID and slot in STATIC
            self.drop(client)
            return
        self.absorb(client, result)

    @rule(slot=st.integers(0, SLOTS - 1))
    def heartbeat_ack(self, slot):
        client = self.client(slot)
        if client is not None:
            self.reconcile(client)
            self.absorb(client, self.send(client, client.epoch))

    @rule(slot=st.integers(0, SLOTS - 1), null=st.booleans())
    def heartbeat_without_revoking(self, slot, null):
        """The client has not finished revoking: it reports its old partitions (or nothing)."""
        client = self.client(slot)
        if client is None:
            return
        self.absorb(client, self.send(client, client.epoch, owned=None if null else "ack"))

    @rule(slot=st.integers(0, SLOTS - 1), sub=st.sampled_from(SUBSCRIPTIONS),
          assignor=st.sampled_from([None, "uniform", "range"]))
    def resubscribe(self, slot, sub, assignor):
        client = self.client(slot)
        if client is None:
            return
        client.subscription = sub
        self.reconcile(client)
        self.absorb(client, self.send(client, client.epoch, names=sub, assignor=assignor))

    @rule(slot=st.integers(0, SLOTS - 1))
    def leave(self, slot):
        client = self.client(slot)
        if client is not None:
            result = self.send(client, -1, owned=None)
            assert result.error in (ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID,
                                    ErrorCode.GROUP_ID_NOT_FOUND)
            self.drop(client)

    @precondition(lambda self: any(s in self.clients for s in STATIC))
    @rule(slot=st.sampled_from(sorted(STATIC)))
    def static_leave(self, slot):
        client = self.client(slot)
        if client is not None:
            self.send(client, -2, owned=None)
            self.drop(client)

    @rule(slot=st.integers(0, SLOTS - 1))
    def go_silent(self, slot):
        """The process dies: no leave; the session timeout must clean up."""
        self.clients.pop(slot, None)

    @rule(ms=st.sampled_from([1_000, 10_000, 25_000, 46_000]))
    def advance(self, ms):
        self.now += ms
        self.c.expire(self.now)
        group = self.group()
        for client in list(self.clients.values()):
            if group is None or client.member_id not in group.members:
                self.drop(client)  # fenced by a timeout: a real client would learn it next

    @rule(topic=st.sampled_from(["t", "u"]))
    def grow_topic(self, topic):
        self.topics[topic] += 1

    @rule()
    def settle(self):
        # Live clients heartbeat every 10 s; silent ones (gone without leaving) are fenced once
        # their session times out, so only the alive members remain to share the partitions.
        for _ in range(8):
            self.now += 10_000
            for client in list(self.clients.values()):
                self.reconcile(client)
                self.absorb(client, self.send(client, client.epoch))
            self.c.expire(self.now)
        for _ in range(4):
            for client in list(self.clients.values()):
                self.reconcile(client)
                self.absorb(client, self.send(client, client.epoch))
        for client in self.clients.values():
            self.reconcile(client)
        group = self.group()
        if group is None or not self.clients:
            return
        assert group.state is ConsumerGroupState.STABLE, group.state
        subscribed = {t for c in self.clients.values() for t in c.subscription}
        seen = {}
        for member in group.members.values():
            for t, ps in member.assigned.items():
                for p in ps:
                    assert (t, p) not in seen
                    seen[(t, p)] = member.member_id
        expected = {(t, p) for t in subscribed for p in range(self.topics[t])}
        assert set(seen) == expected
        for client in self.clients.values():
            assert client.owned == {t: set(ps) for t, ps in group.members[client.member_id].assigned.items()}

    # ---------------------------------------------------------------------- invariants
    @invariant()
    def ownership_is_exclusive(self):
        group = self.group()
        if group is None:
            return
        expected = {}
        for member in group.members.values():
            for assignment in (member.assigned, member.pending_revocation):
                for t, ps in assignment.items():
                    for p in ps:
                        assert (t, p) not in expected, f"{t}-{p} held twice"
                        expected[(t, p)] = (member.member_id, member.member_epoch)
        assert group.owners == expected

    @invariant()
    def clients_own_disjoint_partitions(self):
        seen = set()
        for client in self.clients.values():
            for t, ps in client.owned.items():
                for p in ps:
                    assert (t, p) not in seen, f"two live clients own {t}-{p}"
                    seen.add((t, p))

    @invariant()
    def epochs_never_go_back(self):
        group = self.group()
        if group is None:
            return
        if group is not self.incarnation:  # deleted (retention, DeleteGroups) and created anew
            self.incarnation, self.group_epoch, self.assignment_epoch = group, 0, 0
        assert group.group_epoch >= self.group_epoch
        assert group.assignment_epoch >= self.assignment_epoch
        assert group.assignment_epoch <= group.group_epoch
        self.group_epoch, self.assignment_epoch = group.group_epoch, group.assignment_epoch
        assert group.state is group.computed_state()

    @invariant()
    def clients_own_only_what_they_were_given(self):
        group = self.group()
        if group is None:
            return
        for client in self.clients.values():
            member = group.members.get(client.member_id)
            if member is None:
                continue
            held = {t: member.assigned.get(t, frozenset()) | member.pending_revocation.get(t, frozenset())
                    for t in client.owned}
            for t, ps in client.owned.items():
                assert ps <= held[t], f"{client.member_id} owns {t}-{ps - held[t]} the server gave away"

    @invariant()
    def assignment_epochs_follow_the_assignment(self):
        group = self.group()
        for member in (group.members.values() if group is not None else ()):
            held = {(t, p) for a in (member.assigned, member.pending_revocation)
                    for t, ps in a.items() for p in ps}
            assert set(member.assignment_epochs) == held
            for key, epoch in member.assignment_epochs.items():
                assert 0 <= epoch <= max(member.member_epoch, 0), (key, epoch, member.member_epoch)

    def teardown(self):
        self.settle()


ConsumerGroupMachine.TestCase.settings = settings.get_profile(
    os.environ.get("HYPOTHESIS_PROFILE_CONSUMER", "consumer-groups"))
TestConsumerGroups = ConsumerGroupMachine.TestCase
