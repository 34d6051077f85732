"""The group view, committed offsets and wait_for_group on consumer (KIP-848) and share (KIP-932)
groups, in process: members join with the coordinator's own heartbeat commands (as the
ConsumerGroupHeartbeat / ShareGroupHeartbeat handlers submit them) and every answer is checked
against its declared result schema."""

from __future__ import annotations

import pytest
from test_control_core import manual
from test_control_results import Checked

from kafka_emu.coordinator.consumer import ConsumerGroupHeartbeat
from kafka_emu.coordinator.share.commands import ShareGroupHeartbeat
from kafka_emu.control.operations import ControlError
from kafka_emu.testing import open_emulator


def cg_heartbeat(broker, member_id: str, epoch: int, owned=None, **kw):
    """One ConsumerGroupHeartbeat to group "cg" (topic t has 4 partitions); its result."""
    cmd = ConsumerGroupHeartbeat(
        request_id=broker.new_request_id(), group_id="cg", member_id=member_id,
        member_epoch=epoch, rebalance_timeout_ms=30_000,
        subscribed_topic_names=("t",) if epoch == 0 else None,
        owned=() if epoch == 0 and owned is None else owned, topics={"t": 4},
        client_id=f"client-{member_id}", client_host="/127.0.0.1", **kw)
    result = broker.submit(cmd, lambda r: r).response
    assert result.error == 0, result
    return result


def owned_of(result):
    return tuple((topic, tuple(ps)) for topic, ps in (result.assignment or ()))


async def test_a_consumer_group_s_view_reconciling_then_stable():
    check = Checked()
    async with open_emulator(manual()) as emu:
        broker = emu.broker
        first = cg_heartbeat(broker, "m-1", 0, instance_id="i-1")
        # m-1 holds all four partitions; m-2 joins: the target moves two of them to m-2
        held = cg_heartbeat(broker, "m-1", first.member_epoch, owned_of(first))
        cg_heartbeat(broker, "m-2", 0)
        view = check("group_view", await emu.group_view("cg"))
        assert (view["type"], view["protocol_type"], view["leader"]) == ("consumer", "consumer", None)
        assert view["generation"] == view["group_epoch"] == 2
        assert view["assignment_epoch"] == 2
        assert view["state"] == "Reconciling"  # m-1 still holds what m-2 is to get
        assert view["protocol"] == "uniform"  # the broker's default server-side assignor
        by_id = {m["member_id"]: m for m in view["members"]}
        m1, m2 = by_id["m-1"], by_id["m-2"]
        assert (m1["group_instance_id"], m1["client_id"], m1["client_host"]) == (
            "i-1", "client-m-1", "/127.0.0.1")
        assert m1["member_epoch"] == held.member_epoch == 1
        assert m1["assignment"]["partitions"] == {"t": [0, 1, 2, 3]}
        assert len(m1["target_assignment"]["t"]) == 2 and len(m2["target_assignment"]["t"]) == 2
        assert m2["assignment"]["partitions"] == {}  # its partitions are not released yet
        assert m2["member_state"] == "unreleased_partitions"
        assert m1["subscription"]["topics"] == ["t"] and not m1["uses_classic_protocol"]
        assert m1["session_deadline_ms"] is not None

        # a wait for Stable times out while m-1 keeps the partitions, and says what it saw
        with pytest.raises(ControlError) as info:
            await emu.wait_for_group("cg", "Stable", members=2, timeout=0.2)
        assert info.value.status == 408
        assert "it is Reconciling with 2 member(s), group epoch 2" in info.value.message

        # m-1 learns of the revocation and gives the two up; m-2 takes them: Stable
        revoke = cg_heartbeat(broker, "m-1", held.member_epoch, owned_of(held))
        assert dict(owned_of(revoke)) == {"t": tuple(m1["target_assignment"]["t"])}
        cg_heartbeat(broker, "m-1", revoke.member_epoch, owned_of(revoke))
        got = cg_heartbeat(broker, "m-2", m2["member_epoch"], ())
        cg_heartbeat(broker, "m-2", got.member_epoch, owned_of(got))
        stable = check("wait_for_group", await emu.wait_for_group("cg", "Stable", members=2,
                                                                  timeout=5))
        owners = {}
        for m in stable["members"]:
            assert m["member_state"] == "stable" and m["pending_revocation"] == {}
            assert m["assignment"]["partitions"] == m["target_assignment"]
            for p in m["assignment"]["partitions"]["t"]:
                owners[("t", p)] = m["member_id"]
        assert sorted(owners) == [("t", p) for p in range(4)]

        # committed offsets (as an administrator writes them), log-end offsets and lag
        check("set_offsets", await emu.set_offsets("cg", {("t", 0): 0, ("t", 1): 0}))
        rows = check("committed_offsets", await emu.committed_offsets("cg"))
        assert [(r["topic"], r["partition"]) for r in rows] == [("t", p) for p in range(4)]
        for row in rows:
            assert row["member_id"] == owners[(row["topic"], row["partition"])]
            assert row["start_offset"] is None
        assert [r["committed_offset"] for r in rows] == [0, 0, None, None]
        assert rows[0]["lag"] == rows[0]["log_end_offset"] - 0 and rows[2]["lag"] is None
        view = await emu.group_view("cg")
        assert view["total_lag"] == sum(r["lag"] for r in rows if r["lag"] is not None)


