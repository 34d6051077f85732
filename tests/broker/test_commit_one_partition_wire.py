"""The one-partition OffsetCommit over the wire: the handler's path for it (offset_commit.py, one
partition of a known topic, the coordinator called without ``ctx.submit``'s coroutine on one
broker) and the coordinator's for the usual commit (offsets.handle_commit: a Stable group's
member at its generation) answer exactly as the general paths do -- the same commit sent with a
second partition beside it goes through the general ones -- and skip none of Kafka's checks: a
stale generation, an unknown member, a simple group's commit, a group being rebalanced, a fault
rule and a broker that does not coordinate the group all still give Kafka's errors."""

from functools import partial

import pytest
import trio

from kafka_emu.broker.server import serve
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import join_group as jg
from kafka_emu.protocol.messages import offset_commit as oc
from kafka_emu.protocol.messages import offset_fetch as of
from kafka_emu.protocol.messages import sync_group as sg
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.wire import WireClient

COMMIT, FETCH = BY_NAME["OffsetCommit"], BY_NAME["OffsetFetch"]
JOIN, SYNC = BY_NAME["JoinGroup"], BY_NAME["SyncGroup"]


def commit(group, generation, member_id, partitions, offset=7, instance=None):
    return oc.OffsetCommitRequest(
        group_id=group, generation_id_or_member_epoch=generation, member_id=member_id,
        group_instance_id=instance, topics=[oc.OffsetCommitRequestTopic(name="t", partitions=[
            oc.OffsetCommitRequestPartition(partition_index=p, committed_offset=offset,
                                            committed_metadata="m") for p in partitions])])


def join_request(group, member_id=""):
    return jg.JoinGroupRequest(group_id=group, session_timeout_ms=30000,
                               rebalance_timeout_ms=30000, member_id=member_id,
                               protocol_type="consumer", protocols=[
                                   jg.JoinGroupRequestProtocol(name="range", metadata=b"m")])


async def stable_member(client, group="g"):
    """A one-member classic group in Stable: (generation, member id)."""
    joined = await client.request(JOIN, 3, join_request(group))
    assert joined.error_code == ErrorCode.NONE
    synced = await client.request(SYNC, 3, sg.SyncGroupRequest(
        group_id=group, generation_id=joined.generation_id, member_id=joined.member_id,
        assignments=[sg.SyncGroupRequestAssignment(member_id=joined.member_id,
                                                   assignment=b"")]))
    assert synced.error_code == ErrorCode.NONE
    return joined.generation_id, joined.member_id


async def errors(client, version, request):
    answer = await client.request(COMMIT, version, request)
    return [p.error_code for t in answer.topics for p in t.partitions]


async def one_and_general(client, version, group, generation, member_id, instance=None):
    """The error of a one-partition commit, and the errors of the same commit with a second
    partition (the general path), which must all be that error."""
    one = await errors(client, version, commit(group, generation, member_id, [0],
                                               instance=instance))
    both = await errors(client, version, commit(group, generation, member_id, [0, 1],
                                                instance=instance))
    assert both == one * 2
    return one[0]


