"""Time, group operations, the timeline and waiters through the Python handles, against members
speaking the wire protocol over real sockets (a manual clock makes every step deterministic).

Each bad input is checked to change nothing."""

from __future__ import annotations

import pytest
import trio

from kafka_emu.control.operations import ControlError
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    encode_assignment,
    encode_subscription,
)
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from kafka_emu.testing import WaitTimeout, make_config, open_emulator
from kafka_emu.testing.wire import WireClient

JOIN, SYNC, HEARTBEAT = BY_NAME["JoinGroup"], BY_NAME["SyncGroup"], BY_NAME["Heartbeat"]
SESSION = 10_000
DELAY = 3_000  # group.initial.rebalance.delay.ms: both members join generation 1


def manual(**settings):
    return make_config({"group.initial.rebalance.delay.ms": DELAY, **settings},
                       topics={"t": 4}, clock="manual")


async def join(client: WireClient, instance: str, *, member_id: str = ""):
    subscription = encode_subscription(ConsumerProtocolSubscription(
        topics=["t"], owned_partitions=[]), 1)
    return await client.request(JOIN, 5, JoinGroupRequest(
        group_id="g", session_timeout_ms=SESSION, rebalance_timeout_ms=30_000, member_id=member_id,
        group_instance_id=instance, protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=subscription)]))


def assignment(*partitions: int) -> bytes:
    return encode_assignment(ConsumerProtocolAssignment(
        assigned_partitions=[TopicPartition(topic="t", partitions=list(partitions))]), 0)


async def stable_pair(emu):
    """Two static members a (i-a) and b (i-b), Stable in generation 1, a leading; returns
    (clients, member ids)."""
    a = await WireClient.connect(emu.host, emu.port, client_id="client-a")
    b = await WireClient.connect(emu.host, emu.port, client_id="client-b")
    joined = {}

    async def run(name, client):
        joined[name] = await join(client, f"i-{name}")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run, "a", a)
        await emu.wait_for_group("g", state="PreparingRebalance", members=1, timeout=10)
        nursery.start_soon(run, "b", b)
        await emu.wait_for_group("g", state="PreparingRebalance", members=2, timeout=10)
        # b arrived during the delay, so it is extended once (3.6) before generation 1 forms
        first = await emu.advance_to_next_deadline("g", kind="initial_delay")
        assert first["generations"] == [] and first["advanced_ms"] == DELAY
        second = await emu.advance_to_next_deadline("g", kind="initial_delay")
        assert second["generations"][0]["generation"] == 1
    ids = {name: r.member_id for name, r in joined.items()}
    assert joined["a"].leader == ids["a"]
    async with trio.open_nursery() as nursery:
        async def sync(client, name, assignments):
            await client.request(SYNC, 5, SyncGroupRequest(
                group_id="g", generation_id=1, member_id=ids[name], group_instance_id=f"i-{name}",
                protocol_type="consumer", protocol_name="range", assignments=assignments))
        nursery.start_soon(sync, b, "b", [])
        await emu.wait_for(lambda: emu.broker.coordinator.group("g").members[ids["b"]].sync_request,
                           timeout=10)
        nursery.start_soon(sync, a, "a", [
            SyncGroupRequestAssignment(member_id=ids["a"], assignment=assignment(0, 1)),
            SyncGroupRequestAssignment(member_id=ids["b"], assignment=assignment(2, 3))])
    await emu.wait_for_group("g", state="Stable", members=2, timeout=10)
    return (a, b), ids


async def heartbeat(client, member_id, instance, generation=1):
    return await client.request(HEARTBEAT, 4, HeartbeatRequest(
        group_id="g", generation_id=generation, member_id=member_id, group_instance_id=instance))


