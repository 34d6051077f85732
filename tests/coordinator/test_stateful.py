"""A hypothesis RuleBasedStateMachine over the pure coordinator.

Six client slots (four dynamic, two static) drive one group "g" with joins (fresh, known id, v0-3
or v4+, three protocol variants), syncs, heartbeats, leaves (by id and by instance id), commits
(member and "simple"), group deletion and time advances. Clients deliberately misbehave: they
reuse stale ids and generations and send a new request while an old one is still parked (as a
client on a fresh connection would).

Invariants after every step:
- at most one leader, and it is a member; a non-empty group has one;
- generation never decreases (per group incarnation);
- Empty has no members; Stable has no parked joins;
- every reply addresses a request that was parked (or is the command's own) and each request is
  answered at most once; the set of requests we believe parked equals what members hold;
- no timer lies in the past after expire(now);
- committed offsets are never lost except by retention or deletion (OffsetsRemoved events);
- bookkeeping counters (parked joins, protocol support counts, static map) match the members.

A ``behave`` rule runs a few rounds of well-behaved clients (join, rejoin with the assigned id,
sync, heartbeat) so groups regularly reach Stable amid the chaos.

Profile "coordinator": ``max_examples=400, stateful_step_count=50, deadline=None`` (about 6 s on
2 cores, keeping tests/coordinator well under a minute); HYPOTHESIS_PROFILE=coordinator-long
(2000 examples x 80 steps) for a deeper local run.
"""

from __future__ import annotations

import os
from collections import Counter

import attrs
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from kafka_emu.coordinator import (
    CommitOffset,
    Coordinator,
    CoordinatorConfig,
    DeleteGroup,
    DeleteGroups,
    ExpireMember,
    GroupDeleted,
    GroupState,
    Heartbeat,
    JoinGroup,
    HeartbeatResult,
    IgnoreHeartbeats,
    JoinGroupResult,
    LeaveGroup,
    LeaveMember,
    OffsetCommit,
    OffsetsRemoved,
    ReplyEmitted,
    RequestDropped,
    RequestParked,
    SetOffsets,
    SyncGroup,
    SyncGroupResult,
    TriggerRebalance,
)
from kafka_emu.errors import ErrorCode

from .harness import subscription

settings.register_profile(
    "coordinator",
    max_examples=400,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "coordinator-long", max_examples=2000, stateful_step_count=80, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "coordinator")
if PROFILE not in ("coordinator", "coordinator-long"):
    PROFILE = "coordinator"

PROTOCOLS = [
    (("range", subscription("t")),),
    (("range", subscription("t", "u")),),
    (("roundrobin", subscription("t")), ("range", subscription("t"))),
]
SESSIONS = [6000, 10_000, 30_000]
REBALANCES = [5000, 20_000, 60_000]
STATIC_SLOTS = (4, 5)


@attrs.define
class Slot:
    client_id: str
    instance: str | None
    member_id: str = ""
    generation: int = -1
    leader: str = ""
    members: tuple[str, ...] = ()
    phase: str = "join"  # what a well-behaved client would send next: join, sync or heartbeat


class CoordinatorMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.events: list = []
        self.now = 0
        self.counter = 0
        self.slots = [Slot(client_id=f"c{i}", instance=f"s{i}" if i in STATIC_SLOTS else None) for i in range(6)]
        self.owner: dict[str, int] = {}  # request id -> slot
        self.parked: set[str] = set()
        self.answered: set[str] = set()
        self.offsets: dict[tuple[str, int], int] = {}
        self.last_generation = 0
        self.coord: Coordinator | None = None

    def _uuid(self) -> str:
        self.counter += 1
        return f"u{self.counter}"

    @initialize(
        delay=st.sampled_from([0, 0, 3000]),
        max_size=st.sampled_from([3, 2**31 - 1]),
        retention_minutes=st.sampled_from([1, 10080]),
    )
    def setup(self, delay, max_size, retention_minutes):
        config = CoordinatorConfig(
            group_initial_rebalance_delay_ms=delay,
            group_max_size=max_size,
            offsets_retention_minutes=retention_minutes,
            offsets_retention_check_interval_ms=30_000,
        )
        self.coord = Coordinator(config, observer=self.events.append, new_member_uuid=self._uuid)

    # ----------------------------------------------------------------- plumbing
    def _rid(self, slot: int | None) -> str:
        self.counter += 1
        rid = f"r{self.counter}"
        if slot is not None:
            self.owner[rid] = slot
        return rid

    def _absorb(self, replies, own: str | None) -> dict:
        """Check reply bookkeeping against the events, update client slots."""
        new_events = self.events[self._mark :]
        emitted = [e.request_id for e in new_events if isinstance(e, ReplyEmitted)]
        assert emitted == [r.request_id for r in replies]
        for event in new_events:
            if isinstance(event, RequestParked):
                assert event.request_id == own, "only the current command can be parked"
                assert event.request_id not in self.parked
                self.parked.add(event.request_id)
            elif isinstance(event, ReplyEmitted):
                rid = event.request_id
                assert rid not in self.answered, f"{rid} answered twice"
                assert rid in self.parked or rid == own, f"{rid} was never parked"
                self.parked.discard(rid)
                self.answered.add(rid)
            elif isinstance(event, RequestDropped):
                assert event.request_id in self.parked
                self.parked.discard(event.request_id)
            elif isinstance(event, OffsetsRemoved):
                for tp in event.partitions:
                    self.offsets.pop(tp, None)
            elif isinstance(event, GroupDeleted):
                self.last_generation = 0
        out = {}
        for reply in replies:
            out[reply.request_id] = reply.result
            slot_index = self.owner.get(reply.request_id)
            if slot_index is not None:
                self._learn(self.slots[slot_index], reply.result)
        return out

    def _learn(self, slot: Slot, result) -> None:
        """What a client learns from a reply (used by the well-behaved ``client_step``)."""
        error = result.error if hasattr(result, "error") else None
        if isinstance(result, JoinGroupResult):
            if error == ErrorCode.MEMBER_ID_REQUIRED:
                slot.member_id = result.member_id
            elif error == ErrorCode.NONE:
                slot.member_id = result.member_id
                slot.generation = result.generation_id
                slot.leader = result.leader
                slot.members = tuple(m.member_id for m in result.members)
                slot.phase = "sync"
            elif error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
                slot.member_id = ""
                slot.phase = "join"
        elif isinstance(result, SyncGroupResult):
            slot.phase = "heartbeat" if error == ErrorCode.NONE else "join"
        elif isinstance(result, HeartbeatResult) and error != ErrorCode.NONE:
            slot.phase = "join"
        if error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID) and slot.instance is None:
            slot.member_id = ""

    def _handle(self, command, own: str) -> dict:
        self._mark = len(self.events)
        replies = self.coord.handle(command, self.now)
        return self._absorb(replies, own)

    # -------------------------------------------------------------------- rules
    @rule(slot=st.integers(0, 5))
    def client_step(self, slot):
        """What a real client would do next; it waits while one of its requests is parked."""
        s = self.slots[slot]
        if any(self.owner.get(rid) == slot for rid in self.parked):
            return
        if s.phase == "sync":
            self.sync(slot, assign=s.leader == s.member_id)
        elif s.phase == "heartbeat":
            self.heartbeat(slot)
        else:
            self.join(slot, fresh=False, variant=0, v4=True, session=30_000, rebalance=20_000)

    @rule(slots=st.sets(st.integers(0, 5), min_size=1), rounds=st.integers(1, 4))
    def behave(self, slots, rounds):
        """A few rounds in which the chosen clients all act sensibly (drives groups to Stable)."""
        for _ in range(rounds):
            for slot in sorted(slots):
                self.client_step(slot)
            self._expire()

    @rule(
        slot=st.integers(0, 5),
        fresh=st.booleans(),
        variant=st.integers(0, 2),
        v4=st.booleans(),
        session=st.sampled_from(SESSIONS),
        rebalance=st.sampled_from(REBALANCES),
    )
    def join(self, slot, fresh, variant, v4, session, rebalance):
        s = self.slots[slot]
        rid = self._rid(slot)
        command = JoinGroup(
            request_id=rid,
            group_id="g",
            member_id="" if fresh else s.member_id,
            group_instance_id=s.instance,
            session_timeout_ms=session,
            rebalance_timeout_ms=rebalance,
            protocol_type="consumer",
            protocols=PROTOCOLS[variant],
            client_id=s.client_id,
            client_host="/127.0.0.1",
            require_known_member_id=v4,
            supports_skip_assignment=v4,
        )
        self._handle(command, rid)

    @rule(slot=st.integers(0, 5), assign=st.booleans())
    def sync(self, slot, assign):
        s = self.slots[slot]
        rid = self._rid(slot)
        assignments = tuple((m, m.encode()) for m in s.members) if assign else ()
        command = SyncGroup(
            request_id=rid,
            group_id="g",
            generation_id=s.generation,
            member_id=s.member_id,
            group_instance_id=s.instance,
            protocol_type="consumer",
            protocol_name=None,
            assignments=assignments,
        )
        self._handle(command, rid)

    @rule(slot=st.integers(0, 5))
    def heartbeat(self, slot):
        s = self.slots[slot]
        rid = self._rid(slot)
        cmd = Heartbeat(
            request_id=rid, group_id="g", generation_id=s.generation, member_id=s.member_id, group_instance_id=s.instance
        )
        self._handle(cmd, rid)

    @rule(slot=st.integers(0, 5), by_instance=st.booleans())
    def leave(self, slot, by_instance):
        s = self.slots[slot]
        rid = self._rid(slot)
        if by_instance and s.instance is not None:
            member = LeaveMember(member_id="", group_instance_id=s.instance)
        else:
            member = LeaveMember(member_id=s.member_id, group_instance_id=s.instance)
        self._handle(LeaveGroup(request_id=rid, group_id="g", members=(member,)), rid)

    @rule(slot=st.integers(0, 5), partition=st.integers(0, 2), offset=st.integers(0, 1000), simple=st.booleans())
    def commit(self, slot, partition, offset, simple):
        s = self.slots[slot]
        rid = self._rid(slot)
        topic = "t" if partition < 2 else "other"
        command = OffsetCommit(
            request_id=rid,
            group_id="g",
            generation_id=-1 if simple else s.generation,
            member_id="" if simple else s.member_id,
            group_instance_id=None if simple else s.instance,
            offsets=(CommitOffset(topic=topic, partition=partition, offset=offset),),
        )
        result = self._handle(command, rid)[rid]
        if result.partitions[0].error == ErrorCode.NONE:
            self.offsets[(topic, partition)] = offset

    @rule()
    def delete_group(self):
        rid = self._rid(None)
        self._handle(DeleteGroups(request_id=rid, group_ids=("g",)), rid)

    @rule(slot=st.sampled_from(STATIC_SLOTS), v9=st.booleans(), variant=st.integers(0, 2))
    def static_replacement(self, slot, v9, variant):
        """A static member restarts: JoinGroup with its instance id and no member id (3.8)."""
        s = self.slots[slot]
        rid = self._rid(slot)
        command = JoinGroup(
            request_id=rid,
            group_id="g",
            member_id="",
            group_instance_id=s.instance,
            session_timeout_ms=30_000,
            rebalance_timeout_ms=20_000,
            protocol_type="consumer",
            protocols=PROTOCOLS[variant],
            client_id=s.client_id,
            client_host="/127.0.0.1",
            supports_skip_assignment=v9,
        )
        self._handle(command, rid)

    # ------------------------------------------------ operator commands (the control plane)
    @rule(slot=st.integers(0, 5), by_instance=st.booleans())
    def operator_expire(self, slot, by_instance):
        s = self.slots[slot]
        rid = self._rid(None)
        if by_instance and s.instance is not None:
            cmd = ExpireMember(request_id=rid, group_id="g", group_instance_id=s.instance)
        else:
            cmd = ExpireMember(request_id=rid, group_id="g", member_id=s.member_id)
        self._handle(cmd, rid)

    @rule(slot=st.integers(0, 5), ignore=st.booleans())
    def operator_ignore_heartbeats(self, slot, ignore):
        rid = self._rid(None)
        self._handle(IgnoreHeartbeats(request_id=rid, group_id="g", member_id=self.slots[slot].member_id,
                                      ignore=ignore), rid)

    @rule()
    def operator_rebalance(self):
        rid = self._rid(None)
        self._handle(TriggerRebalance(request_id=rid, group_id="g"), rid)

    @rule(force=st.booleans())
    def operator_delete(self, force):
        rid = self._rid(None)
        self._handle(DeleteGroup(request_id=rid, group_id="g", force=force), rid)

    @rule(partition=st.integers(0, 2), offset=st.integers(-1, 1000))
    def operator_set_offsets(self, partition, offset):
        rid = self._rid(None)
        topic = "t" if partition < 2 else "other"
        result = self._handle(SetOffsets(request_id=rid, group_id="g", offsets=(
            CommitOffset(topic=topic, partition=partition, offset=offset),)), rid)[rid]
        assert (result.error == ErrorCode.NONE) == (offset >= 0)
        if result.error == ErrorCode.NONE:
            self.offsets[(topic, partition)] = offset

    @rule(ms=st.sampled_from([0, 1, 500, 3000, 6000, 12_000, 40_000]))
    def advance(self, ms):
        self.now += ms
        self._expire()

    @rule()
    def jump_to_next_deadline(self):
        deadline = self.coord.next_deadline()
        if deadline is not None:
            self.now = max(self.now, deadline)
            self._expire()

    def _expire(self) -> None:
        self._mark = len(self.events)
        self._absorb(self.coord.expire(self.now), None)
        deadline = self.coord.next_deadline()
        assert deadline is None or deadline > self.now, "a timer lies in the past after expire"

    # --------------------------------------------------------------- invariants
    @invariant()
    def group_invariants(self):
        if self.coord is None:
            return
        group = self.coord.group("g")
        if group is None:
            return
        members = group.members
        if group.leader_id is not None:
            assert group.leader_id in members
        else:
            assert not members
        assert group.generation >= self.last_generation
        self.last_generation = group.generation
        if group.state is GroupState.EMPTY:
            assert not members
        parked_joins = [m.join_request for m in members.values() if m.join_request is not None]
        if group.state is GroupState.STABLE:
            assert not parked_joins
        assert group.num_awaiting_join == len(parked_joins)
        held = set(parked_joins) | {m.sync_request for m in members.values() if m.sync_request is not None}
        assert held == self.parked
        counts = Counter(name for m in members.values() for name in m.metadata_by_name)
        assert {k: v for k, v in group.supported_protocols.items() if v} == dict(counts)
        assert group.static_members == {m.group_instance_id: m.member_id for m in members.values() if m.is_static}
        assert not set(group.pending_members) & set(members)

    @invariant()
    def offsets_not_lost(self):
        if self.coord is None:
            return
        stored = {(t, p): v.offset for t, p, v in self.coord._core.offsets.group_items("g")}
        assert stored == self.offsets


CoordinatorMachine.TestCase.settings = settings.get_profile(PROFILE)
TestCoordinatorMachine = CoordinatorMachine.TestCase
