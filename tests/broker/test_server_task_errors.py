"""A bug in one of the server's own tasks (the timers, a coordinator's load after a move, a
broker's accept loop) is logged and recorded -- the test fixture re-raises what is recorded --
and the emulator keeps serving. Out of the server's nursery it would end the emulator's loop,
every broker and connection with it, and leave a test only trio's "run() has exited"."""
from __future__ import annotations

from functools import partial

import trio

from kafka_emu.broker.server import serve
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import join_group as jg
from kafka_emu.protocol.messages import metadata as md
from kafka_emu.testing import make_config
from kafka_emu.testing.wire import WireClient


def join_request(group: str, member_id: str = "") -> jg.JoinGroupRequest:
    return jg.JoinGroupRequest(group_id=group, session_timeout_ms=30000,
                               rebalance_timeout_ms=30000, member_id=member_id,
                               protocol_type="consumer",
                               protocols=[jg.JoinGroupRequestProtocol(name="range",
                                                                      metadata=b"m")])


async def join(client: WireClient, group: str):
    """A JoinGroup as a v4+ client sends it: without a member id, then with the one given."""
    first = await client.request(BY_NAME["JoinGroup"], 4, join_request(group))
    if first.error_code != ErrorCode.MEMBER_ID_REQUIRED:
        return first
    return await client.request(BY_NAME["JoinGroup"], 4, join_request(group, first.member_id))


async def test_a_bug_firing_timers_is_recorded_and_the_timers_go_on(nursery, monkeypatch):
    config = make_config({"group.initial.rebalance.delay.ms": 100})
    bound = await nursery.start(partial(serve, config))
    broker = bound.broker
    real_expire = broker.coordinator.expire
    calls = []

    def expire_failing_once(now_ms):
        calls.append(now_ms)
        if len(calls) == 1:
            raise RuntimeError("a bug in a timer")
        return real_expire(now_ms)

    monkeypatch.setattr(broker.coordinator, "expire", expire_failing_once)
    client = await WireClient.connect(bound.host, bound.port)
    with trio.fail_after(10):
        # the join completes only when the initial rebalance delay's timer fires
        joined = await join(client, "g")
    assert joined.error_code == ErrorCode.NONE and len(calls) >= 2
    assert [str(e) for e in broker.unexpected] == ["a bug in a timer"]
    broker.unexpected.clear()  # seen: the fixture need not raise it


async def test_a_bug_loading_groups_after_a_move_is_recorded_and_the_cluster_serves_on(
        nursery, monkeypatch):
    bound = await nursery.start(partial(serve, make_config({"group.initial.rebalance.delay.ms": 0}, brokers=3)))
    broker = bound.broker
    client = await WireClient.connect(bound.host, broker.cluster.nodes[
        broker.cluster.coordinator_of("g")].port)
    assert (await join(client, "g")).error_code == ErrorCode.NONE

    def load_failing(group_id, now_ms):
        raise RuntimeError(f"a bug loading {group_id}")

    monkeypatch.setattr(broker.coordinator, "load_group", load_failing)
    old = broker.cluster.coordinator_of("g")
    broker.cluster_moves.move_coordinator("g", old % 3 + 1, load_ms=50)
    await trio.sleep(0.3)
    assert [str(e) for e in broker.unexpected] == ["a bug loading g"]
    broker.unexpected.clear()
    for node in broker.cluster.nodes.values():  # every broker still answers
        other = await WireClient.connect(bound.host, node.port)
        meta = await other.request(BY_NAME["Metadata"], 12, md.MetadataRequest(topics=None))
        assert sorted(b.node_id for b in meta.brokers) == [1, 2, 3]
    monkeypatch.undo()
    on = broker.cluster.coordinator_of("h")
    elsewhere = await WireClient.connect(bound.host, broker.cluster.nodes[on].port)
    assert (await join(elsewhere, "h")).error_code == ErrorCode.NONE


async def test_a_bug_accepting_on_one_broker_is_recorded_and_the_others_serve_on(
        nursery, monkeypatch):
    import kafka_emu.broker.server as server
    bound = await nursery.start(partial(serve, make_config(brokers=3)))
    broker = bound.broker

    async def accept_failing(*args):
        raise RuntimeError("a bug accepting")

    broker.cluster_moves.stop(2)
    monkeypatch.setattr(server, "accept_loop", accept_failing)
    broker.cluster_moves.start(2)  # its accept loop is the failing one
    await trio.sleep(0.1)
    assert "a bug accepting" in repr(broker.unexpected)
    broker.unexpected.clear()
    for node_id in (1, 3):
        client = await WireClient.connect(bound.host, broker.cluster.nodes[node_id].port)
        meta = await client.request(BY_NAME["Metadata"], 12, md.MetadataRequest(topics=None))
        assert meta.controller_id == 1