# -------------------------------------------------------------------------------- time
async def test_manual_clock_moves_only_when_told_and_advance_expires_the_silent_member():
    async with open_emulator(manual()) as emu:
        (a, b), ids = await stable_pair(emu)
        clock = await emu.clock()
        assert clock["mode"] == "manual"
        await trio.sleep(0.3)  # wall time passes, coordinator time does not
        assert (await emu.clock())["now_ms"] == clock["now_ms"]

        quiet = await emu.advance(SESSION - 1)  # nothing falls due yet
        assert quiet["members_expired"] == [] and quiet["now_ms"] == clock["now_ms"] + SESSION - 1
        assert (await heartbeat(a, ids["a"], "i-a")).error_code == 0  # a lives on; b is silent
        happened = await emu.advance(1)
        assert [m["member_id"] for m in happened["members_expired"]] == [ids["b"]]
        assert happened["members_expired"][0]["reason"] == "session_expired"
        assert [r["group_id"] for r in happened["rebalances_started"]] == ["g"]
        assert happened["events"][0]["type"] == "TimeAdvanced"
        assert (await heartbeat(a, ids["a"], "i-a")).error_code == 27  # REBALANCE_IN_PROGRESS
        moved = await emu.timeline(types=("TimeAdvanced",))
        assert [e["by_ms"] for e in moved][-2:] == [SESSION - 1, 1]
        for c in (a, b):
            await c.aclose()


async def test_advance_to_next_deadline_fires_only_the_earliest_session():
    async with open_emulator(manual()) as emu:
        (a, b), ids = await stable_pair(emu)
        await emu.advance(1000)
        await heartbeat(b, ids["b"], "i-b")  # b's deadline is now later than a's
        sessions = await emu.deadlines("g", kind="session")
        assert [d["member_id"] for d in sessions] == [ids["a"], ids["b"]]
        assert sessions[0]["in_ms"] == SESSION - 1000
        happened = await emu.advance_to_next_deadline("g", kind="session")
        assert [m["member_id"] for m in happened["members_expired"]] == [ids["a"]]
        assert happened["deadline"]["member_id"] == ids["a"]
        assert happened["advanced_ms"] == SESSION - 1000
        view = await emu.group_view("g")
        assert [m["member_id"] for m in view["members"]] == [ids["b"]]
        assert view["leader"] == ids["b"]
        for c in (a, b):
            await c.aclose()


@pytest.mark.parametrize("call, status", [
    (lambda emu: emu.advance(-1), 400),
    (lambda emu: emu.advance_to_next_deadline(kind="nap"), 400),
    (lambda emu: emu.advance_to_next_deadline("nope"), 404),
    (lambda emu: emu.advance_to_next_deadline("g", kind="pending_sync"), 404),
    (lambda emu: emu.deadlines("nope"), 404),
])
async def test_bad_time_requests_change_nothing(call, status):
    async with open_emulator(manual()) as emu:
        (a, b), ids = await stable_pair(emu)
        before = (await emu.clock(), await emu.deadlines(), await emu.group_view("g"))
        with pytest.raises(ControlError) as info:
            await call(emu)
        assert info.value.status == status and info.value.message
        assert (await emu.clock(), await emu.deadlines(), await emu.group_view("g")) == before
        for c in (a, b):
            await c.aclose()


async def test_real_clock_advance_moves_the_timer_task_too():
    """With the real clock, an advance shortens every wait: the broker's timer task fires a
    deadline the advance did not reach when the (shifted) wall clock gets there."""
    config = make_config({"group.initial.rebalance.delay.ms": 0}, topics={"t": 1})
    async with open_emulator(config) as emu:
        a = await WireClient.connect(emu.host, emu.port)
        joined = await join(a, "i-a")
        await emu.wait_for_group("g", state="CompletingRebalance", timeout=10)
        assert joined.error_code == 0
        moved = await emu.advance(SESSION - 300)  # 300 ms of its session left
        assert moved["members_expired"] == []
        # the member never sends SyncGroup: its session runs out 300 ms of wall time later,
        # fired by the broker's own timer task (the pending-sync timer is 20 s further)
        view = await emu.wait_for_group("g", state="Empty", members=0, timeout=10)
        assert view["generation"] == 2  # the join phase completed without members
        removed = await emu.timeline(group_id="g", types=("MemberRemoved",))
        assert [e["reason"] for e in removed] == ["session_expired"]
        await a.aclose()


