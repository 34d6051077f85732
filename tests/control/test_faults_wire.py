"""Fault rules over real sockets, driven with the raw wire client (trio, port 0)."""

from __future__ import annotations

import trio

from kafka_emu.broker.events import FaultFired
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import heartbeat as hb
from kafka_emu.protocol.messages import offset_commit as oc
from kafka_emu.protocol.messages import offset_fetch as of
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.testing.emulator import make_config, open_emulator
from kafka_emu.testing.wire import WireClient

COMMIT, FETCH, HEARTBEAT, PRODUCE = (BY_NAME[n] for n in
                                     ("OffsetCommit", "OffsetFetch", "Heartbeat", "Produce"))


def commit_request(group="g", offset=5, topic="t"):
    return oc.OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                                  topics=[oc.OffsetCommitRequestTopic(name=topic, partitions=[
                                      oc.OffsetCommitRequestPartition(
                                          partition_index=0, committed_offset=offset)])])


def commit_errors(resp):
    return [(t.name, p.partition_index, p.error_code) for t in resp.topics for p in t.partitions]


async def committed(emu, group="g"):
    client = await WireClient.connect(emu.host, emu.port)
    resp = await client.request(FETCH, 7, of.OffsetFetchRequest(group_id=group, topics=None))
    await client.aclose()
    return {(t.name, p.partition_index): p.committed_offset
            for t in resp.topics for p in t.partitions}


async def test_error_rule_answers_per_partition_once_then_lets_requests_through():
    events = []
    async with open_emulator(make_config(topics={"t": 1}), observer=events.append) as emu:
        rule = await emu.add_fault("error", api="OffsetCommit", group_id="g",
                             error="REBALANCE_IN_PROGRESS")
        client = await WireClient.connect(emu.host, emu.port, client_id="app")
        first = await client.request(COMMIT, 8, commit_request())
        assert commit_errors(first) == [("t", 0, ErrorCode.REBALANCE_IN_PROGRESS)]
        assert await committed(emu) == {}  # the faulted commit was not applied
        second = await client.request(COMMIT, 8, commit_request())
        assert commit_errors(second) == [("t", 0, ErrorCode.NONE)]
        (listed,) = (await emu.faults())
        assert (listed["id"], listed["matched"], listed["fired"], listed["active"]) == (
            rule, 1, 1, False)
        fired = [e for e in events if isinstance(e, FaultFired)]
        assert [(e.rule_id, e.action, e.api, e.version, e.client_id, e.group_id, e.error_code)
                for e in fired] == [(rule, "error", "OffsetCommit", 8, "app", "g", 27)]


async def test_error_rule_on_a_top_level_api():
    async with open_emulator() as emu:
        await emu.add_fault("error", api="Heartbeat", error=ErrorCode.NOT_COORDINATOR)
        client = await WireClient.connect(emu.host, emu.port)
        resp = await client.request(HEARTBEAT, 4, hb.HeartbeatRequest(group_id="g",
                                                                       member_id="m"))
        assert resp.error_code == ErrorCode.NOT_COORDINATOR


async def test_close_before_does_not_apply_close_after_does():
    async with open_emulator(make_config(topics={"t": 1})) as emu:
        await emu.add_fault("close_before", api="OffsetCommit")
        client = await WireClient.connect(emu.host, emu.port)
        await client.send(COMMIT, 8, commit_request(offset=5))
        assert await client.receive_frame() is None  # closed, no answer
        assert await committed(emu) == {}

        await emu.add_fault("close_after", api="OffsetCommit")
        client = await WireClient.connect(emu.host, emu.port)
        await client.send(COMMIT, 8, commit_request(offset=7))
        assert await client.receive_frame() is None  # closed, no answer ...
        assert await committed(emu) == {("t", 0): 7}  # ... but the commit was applied
        assert (await emu.unexpected_errors()) == []