@pytest.mark.parametrize("version", [2, 6, 8, 9])
async def test_one_partition_commits_answer_as_the_general_path_and_keep_kafkas_checks(
        start_broker, version):
    bound = await start_broker(topics={"t": 2})
    client = await WireClient.connect(bound.host, bound.port)
    generation, member_id = await stable_member(client)
    assert await one_and_general(client, version, "g", generation, member_id) == ErrorCode.NONE
    assert await one_and_general(client, version, "g", generation + 1,
                                 member_id) == ErrorCode.ILLEGAL_GENERATION
    assert await one_and_general(client, version, "g", generation,
                                 "nobody") == ErrorCode.UNKNOWN_MEMBER_ID
    # a simple group's commit (generation -1, no member) into a group with members
    assert await one_and_general(client, version, "g", -1, "") == ErrorCode.UNKNOWN_MEMBER_ID
    # a missing group: v9 says so, earlier versions call the generation illegal (KIP-915)
    assert await one_and_general(client, version, "missing", 1, "m") == (
        ErrorCode.GROUP_ID_NOT_FOUND if version >= 9 else ErrorCode.ILLEGAL_GENERATION)
    # a simple group: created by its first commit, answered NONE
    assert await one_and_general(client, version, "simple", -1, "") == ErrorCode.NONE
    # a new member joins: PreparingRebalance, where the old member's commit still counts
    # (and doubles as its heartbeat), as Kafka's validateOffsetCommit allows
    newcomer = await WireClient.connect(bound.host, bound.port)
    await newcomer.send(JOIN, 3, join_request("g"))
    assert await one_and_general(client, version, "g", generation, member_id) == ErrorCode.NONE
    fetched = await client.request(FETCH, 7, of.OffsetFetchRequest(group_id="g", topics=None))
    assert {(t.name, p.partition_index): p.committed_offset for t in fetched.topics
            for p in t.partitions} == {("t", 0): 7, ("t", 1): 7}


async def test_a_fault_rule_answers_a_stable_members_one_partition_commit():
    async with open_emulator(make_config(topics={"t": 1})) as emu:
        client = await WireClient.connect(emu.host, emu.port)
        generation, member_id = await stable_member(client)
        await emu.add_fault("error", api="OffsetCommit", group_id="g",
                            error="REBALANCE_IN_PROGRESS")
        assert await errors(client, 8, commit("g", generation, member_id, [0], offset=3)) == [
            ErrorCode.REBALANCE_IN_PROGRESS]
        fetched = await client.request(FETCH, 7, of.OffsetFetchRequest(group_id="g", topics=None))
        assert [t for t in fetched.topics if t.partitions] == []  # the faulted commit: not applied
        assert await errors(client, 8, commit("g", generation, member_id, [0])) == [
            ErrorCode.NONE]


async def test_a_broker_not_coordinating_the_group_refuses_the_one_partition_commit(nursery):
    config = make_config(None, topics={"t": 1}, brokers=3)
    bound = await nursery.start(partial(serve, config))
    cluster = bound.broker.cluster
    coordinator = cluster.coordinator_of("g")
    other = next(n for n in (1, 2, 3) if n != coordinator)
    right = await WireClient.connect(bound.host, cluster.nodes[coordinator].port)
    wrong = await WireClient.connect(bound.host, cluster.nodes[other].port)
    generation, member_id = await stable_member(right)
    assert await errors(wrong, 8, commit("g", generation, member_id, [0])) == [
        ErrorCode.NOT_COORDINATOR]
    assert await errors(right, 8, commit("g", generation, member_id, [0])) == [ErrorCode.NONE]


async def test_a_parked_join_behind_a_fault_rule_waits_in_its_handler():
    """``RequestContext.wait_for``, the waiting half of ``submit`` the commit path shares: a
    request a fault rule matched is not handed back to its connection while parked (the rule's
    action may still run after the handler), so it waits there, is answered when the
    coordinator answers it, and is forgotten if its client goes first."""
    config = make_config({"group.initial.rebalance.delay.ms": 3000}, topics={"t": 1},
                         clock="manual")
    async with open_emulator(config) as emu:
        await emu.add_fault("delay", api="JoinGroup", delay_ms=1, always=True)
        waiting = await WireClient.connect(emu.host, emu.port)
        gone = await WireClient.connect(emu.host, emu.port)
        await waiting.send(JOIN, 3, join_request("g"))
        await gone.send(JOIN, 3, join_request("h"))
        pending = emu.broker.pending
        with trio.fail_after(5):
            while len(pending) < 2:  # both parked in the coordinator (the initial delay)
                await trio.sleep(0.01)
        await gone.aclose()
        with trio.fail_after(5):
            while len(pending) > 1:  # the closed one's, forgotten
                await trio.sleep(0.01)
        await emu.advance(3000)
        joined = await waiting.receive(JOIN, 3)
        assert (joined.error_code, joined.generation_id) == (ErrorCode.NONE, 1)
        assert not pending