# ------------------------------------------------------------------------ group operations
async def test_group_view_decodes_subscriptions_and_assignments():
    async with open_emulator(manual()) as emu:
        (a, b), ids = await stable_pair(emu)
        view = await emu.group_view("g")
        assert (view["state"], view["generation"], view["protocol_type"], view["protocol"]) == \
            ("Stable", 1, "consumer", "range")
        members = {m["member_id"]: m for m in view["members"]}
        assert members[ids["a"]]["is_leader"] and not members[ids["b"]]["is_leader"]
        assert members[ids["a"]]["subscription"]["topics"] == ["t"]
        assert members[ids["a"]]["assignment"]["partitions"] == {"t": [0, 1]}
        assert members[ids["b"]]["assignment"]["partitions"] == {"t": [2, 3]}
        assert members[ids["b"]]["group_instance_id"] == "i-b"
        assert members[ids["b"]]["client_id"] == "client-b"
        owners = {(o["topic"], o["partition"]): o["member_id"] for o in view["offsets"]}
        assert owners == {("t", 0): ids["a"], ("t", 1): ids["a"], ("t", 2): ids["b"],
                          ("t", 3): ids["b"]}
        for c in (a, b):
            await c.aclose()


async def test_expire_member_by_instance_then_remove_static_member():
    async with open_emulator(manual()) as emu:
        (a, b), ids = await stable_pair(emu)
        happened = await emu.expire_member("g", group_instance_id="i-b")
        assert happened["member_ids"] == [ids["b"]]
        assert [m["reason"] for m in happened["members_expired"]] == ["session_expired"]
        with pytest.raises(ControlError) as info:
            await emu.remove_static_member("g", "i-b")  # gone already
        assert info.value.status == 404
        removed = await emu.remove_static_member("g", "i-a", reason="admin")
        assert removed["member_ids"] == [ids["a"]]
        assert [m["reason"] for m in removed["members_removed"]] == ["left"]
        assert (await emu.group_view("g"))["state"] == "Empty"
        for c in (a, b):
            await c.aclose()


