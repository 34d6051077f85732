"""A hypothesis state machine over a group's mixed life: a classic group upgraded by a
consumer-protocol member, then members of both protocols (eager and cooperative classic clients)
joining, heartbeating, rejoining when told and leaving in any order, until the group may be
converted back. Invariant: no partition is held by two clients at once, as each client knows what
it holds from its own answers (the heartbeat's assignment; the SyncGroup's, an eager client giving
up everything before it rejoins, a cooperative one what it is no longer given)."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from .migration_harness import E, Mixed, parts, read_assignment, sub_v0, sub_v1

TOPICS = {"t": 4, "u": 3}


class Client:
    def __init__(self, member_id: str, kind: str) -> None:
        self.member_id, self.kind = member_id, kind  # kind: consumer, eager, cooperative
        self.epoch = 0
        self.owned: dict[str, set[int]] = {}
        # partitions its last answer took away that it still holds until it finishes revoking
        # them (a cooperative or consumer-protocol client revokes after the answer)
        self.revoking: dict[str, set[int]] = {}

    def take(self, assigned: dict[str, set[int]]) -> None:
        """An answer's assignment: new partitions are held at once, lost ones until revoked."""
        for t, ps in self.owned.items():
            gone = ps - assigned.get(t, set())
            if gone:
                self.revoking.setdefault(t, set()).update(gone)
        merged = {t: set(ps) for t, ps in assigned.items()}
        for t, ps in self.revoking.items():
            merged.setdefault(t, set()).update(ps)
        self.owned = merged

    def finish_revoking(self) -> None:
        for t, ps in self.revoking.items():
            self.owned[t] = self.owned.get(t, set()) - ps
        self.revoking = {}


