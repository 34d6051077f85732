"""Share groups on the several-broker emulator (``emu.brokers``), over the wire: a consumer keeps
one share session with each leader it fetches from (Kafka's ShareSessionCache is per broker),
and a partition's leader moving makes the new leader load the share-partition from the
share-group state, where acquisitions are never written (SharePartition.maybeInitialize;
SharePartition.acquire persists nothing): what was ACQUIRED is AVAILABLE again with the delivery
count of its last write, and the old holder's acknowledgement of it is refused."""

from __future__ import annotations

from functools import partial

import pytest

from kafka_emu.broker.server import serve
from kafka_emu.errors import ErrorCode as E
from kafka_emu.log.records import Record, build_batch
from kafka_emu.testing import make_config
from kafka_emu.testing.wire import WireClient

from .test_share_fetch_wire import ACCEPT, Client, only_partition, tid


@pytest.fixture
def start(nursery):
    async def go(settings, topics):
        return await nursery.start(partial(serve, make_config(settings, topics=topics)))
    return go


def produce_to(bound, partition, values):
    broker = bound.broker
    now = broker.now_ms()
    broker.topics.partition("t", partition).append(
        build_batch([Record(value=v, key=None, timestamp_ms=now) for v in values]), now)
    broker.topics.notify_append()


async def to_leader(bound, partition, member, leader=None):
    broker = bound.broker
    leader = broker.cluster.placement(tid(bound), "t", partition).leader if leader is None \
        else leader
    ports = dict(zip((n.node_id for n in broker.cluster.nodes.values()), bound.ports))
    return Client(await WireClient.connect(bound.host, ports[leader]), member), leader


async def test_a_consumer_keeps_a_share_session_with_each_leader(start):
    bound = await start({"emu.brokers": "2"}, topics={"t": 2})
    t = tid(bound)
    leaders = [bound.broker.cluster.placement(t, "t", p).leader for p in (0, 1)]
    assert leaders[0] != leaders[1]  # the emulator spreads leaders: one session per broker
    a0, _ = await to_leader(bound, 0, "m")
    a1, _ = await to_leader(bound, 1, "m")
    for c, p in ((a0, 0), (a1, 1)):
        r = await c.fetch(0, topics=[(t, [(p, [])])])
        assert r["error_code"] == 0
    produce_to(bound, 0, [b"x"])
    produce_to(bound, 1, [b"y"])
    # each session goes on at its own epoch (one shared session would refuse the second)
    assert only_partition(await a0.fetch(1))["acquired"] == [(0, 0, 1)]
    assert only_partition(await a1.fetch(1))["acquired"] == [(0, 0, 1)]
    r = await a0.fetch(2, topics=[(t, [(0, [(0, 0, [ACCEPT])])])])
    assert r["error_code"] == 0 and only_partition(r)["ack_error_code"] == 0


async def test_a_leader_move_returns_acquired_records_with_their_last_written_count(start):
    bound = await start({"emu.brokers": "2"}, topics={"t": 1})
    broker, t = bound.broker, tid(bound)
    old, leader = await to_leader(bound, 0, "m")
    await old.fetch(0, topics=[(t, [(0, [])])])
    produce_to(bound, 0, [b"a"])
    produce_to(bound, 0, [b"b"])
    assert only_partition(await old.fetch(1))["acquired"] == [(0, 1, 1)]
    r = await old.fetch(2, topics=[(t, [(0, [(0, 0, [ACCEPT])])])])  # 0 accepted, 1 held
    assert only_partition(r)["ack_error_code"] == 0
    other = next(n for n in broker.cluster.nodes if n != leader)
    broker.cluster_moves.move_leader("t", 0, other)
    sp = broker.share_fetching.delivery.partition("g", t, 0)
    rec = sp.records[1]
    assert (rec.state.name, rec.delivery_count, rec.member_id) == ("AVAILABLE", 0, "")
    assert sp.start_offset == 1  # what was acknowledged stays so
    new, _ = await to_leader(bound, 0, "m", leader=other)
    r = await new.fetch(0, topics=[(t, [(0, [])])])
    # delivered again with delivery count 1: the lost acquisition was never written
    assert only_partition(r)["acquired"] == [(1, 1, 1)]
    # the old leader no longer leads: the old session's acknowledgement is sent back
    r = await old.ack(3, [(t, [(0, [(1, 1, [ACCEPT])])])])
    assert only_partition(r)["error_code"] == E.NOT_LEADER_OR_FOLLOWER


async def test_the_holder_cannot_acknowledge_what_a_leader_move_took_back(start):
    bound = await start({"emu.brokers": "2"}, topics={"t": 1})
    broker, t = bound.broker, tid(bound)
    first, leader = await to_leader(bound, 0, "m")
    other = next(n for n in broker.cluster.nodes if n != leader)
    again, _ = await to_leader(bound, 0, "m", leader=other)
    await first.fetch(0, topics=[(t, [(0, [])])])
    r = await again.fetch(0, topics=[(t, [(0, [])])])  # a session there, nothing to take
    assert only_partition(r)["error_code"] == E.NOT_LEADER_OR_FOLLOWER
    produce_to(bound, 0, [b"a"])
    assert only_partition(await first.fetch(1))["acquired"] == [(0, 0, 1)]
    broker.cluster_moves.move_leader("t", 0, other)
    r = await again.ack(1, [(t, [(0, [(0, 0, [ACCEPT])])])])
    assert only_partition(r)["error_code"] == E.INVALID_RECORD_STATE