async def test_an_empty_consumer_group_and_an_unknown_group():
    async with open_emulator(manual()) as emu:
        broker = emu.broker
        joined = cg_heartbeat(broker, "m-1", 0)
        cg_heartbeat(broker, "m-1", -1)  # it leaves: the group stays, Empty
        view = await emu.group_view("cg")
        assert (view["state"], view["members"], view["type"]) == ("Empty", [], "consumer")
        assert view["group_epoch"] == joined.member_epoch + 1
        assert (await emu.wait_for_group("cg", "Empty", members=0, timeout=5))["state"] == "Empty"
        with pytest.raises(ControlError) as info:
            await emu.group_view("nope")
        assert info.value.status == 404


async def test_the_classic_view_gains_only_neutral_keys():
    from test_control_core import stable_pair
    async with open_emulator(manual()) as emu:
        clients, _ = await stable_pair(emu)
        view = await emu.group_view("g")
        assert (view["type"], view["group_epoch"], view["assignment_epoch"]) == ("classic", None, None)
        for m in view["members"]:
            assert (m["member_epoch"], m["member_state"], m["target_assignment"]) == (None, None, None)
            assert m["uses_classic_protocol"] is True
        assert all(row["start_offset"] is None for row in view["offsets"])
        for client in clients:
            await client.aclose()


async def test_a_share_group_s_view_shows_share_partition_start_offsets():
    check = Checked()
    async with open_emulator(manual()) as emu:
        broker = emu.broker
        result = broker.submit(ShareGroupHeartbeat(
            request_id=broker.new_request_id(), group_id="sg", member_id="s-1", member_epoch=0,
            subscribed_topic_names=("t",), topics={"t": 4}, client_id="share-client"),
            lambda r: r).response
        assert result.error == 0
        # one share-partition whose start offset the first fetch fixed at 0
        topic_id = broker.topics.lookup("t").topic_id
        broker.share_fetching.delivery.partition("sg", topic_id, 0, create=True).reset_to(0)
        view = check("group_view", await emu.wait_for_group("sg", "Stable", members=1, timeout=5))
        assert (view["type"], view["protocol_type"], view["leader"]) == ("share", "share", None)
        (member,) = view["members"]
        assert (member["member_id"], member["client_id"]) == ("s-1", "share-client")
        assert member["member_epoch"] == view["group_epoch"] == 1
        assert member["assignment"]["partitions"] == {"t": [0, 1, 2, 3]}
        rows = {(r["topic"], r["partition"]): r for r in view["offsets"]}
        assert sorted(rows) == [("t", p) for p in range(4)]
        assert rows[("t", 0)]["start_offset"] == 0 and rows[("t", 0)]["committed_offset"] is None
        assert rows[("t", 0)]["lag"] == rows[("t", 0)]["log_end_offset"]
        assert rows[("t", 1)]["start_offset"] is None and rows[("t", 1)]["lag"] is None
        assert rows[("t", 1)]["member_id"] == "s-1"
        check("committed_offsets", await emu.committed_offsets("sg"))


async def test_classic_members_inside_a_consumer_group_after_an_upgrade():
    """A consumer-protocol member joining a Stable classic group converts it (KIP-848's
    migration): the view then shows a consumer group whose two classic members keep their
    session timeout and say they use the classic protocol."""
    from test_control_core import SESSION, stable_pair
    async with open_emulator(manual()) as emu:
        clients, ids = await stable_pair(emu)
        before = await emu.group_view("g")
        assert before["type"] == "classic" and before["state"] == "Stable"
        broker = emu.broker
        joined = broker.submit(ConsumerGroupHeartbeat(
            request_id=broker.new_request_id(), group_id="g", member_id="m-new", member_epoch=0,
            rebalance_timeout_ms=30_000, subscribed_topic_names=("t",), owned=(),
            topics={"t": 4}, client_id="new"), lambda r: r).response
        assert joined.error == 0, joined
        view = await emu.group_view("g")
        assert (view["type"], view["protocol_type"]) == ("consumer", "consumer")
        by_id = {m["member_id"]: m for m in view["members"]}
        assert sorted(by_id) == sorted([*ids.values(), "m-new"])
        for name in ("a", "b"):
            old = by_id[ids[name]]
            assert old["uses_classic_protocol"] is True and old["group_instance_id"] == f"i-{name}"
            assert old["session_timeout_ms"] == SESSION
            assert old["member_epoch"] is not None
        assert by_id["m-new"]["uses_classic_protocol"] is False
        for client in clients:
            await client.aclose()