class MixedGroup(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.m = Mixed(topics=TOPICS)
        self.clients: list[Client] = []
        self.ids = itertools.count(1)

    @initialize(kinds=st.tuples(*[st.sampled_from(["eager", "cooperative"])] * 2))
    def classic_then_upgrade(self, kinds) -> None:
        ids, gen = self.m.classic_group(split={"classic-m1": {"t": {0, 1}}, "classic-m2": {"t": {2, 3}}})
        for mid, owned, kind in zip(ids, ({"t": {0, 1}}, {"t": {2, 3}}), kinds):
            c = Client(mid, kind)
            c.epoch, c.owned = gen, owned
            self.clients.append(c)
        self._consumer_join()

    # ---------------------------------------------------------------------------- helpers
    def live(self) -> bool:
        """A consumer group with members (an empty one a consumer member may join again)."""
        group = self.m.cgroup()
        return group is not None and bool(group.members)

    def consumer_group(self) -> bool:
        return self.m.cgroup() is not None

    def _consumer_join(self) -> None:
        c = Client(f"n{next(self.ids)}", "consumer")
        r = self.m.hb(c.member_id, 0, names=("t", "u"))
        assert r.error == E.NONE, r
        c.epoch = r.member_epoch
        c.take(parts(r.assignment))
        self.clients.append(c)

    def _classic_sync(self, c: Client, metadata: bytes, member_id: str) -> None:
        j = self.m.join(member_id, metadata=metadata)
        assert j.error == E.NONE, j
        c.member_id, c.epoch = j.member_id, j.generation_id
        s = self.m.sync(c.member_id, c.epoch)
        assert s.error == E.NONE, s
        if c.kind == "eager":
            c.owned = read_assignment(s.assignment)  # it gave up everything before rejoining
        else:
            c.take(read_assignment(s.assignment))

    def _metadata(self, c: Client) -> bytes:
        if c.kind == "cooperative":
            return sub_v1(["t", "u"], c.owned)
        return sub_v0("t", "u")

    # ------------------------------------------------------------------------------ rules
    @precondition(lambda self: self.consumer_group())
    @rule()
    def consumer_joins(self) -> None:
        self._consumer_join()

    @precondition(lambda self: self.live())
    @rule(cooperative=st.booleans())
    def classic_joins(self, cooperative: bool) -> None:
        c = Client("", "cooperative" if cooperative else "eager")
        self._classic_sync(c, self._metadata(c), "")
        self.clients.append(c)

    @precondition(lambda self: self.live() and self.clients)
    @rule(i=st.integers(0, 20))
    def heartbeat(self, i: int) -> None:
        c = self.clients[i % len(self.clients)]
        if c.kind == "consumer":
            r = self.m.hb(c.member_id, c.epoch, owned={t: ps for t, ps in c.owned.items() if ps})
            assert r.error == E.NONE, r
            c.epoch = r.member_epoch
            if r.assignment is not None:
                c.take(parts(r.assignment))
            return
        error = self.m.heartbeat(c.member_id, c.epoch)
        assert error in (E.NONE, E.REBALANCE_IN_PROGRESS), error
        if error == E.REBALANCE_IN_PROGRESS:
            if c.kind == "eager":
                c.owned = {}  # an eager client gives up everything before it rejoins
            self._classic_sync(c, self._metadata(c), c.member_id)

    @precondition(lambda self: self.live() and any(c.revoking for c in self.clients))
    @rule(i=st.integers(0, 20))
    def revocation_done(self, i: int) -> None:
        """A client finishes revoking what its last answer took away (its next heartbeat or
        rejoin reports it no longer owns them)."""
        revoking = [c for c in self.clients if c.revoking]
        revoking[i % len(revoking)].finish_revoking()

    @precondition(lambda self: self.live() and self.clients)
    @rule(i=st.integers(0, 20))
    def leaves(self, i: int) -> None:
        c = self.clients.pop(i % len(self.clients))
        if c.kind == "consumer":
            assert self.m.hb(c.member_id, -1, owned=None).error == E.NONE
        else:
            assert self.m.leave(c.member_id).members[0].error == E.NONE
        c.owned = {}

    @precondition(lambda self: self.live())
    @rule()
    def a_moment_passes(self) -> None:
        self.m.advance(100)  # never near a session timeout: every client stays a member

    @precondition(lambda self: not self.consumer_group())
    @rule()
    def converted_back(self) -> None:
        """A classic group again, at generation = the last group epoch, rebalancing: every member
        is told to rejoin, one still at an older epoch that its generation is stale (as Kafka:
        the client then drops its partitions as lost and rejoins under its member id)."""
        generation = self.m.c.group("g").generation
        for c in self.clients:
            error = self.m.heartbeat(c.member_id, c.epoch)
            assert error == (E.REBALANCE_IN_PROGRESS if c.epoch == generation
                             else E.ILLEGAL_GENERATION)
            if error == E.ILLEGAL_GENERATION:
                c.owned = {}

    # ------------------------------------------------------------------------- invariants
    @invariant()
    def no_partition_held_twice(self) -> None:
        seen: dict[tuple[str, int], str] = {}
        for c in self.clients:
            for t, ps in c.owned.items():
                for p in ps:
                    assert (t, p) not in seen, f"{t}-{p} held by {seen[(t, p)]} and {c.member_id}"
                    seen[(t, p)] = c.member_id

    @invariant()
    def the_broker_agrees(self) -> None:
        group = self.m.cgroup()
        if group is None:
            classic = self.m.c.group("g")
            # converted back: only when no consumer-protocol client is left
            assert classic is not None and not any(c.kind == "consumer" for c in self.clients)
            return
        for c in self.clients:
            member = group.members[c.member_id]
            held = {t: set(ps) for t, ps in member.assigned.items()}
            for t, ps in member.pending_revocation.items():
                held.setdefault(t, set()).update(ps)
            # what the client holds, the broker counts as held by it (never given elsewhere)
            for t, ps in c.owned.items():
                assert ps <= held.get(t, set()), (c.member_id, c.owned, held)
            assert not c.revoking or c.kind != "eager"


TestMixedGroup = MixedGroup.TestCase
TestMixedGroup.settings = settings(max_examples=60, stateful_step_count=30, deadline=None,
                                   suppress_health_check=[HealthCheck.too_slow])