async def test_blackhole_never_answers_and_is_released_when_the_client_goes():
    async with open_emulator(make_config(topics={"t": 1})) as emu:
        await emu.add_fault("blackhole", api="OffsetCommit")
        client = await WireClient.connect(emu.host, emu.port)
        await client.send(COMMIT, 8, commit_request(offset=3))
        with trio.move_on_after(0.3) as waited:
            await client.receive_frame()
        assert waited.cancelled_caught
        await client.aclose()
        with trio.fail_after(5):
            while emu.broker.connections:
                await trio.sleep(0.01)
        assert await committed(emu) == {}  # never applied
        assert (await emu.unexpected_errors()) == []


async def test_delay_holds_the_request_back(autojump_clock):
    async with open_emulator(make_config(topics={"t": 1})) as emu:
        await emu.add_fault("delay", api="OffsetCommit", delay_ms=2000)
        client = await WireClient.connect(emu.host, emu.port)
        start = trio.current_time()
        resp = await client.request(COMMIT, 8, commit_request())
        assert commit_errors(resp) == [("t", 0, ErrorCode.NONE)]
        assert trio.current_time() - start >= 2.0


async def test_throttle_kip219_answers_at_once_then_mutes_the_connection(autojump_clock):
    async with open_emulator() as emu:
        await emu.add_fault("throttle", api="Heartbeat", throttle_ms=3000)
        client = await WireClient.connect(emu.host, emu.port)
        start = trio.current_time()
        req = hb.HeartbeatRequest(group_id="g", member_id="m")
        first = await client.send(HEARTBEAT, 4, req)
        second = await client.send(HEARTBEAT, 4, req)  # pipelined behind the throttled one
        resp = await client.receive(HEARTBEAT, 4, first)
        assert resp.throttle_time_ms == 3000
        assert trio.current_time() - start < 3.0  # sent before the throttle time passed
        resp = await client.receive(HEARTBEAT, 4, second)
        assert resp.throttle_time_ms == 0
        assert trio.current_time() - start >= 3.0  # read only once the mute ended


async def test_throttle_before_kip219_delays_the_response(autojump_clock):
    async with open_emulator() as emu:
        await emu.add_fault("throttle", api="Heartbeat", throttle_ms=3000)
        client = await WireClient.connect(emu.host, emu.port)
        start = trio.current_time()
        resp = await client.request(HEARTBEAT, 1, hb.HeartbeatRequest(group_id="g",
                                                                       member_id="m"))
        assert resp.throttle_time_ms == 3000
        assert trio.current_time() - start >= 3.0


async def test_error_on_acks0_produce_sends_nothing_and_the_connection_goes_on():
    async with open_emulator(make_config(topics={"t": 1})) as emu:
        await emu.add_fault("error", api="Produce", error="NOT_LEADER_OR_FOLLOWER")
        client = await WireClient.connect(emu.host, emu.port)
        await client.send(PRODUCE, 9, pr.ProduceRequest(acks=0, timeout_ms=100, topic_data=[
            pr.TopicProduceData(name="t", partition_data=[pr.PartitionProduceData(index=0)])]))
        resp = await client.request(HEARTBEAT, 4, hb.HeartbeatRequest(group_id="g",
                                                                       member_id="m"))
        assert resp.error_code != 0  # answered: the unknown member's own error
        assert (await emu.faults())[0]["fired"] == 1


async def test_probability_rule_fires_the_same_requests_every_run():
    async def run():
        async with open_emulator() as emu:
            await emu.add_fault("error", api="Heartbeat", error=27, always=True, probability=0.5,
                          seed=42)
            client = await WireClient.connect(emu.host, emu.port)
            codes = []
            for _ in range(20):
                resp = await client.request(HEARTBEAT, 4, hb.HeartbeatRequest(group_id="g",
                                                                               member_id="m"))
                codes.append(resp.error_code == 27)
            return codes
    first = await run()
    assert first == await run()
    assert 0 < sum(first) < 20