async def test_ignore_heartbeats_then_advance_expires_the_ignored_member_only():
    async with open_emulator(manual()) as emu:
        (a, b), ids = await stable_pair(emu)
        await emu.ignore_heartbeats("g", ids["b"])
        view = await emu.group_view("g")
        assert [m["heartbeats_ignored"] for m in view["members"]] == [False, True]
        for _ in range(3):
            await emu.advance(SESSION // 4)
            for client, name in ((a, "a"), (b, "b")):
                assert (await heartbeat(client, ids[name], f"i-{name}")).error_code == 0
        happened = await emu.advance(SESSION // 4)
        assert [m["member_id"] for m in happened["members_expired"]] == [ids["b"]]
        for c in (a, b):
            await c.aclose()


async def test_trigger_rebalance_and_delete_group():
    async with open_emulator(manual()) as emu:
        (a, b), ids = await stable_pair(emu)
        happened = await emu.trigger_rebalance("g", reason="because")
        assert happened["rebalances_started"][0]["reason"] == "because"
        assert (await heartbeat(a, ids["a"], "i-a")).error_code == 27
        with pytest.raises(ControlError) as info:
            await emu.delete_group("g")
        assert info.value.status == 409
        assert (await emu.group_view("g"))["state"] == "PreparingRebalance"
        deleted = await emu.delete_group("g", force=True)
        assert deleted["groups_deleted"][0]["group_id"] == "g"
        with pytest.raises(ControlError) as info:
            await emu.group_view("g")
        assert info.value.status == 404
        for c in (a, b):
            await c.aclose()


@pytest.mark.parametrize("call, status", [
    (lambda emu, ids: emu.expire_member("nope", "x"), 404),
    (lambda emu, ids: emu.expire_member("g", "ghost"), 404),
    (lambda emu, ids: emu.expire_member("g"), 400),
    (lambda emu, ids: emu.ignore_heartbeats("g", group_instance_id="ghost"), 404),
    (lambda emu, ids: emu.trigger_rebalance("nope"), 404),
    (lambda emu, ids: emu.remove_static_member("g", "ghost"), 404),
    (lambda emu, ids: emu.delete_group("nope"), 404),
    (lambda emu, ids: emu.delete_group("g"), 409),
    (lambda emu, ids: emu.set_offsets("g", {("t", 9): 1}), 404),
    (lambda emu, ids: emu.set_offsets("g", {("nope", 0): 1}), 404),
    (lambda emu, ids: emu.set_offsets("g", {("t", 0): 5, ("t", 1): -1}), 400),
    (lambda emu, ids: emu.committed_offsets("nope"), 404),
    (lambda emu, ids: emu.group_view("nope"), 404),
])
async def test_bad_group_operations_change_nothing(call, status):
    async with open_emulator(manual()) as emu:
        (a, b), ids = await stable_pair(emu)
        before = (await emu.group_view("g"), await emu.deadlines(), await emu.clock())
        with pytest.raises(ControlError) as info:
            await call(emu, ids)
        assert info.value.status == status and info.value.message
        assert (await emu.group_view("g"), await emu.deadlines(), await emu.clock()) == before
        for c in (a, b):
            await c.aclose()


async def test_set_offsets_and_read_them_with_lag():
    async with open_emulator(manual()) as emu:
        offsets = await emu.set_offsets("fresh", {("t", 0): 0, ("t", 2): 0})
        assert [(o["topic"], o["partition"], o["committed_offset"], o["lag"]) for o in
                offsets["offsets"]] == [("t", 0, 0, 0), ("t", 2, 0, 0)]
        assert (await emu.group_view("fresh"))["state"] == "Empty"
        assert await emu.committed_offsets("fresh") == offsets["offsets"]
        committed = await emu.timeline(group_id="fresh", types=("OffsetsCommitted",))
        assert committed[0]["offsets"] == [["t", 0, 0], ["t", 2, 0]]


# ----------------------------------------------------------------- timeline and waiters
async def test_timeline_records_requests_and_events_in_order_with_filters():
    async with open_emulator(manual()) as emu:
        (a, b), ids = await stable_pair(emu)
        mark = await emu.timeline_seq()
        await heartbeat(a, ids["a"], "i-a")
        await heartbeat(b, ids["b"], "i-b")
        beats = await emu.requests(api="Heartbeat", since=mark)
        assert [(r["client_id"], r["member_id"], r["error_code"]) for r in beats] == [
            ("client-a", ids["a"], 0), ("client-b", ids["b"], 0)]
        assert [r["seq"] for r in beats] == sorted(r["seq"] for r in beats) and beats[0]["seq"] > mark
        assert await emu.requests(api="12", since=mark) == beats  # by key
        assert [r["member_id"] for r in await emu.requests(client_id="client-b", since=mark)] == [ids["b"]]
        everything = await emu.timeline()
        seqs = [e["seq"] for e in everything]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        types = {e["type"] for e in everything}
        assert {"ConnectionOpened", "RequestHandled", "MemberAdded", "GenerationChanged",
                "MemberSubscribed", "AssignmentsDistributed", "StateChanged",
                "TimeAdvanced"} <= types
        subscribed = [e for e in everything if e["type"] == "MemberSubscribed"]
        assert subscribed[0]["subscription"]["topics"] == ["t"]
        distributed = next(e for e in everything if e["type"] == "AssignmentsDistributed")
        assert distributed["decoded_assignments"][ids["b"]]["partitions"] == {"t": [2, 3]}
        assert all(e.get("group_id") in ("g", None) for e in await emu.timeline(group_id="g"))
        assert len(await emu.timeline(limit=3)) == 3
        for c in (a, b):
            await c.aclose()


async def test_timeline_is_bounded_and_can_be_off():
    async with open_emulator(manual(**{"emu.timeline.max.events": 5})) as emu:
        (a, b), ids = await stable_pair(emu)
        kept = await emu.timeline()
        assert len(kept) == 5 and kept[-1]["seq"] == await emu.timeline_seq() > 5
        for c in (a, b):
            await c.aclose()
    async with open_emulator(manual(**{"emu.timeline.max.events": 0})) as emu:
        assert emu.broker.observation.emit is None  # nothing listens: serving pays nothing
        (a, b), ids = await stable_pair(emu)  # the waiters in here still wake on events
        assert await emu.timeline() == []
        assert emu.broker.observation.emit is None  # the waiters let go again
        for c in (a, b):
            await c.aclose()


async def test_waiters_time_out_with_what_they_saw():
    async with open_emulator(manual()) as emu:
        with pytest.raises(WaitTimeout) as info:
            await emu.wait_for_group("g", timeout=0.2)
        assert info.value.status == 408 and "does not exist" in info.value.message
        with pytest.raises(TimeoutError):
            await emu.wait_for(lambda: False, timeout=0.1)
        with pytest.raises(ControlError) as info:
            await emu.wait_for_group("g", members=-1, timeout=1)
        assert info.value.status == 400


async def test_wait_for_wakes_on_the_event_not_on_a_timer():
    async with open_emulator(manual()) as emu:
        client = await WireClient.connect(emu.host, emu.port)
        seen = []

        def joined():
            seen.append(1)
            return emu.broker.coordinator.group("g")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(join, client, "i-a")
            group = await emu.wait_for(joined, timeout=10)
            assert group is not None
            nursery.cancel_scope.cancel()
        assert len(seen) < 20  # one check per event, not a polling loop
        await client.aclose()


async def test_groups_lists_every_group_and_looking_records_nothing():
    async with open_emulator(manual()) as emu:
        (a, b), ids = await stable_pair(emu)
        await emu.set_offsets("simple", {("t", 0): 1})
        listed = {g["group_id"]: g for g in await emu.groups()}
        assert listed["g"] == {"group_id": "g", "type": "classic", "state": "Stable",
                               "protocol_type": "consumer", "generation": 1, "members": 2}
        assert listed["simple"]["state"] == "Empty"
        mark = await emu.timeline_seq()
        await emu.group_view("g")
        await emu.groups()
        await emu.committed_offsets("g")
        await emu.describe_group("g")
        await emu.list_groups()
        await emu.deadlines()
        assert await emu.timeline_seq() == mark  # a look is not an event (waiters stay asleep)
        for c in (a, b):
            await c.aclose()


async def test_advance_past_offset_retention_deletes_the_empty_group():
    config = manual(**{"offsets.retention.minutes": 1,
                       "offsets.retention.check.interval.ms": 1000})
    async with open_emulator(config) as emu:
        await emu.set_offsets("idle", {("t", 0): 3})
        (first,) = await emu.deadlines(kind="retention")
        assert first["group_id"] is None and first["in_ms"] == 1000
        quiet = await emu.advance_to_next_deadline(kind="retention")  # offsets still fresh
        assert quiet["groups_deleted"] == []
        happened = await emu.advance(60_000)  # a minute later the sweep finds them expired
        assert [g["group_id"] for g in happened["groups_deleted"]] == ["idle"]
        assert happened["groups_deleted"][0]["reason"] == "retention"
        assert await emu.groups() == []


async def test_group_operations_on_a_kip848_group():
    async with open_emulator(manual()) as emu:
        from kafka_emu.coordinator.consumer import ConsumerGroupHeartbeat
        broker = emu.broker  # one member joins a KIP-848 group (ConsumerGroupHeartbeat)
        joined = broker.submit(ConsumerGroupHeartbeat(
            request_id=broker.new_request_id(), group_id="cg", member_id="m-1", member_epoch=0,
            rebalance_timeout_ms=30_000, subscribed_topic_names=("t",), owned=(), topics={"t": 4}),
            lambda result: result)
        assert joined.response.error == 0
        sessions = await emu.deadlines("cg", kind="session")  # its timers are named too
        assert [d["member_id"] for d in sessions] == ["m-1"]
        # the group view shows it (tests/control/test_group_view_modern.py); static removal,
        # KIP-345's classic LeaveGroup, names it for what it is
        assert (await emu.group_view("cg"))["type"] == "consumer"
        with pytest.raises(ControlError) as info:
            await emu.remove_static_member("cg", "i")
        assert info.value.status == 409 and "KIP-848" in info.value.message
        # the operator commands reach the consumer group's own handlers
        happened = await emu.advance_to_next_deadline("cg", kind="session")
        assert [m["member_id"] for m in happened["members_expired"]] == ["m-1"]


async def test_manual_clock_still_fires_what_is_due_now():
    """A timer due at the current instant (initial delay 0) fires without any advance: time
    standing still does not stop what is already due."""
    config = make_config({"group.initial.rebalance.delay.ms": 0}, topics={"t": 1}, clock="manual")
    async with open_emulator(config) as emu:
        client = await WireClient.connect(emu.host, emu.port)
        with trio.fail_after(10):
            joined = await join(client, "i-a")
        assert joined.error_code == 0 and joined.generation_id == 1
        assert (await emu.clock())["advanced_ms"] == 0
        await client.aclose()
