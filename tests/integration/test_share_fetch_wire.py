"""ShareFetch (78) and ShareAcknowledge (79) over real sockets, with requests and responses built
and read by a hand-written codec (share_wire.py), not kafka-emu's declarations: sessions and
their errors, acquisition and piggy-backed acknowledgements, redelivery with delivery counts,
the delivery limit, lock expiry on the emulator's clock, and every per-partition error."""

from __future__ import annotations

import itertools
import uuid
from functools import partial

import pytest
import trio

from kafka_emu.broker.server import serve
from kafka_emu.control.timing import advance
from kafka_emu.errors import ErrorCode as E
from kafka_emu.log.records import Record, build_batch
from kafka_emu.testing import make_config
from kafka_emu.testing.wire import WireClient

from .share_wire import (SHARE_ACK, SHARE_FETCH, frame, read_share_ack, read_share_fetch,
                         record_offsets, share_ack, share_fetch)

ACCEPT, RELEASE, REJECT, GAP, RENEW = 1, 2, 3, 0, 4


@pytest.fixture
def start(nursery):
    async def go(settings=None, topics=None):
        config = make_config(settings, topics=topics or {"t": 1})
        return await nursery.start(partial(serve, config))
    return go


class Client:
    def __init__(self, wire: WireClient, member: str, group: str = "g") -> None:
        self.wire, self.member, self.group = wire, member, group
        self.ids = itertools.count(1)

    async def fetch(self, epoch, version=1, **kw):
        cid = next(self.ids)
        await self.wire.send_raw(frame(SHARE_FETCH, version, cid, share_fetch(
            version, kw.pop("group", self.group), kw.pop("member", self.member), epoch, **kw)))
        r = read_share_fetch(await self.wire.receive_frame(), version)
        assert r["correlation_id"] == cid
        return r

    async def ack(self, epoch, topics, version=1, **kw):
        cid = next(self.ids)
        await self.wire.send_raw(frame(SHARE_ACK, version, cid, share_ack(
            version, kw.pop("group", self.group), kw.pop("member", self.member), epoch,
            topics=topics, **kw)))
        r = read_share_ack(await self.wire.receive_frame(), version)
        assert r["correlation_id"] == cid
        return r


async def client(bound, member=None) -> Client:
    wire = await WireClient.connect(bound.host, bound.port)
    return Client(wire, member or uuid.uuid4().hex[:22])


def produce(bound, *batches, topic="t"):
    broker = bound.broker
    log = broker.topics.partition(topic, 0)
    for values in batches:
        # stamped now: log retention (7 days) must not take them when a test advances time
        now = broker.now_ms()
        log.append(build_batch([Record(value=v, key=None, timestamp_ms=now) for v in values]), now)
    broker.topics.notify_append()


def tid(bound, topic="t"):
    return bound.broker.topics.lookup(topic).topic_id


def only_partition(r):
    """The one partition of a response; an incremental answer leaves out a partition with
    nothing to say, which reads as nothing acquired and no error."""
    if not r["responses"]:
        return {"acquired": [], "error_code": 0, "ack_error_code": 0, "records": None}
    (t,) = r["responses"]
    (p,) = t["partitions"]
    return p


async def opened(bound, c: Client, topic="t"):
    """Open c's session on partition 0 (latest: the start offset is the log end now)."""
    r = await c.fetch(0, topics=[(tid(bound, topic), [(0, [])])])
    assert r["error_code"] == 0
    assert only_partition(r)["acquired"] == []  # nothing after the log end yet
    return r


async def test_acquire_accept_and_no_redelivery(start):
    bound = await start()
    produce(bound, [b"old"])  # before the share-partition exists: latest skips it
    a = await client(bound)
    assert (await opened(bound, a))["lock_ms"] == 30_000  # group.share.record.lock.duration.ms
    produce(bound, [b"a", b"b"], [b"c"])
    r = await a.fetch(1, topics=[(tid(bound), [(0, [])])])
    p = only_partition(r)
    assert p["acquired"] == [(1, 3, 1)]
    assert record_offsets(p["records"]) == [1, 2, 3]
    assert p["leader"][0] == 1  # this broker's node id
    # accept 1-2 piggy-backed, release 3: 3 comes back with delivery count 2
    r = await a.fetch(2, topics=[(tid(bound), [(0, [(1, 2, [ACCEPT]), (3, 3, [RELEASE])])])])
    p = only_partition(r)
    assert p["ack_error_code"] == 0
    assert p["acquired"] == [(3, 3, 2)]
    assert record_offsets(p["records"]) == [3]
    # accepted records are never delivered again, to anyone
    b = await client(bound)
    await b.fetch(0, topics=[(tid(bound), [(0, [])])])
    sp = bound.broker.share_fetching.delivery.partition("g", tid(bound), 0)
    assert sp.start_offset == 3 and sp.records[3].member_id == a.member


async def test_two_members_never_hold_the_same_record(start):
    bound = await start()
    a, b = await client(bound), await client(bound)
    await opened(bound, a)
    await opened(bound, b)
    produce(bound, [b"1", b"2"], [b"3", b"4"], [b"5"])
    ra = only_partition(await a.fetch(1, max_records=2))
    rb = only_partition(await b.fetch(1, max_records=2))
    got_a = {o for first, last, _ in ra["acquired"] for o in range(first, last + 1)}
    got_b = {o for first, last, _ in rb["acquired"] for o in range(first, last + 1)}
    assert got_a == {0, 1} and got_b == {2, 3}
    # b acknowledging a's record: INVALID_RECORD_STATE, and nothing of b's batch applies
    r = await b.ack(2, [(tid(bound), [(0, [(0, 0, [ACCEPT])])])])
    assert r["error_code"] == 0
    assert only_partition(r)["error_code"] == E.INVALID_RECORD_STATE


async def test_reject_archives_and_delivery_limit_archives_a_poison_record(start):
    bound = await start({"group.share.delivery.count.limit": "2"})
    delivery = bound.broker.share_fetching.delivery
    a = await client(bound)
    await opened(bound, a)
    produce(bound, [b"x"], [b"poison"])
    t = tid(bound)
    assert only_partition(await a.fetch(1))["acquired"] == [(0, 1, 1)]
    r = only_partition(await a.fetch(2, topics=[(t, [(0, [(0, 1, [REJECT, RELEASE])])])]))
    assert r["acquired"] == [(1, 1, 2)]  # the released one again, second delivery
    r = only_partition(await a.fetch(3, topics=[(t, [(0, [(1, 1, [RELEASE])])])]))
    assert r["ack_error_code"] == 0 and r["acquired"] == []  # at the limit: archived
    sp = delivery.partition("g", t, 0)
    assert sp.start_offset == 2 and not sp.records


async def test_lock_expiry_on_the_emulator_clock_redelivers(start):
    bound = await start()
    a, b = await client(bound), await client(bound)
    await opened(bound, a)
    await opened(bound, b)
    produce(bound, [b"1", b"2"])
    assert only_partition(await a.fetch(1))["acquired"] == [(0, 1, 1)]
    assert only_partition(await b.fetch(1))["acquired"] == []
    happened = advance(bound.broker, 30_000)  # a's locks run out now, not in 30 s
    assert [(e["action"], e["member_id"], e["first_offset"], e["last_offset"])
            for e in happened["events"] if e["type"] == "ShareRecordsChanged"] == [
        ("lock_expired", a.member, 0, 1)]
    assert only_partition(await b.fetch(2))["acquired"] == [(0, 1, 2)]
    # a's acknowledgement comes too late: the records are b's now
    r = await a.ack(2, [(tid(bound), [(0, [(0, 1, [ACCEPT])])])])
    assert only_partition(r)["error_code"] == E.INVALID_RECORD_STATE


async def test_long_poll_is_woken_by_a_lock_expiry(start, autojump_clock):
    bound = await start()
    a, b = await client(bound), await client(bound)
    await opened(bound, a)
    await opened(bound, b)
    produce(bound, [b"1"])
    assert only_partition(await a.fetch(1))["acquired"] == [(0, 0, 1)]
    got = {}

    async def poll():
        got["r"] = await b.fetch(1, max_wait_ms=60_000)
        got["at"] = trio.current_time()

    started = trio.current_time()
    async with trio.open_nursery() as n:
        n.start_soon(poll)
        await trio.sleep(1)
        advance(bound.broker, 30_000)
    assert only_partition(got["r"])["acquired"] == [(0, 0, 2)]
    assert got["at"] - started < 5  # woken by the release, not the 60 s wait


async def test_long_poll_is_woken_by_a_produce(start, autojump_clock):
    bound = await start()
    a = await client(bound)
    await opened(bound, a)
    got = {}

    async def poll():
        got["r"] = await a.fetch(1, max_wait_ms=60_000)

    async with trio.open_nursery() as n:
        n.start_soon(poll)
        await trio.sleep(1)
        produce(bound, [b"late"])
    assert only_partition(got["r"])["acquired"] == [(0, 0, 1)]


async def test_session_errors(start):
    bound = await start()
    a = await client(bound)
    t = tid(bound)
    r = await a.fetch(1, topics=[(t, [(0, [])])])
    assert (r["error_code"], r["responses"]) == (E.SHARE_SESSION_NOT_FOUND, [])
    r = await a.fetch(-1)
    assert r["error_code"] == E.SHARE_SESSION_NOT_FOUND
    r = await a.fetch(0, topics=[(t, [(0, [(0, 0, [ACCEPT])])])])
    assert r["error_code"] == E.INVALID_REQUEST  # acknowledgements on epoch 0
    await opened(bound, a)
    r = await a.fetch(5)
    assert r["error_code"] == E.INVALID_SHARE_SESSION_EPOCH
    assert (await a.fetch(1))["error_code"] == 0  # the failed request did not move the epoch
    assert (await a.ack(0, []))["error_code"] == E.INVALID_SHARE_SESSION_EPOCH
    assert (await a.ack(3, []))["error_code"] == E.INVALID_SHARE_SESSION_EPOCH
    assert (await a.ack(2, []))["error_code"] == 0
    assert (await a.fetch(3))["error_code"] == 0  # acknowledge requests move the epoch too
    r = await a.fetch(4, member="")
    assert r["error_code"] == E.INVALID_REQUEST
    r = await a.fetch(4, group=None)
    assert r["error_code"] == E.INVALID_REQUEST
    other = await client(bound)
    assert (await other.ack(1, []))["error_code"] == E.SHARE_SESSION_NOT_FOUND


async def test_session_limit_reached(start):
    bound = await start()
    bound.broker.share_fetching.delivery.sessions.max_sessions = 1
    a, b = await client(bound), await client(bound)
    await opened(bound, a)
    r = await b.fetch(0, topics=[(tid(bound), [(0, [])])])
    assert r["error_code"] == E.SHARE_SESSION_LIMIT_REACHED
    await opened(bound, a)  # a's own session is replaced, not refused
    assert (await a.fetch(-1))["error_code"] == 0
    assert (await b.fetch(0))["error_code"] == 0  # a's closed session made room


async def test_final_epoch_acknowledges_then_releases_and_closes(start):
    bound = await start()
    a, b = await client(bound), await client(bound)
    await opened(bound, a)
    await opened(bound, b)
    produce(bound, [b"1", b"2", b"3"])
    t = tid(bound)
    assert only_partition(await a.fetch(1))["acquired"] == [(0, 2, 1)]
    r = await a.ack(-1, [(t, [(0, [(0, 0, [ACCEPT])])])])
    assert only_partition(r)["error_code"] == 0
    assert (await a.fetch(2))["error_code"] == E.SHARE_SESSION_NOT_FOUND
    # 1 and 2 went back at once, keeping their delivery count
    assert only_partition(await b.fetch(1))["acquired"] == [(1, 2, 2)]


async def test_closing_the_connection_releases_at_once(start):
    bound = await start()
    a, b = await client(bound), await client(bound)
    await opened(bound, a)
    await opened(bound, b)
    produce(bound, [b"1"])
    assert only_partition(await a.fetch(1))["acquired"] == [(0, 0, 1)]
    await a.wire.aclose()
    for _ in range(100):
        if not bound.broker.share_fetching.delivery.sessions.get("g", a.member):
            break
        await trio.sleep(0.01)
    assert only_partition(await b.fetch(1))["acquired"] == [(0, 0, 2)]


async def test_acknowledgement_errors_per_partition(start):
    bound = await start(topics={"t": 1, "u": 1})
    a = await client(bound)
    t, u, unknown = tid(bound), tid(bound, "u"), uuid.uuid4()
    r = await a.fetch(0, topics=[(t, [(0, []), (7, [])]), (unknown, [(0, [])])])
    codes = {(x["topic_id"], p["partition"]): p["error_code"]
             for x in r["responses"] for p in x["partitions"]}
    assert codes == {(t, 0): 0, (t, 7): E.UNKNOWN_TOPIC_OR_PARTITION,
                     (unknown, 0): E.UNKNOWN_TOPIC_ID}
    produce(bound, [b"1", b"2"])
    assert only_partition(await a.fetch(1, forgotten=[(t, [7]), (unknown, [0])]))[
        "acquired"] == [(0, 1, 1)]
    cases = [
        ([(0, 1, [ACCEPT, ACCEPT, ACCEPT])], E.INVALID_REQUEST),  # types neither 1 nor 1 each
        ([(1, 0, [ACCEPT])], E.INVALID_REQUEST),  # first after last
        ([(0, 0, [9])], E.INVALID_REQUEST),  # no such type
        ([(0, 0, [RENEW])], E.INVALID_REQUEST),  # Renew is v2
        ([(0, 1, [ACCEPT]), (1, 1, [ACCEPT])], E.INVALID_REQUEST),  # overlapping batches
        ([(0, 5, [ACCEPT])], E.INVALID_RECORD_STATE),  # 2-5 were never acquired
        ([(0, 0, [GAP])], 0),
    ]
    epoch = 2
    for batches, code in cases:
        r = await a.ack(epoch, [(t, [(0, batches)])])
        epoch += 1
        assert only_partition(r)["error_code"] == code, batches
    r = await a.ack(epoch, [(t, [(0, [(0, 0, [ACCEPT])])])])  # 0 is archived (gap) now,
    epoch += 1  # before the start offset: Kafka skips such a batch without an error
    assert only_partition(r)["error_code"] == 0
    r = await a.ack(epoch, [(t, [(0, [(1, 1, [ACCEPT]), (1, 1, [ACCEPT])])])])
    epoch += 1
    assert only_partition(r)["error_code"] == E.INVALID_REQUEST  # the same offset twice
    r = await a.ack(epoch, [(u, [(0, [(0, 0, [ACCEPT])])]), (unknown, [(0, [(0, 0, [1])])])])
    codes = {x["topic_id"]: x["partitions"][0]["error_code"] for x in r["responses"]}
    assert codes == {u: E.INVALID_RECORD_STATE, unknown: E.UNKNOWN_TOPIC_ID}


async def test_v2_renew_keeps_the_records_with_a_fresh_lock(start):
    bound = await start()
    a, b = await client(bound), await client(bound)
    t = tid(bound)
    await a.fetch(0, version=2, topics=[(t, [(0, [])])])
    await b.fetch(0, version=2, topics=[(t, [(0, [])])])
    produce(bound, [b"1"])
    assert only_partition(await a.fetch(1, version=2))["acquired"] == [(0, 0, 1)]
    advance(bound.broker, 20_000)
    r = await a.ack(2, [(t, [(0, [(0, 0, [RENEW])])])], version=2, renew=True)
    assert only_partition(r)["error_code"] == 0 and r["lock_ms"] == 30_000
    advance(bound.broker, 20_000)  # 40 s after the acquisition, 20 s after the renewal
    assert only_partition(await b.fetch(1, version=2))["acquired"] == []
    advance(bound.broker, 10_000)
    assert only_partition(await b.fetch(2, version=2))["acquired"] == [(0, 0, 2)]


async def test_max_records_ends_on_a_batch_boundary_and_max_bytes_holds(start):
    bound = await start()
    a = await client(bound)
    await opened(bound, a)
    produce(bound, [b"1", b"2", b"3"], [b"4", b"5"])
    # batch-optimised: the first batch whole even though max_records is 2
    assert only_partition(await a.fetch(1, max_records=2))["acquired"] == [(0, 2, 1)]
    # max_bytes below one batch still returns one batch (at least one, as Fetch)
    assert only_partition(await a.fetch(2, max_bytes=1))["acquired"] == [(3, 4, 1)]


async def test_a_member_fenced_by_its_session_timeout_keeps_its_records_until_the_locks_expire(
        start):
    """The group coordinator's fencing never reaches the share sessions (Kafka: a session ends
    with its final epoch or its connection, ShareSessionCache): the record comes back when its
    lock runs out, not when the member's session timeout fences it."""
    from kafka_emu.protocol import BY_NAME
    from kafka_emu.protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest

    bound = await start({"group.share.record.lock.duration.ms": "60000",
                         "group.share.max.record.lock.duration.ms": "60000"})
    a, b = await client(bound), await client(bound)
    sghb = BY_NAME["ShareGroupHeartbeat"]
    joined = await a.wire.request(sghb, 1, ShareGroupHeartbeatRequest(
        group_id="g", member_id=a.member, member_epoch=0, subscribed_topic_names=["t"]))
    assert joined.error_code == 0
    await opened(bound, a)
    await opened(bound, b)
    produce(bound, [b"1"])
    assert only_partition(await a.fetch(1))["acquired"] == [(0, 0, 1)]
    advance(bound.broker, 46_000)  # share.session.timeout.ms (45 s) without a heartbeat
    assert bound.broker.coordinator.share_member_epoch("g", a.member) is None
    assert only_partition(await b.fetch(1))["acquired"] == []  # still a's, locked
    advance(bound.broker, 15_000)  # the 60 s lock runs out
    assert only_partition(await b.fetch(2))["acquired"] == [(0, 0, 2)]


async def test_acknowledgements_sent_after_the_leave_heartbeat_are_applied(start):
    """librdkafka's close sends its leave heartbeat, then its final acknowledgements on the
    leader's connection (test 0178 do_test_close_with_acknowledge): they must be applied."""
    from kafka_emu.protocol import BY_NAME
    from kafka_emu.protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest

    bound = await start()
    a = await client(bound)
    sghb = BY_NAME["ShareGroupHeartbeat"]
    joined = await a.wire.request(sghb, 1, ShareGroupHeartbeatRequest(
        group_id="g", member_id=a.member, member_epoch=0, subscribed_topic_names=["t"]))
    await opened(bound, a)
    produce(bound, [b"1", b"2"])
    t = tid(bound)
    assert only_partition(await a.fetch(1))["acquired"] == [(0, 1, 1)]
    left = await a.wire.request(sghb, 1, ShareGroupHeartbeatRequest(
        group_id="g", member_id=a.member, member_epoch=-1, subscribed_topic_names=None))
    assert (joined.error_code, left.error_code) == (0, 0)
    r = await a.ack(-1, [(t, [(0, [(0, 1, [ACCEPT])])])])
    assert (r["error_code"], only_partition(r)["error_code"]) == (0, 0)
    assert bound.broker.share_fetching.delivery.partition("g", t, 0).start_offset == 2


async def test_delivery_events_reach_the_observer_seam(nursery):
    from kafka_emu.broker.events import ShareRecordsChanged

    seen = []
    bound = await nursery.start(partial(
        serve, make_config({"group.share.delivery.count.limit": "2"}, topics={"t": 1}),
        observer=lambda e: seen.append(e) if isinstance(e, ShareRecordsChanged) else None))
    a = await client(bound)
    await opened(bound, a)
    produce(bound, [b"1", b"2", b"3"])
    t = tid(bound)
    await a.fetch(1)
    await a.fetch(2, topics=[(t, [(0, [(0, 2, [ACCEPT, RELEASE, REJECT])])])])  # 1 again
    advance(bound.broker, 30_000)
    rows = [(e.action, e.member_id, e.first_offset, e.last_offset, e.delivery_count, e.ack_type)
            for e in seen]
    m = a.member
    assert rows == [
        ("acquire", m, 0, 2, 1, None),
        ("acknowledge", m, 0, 0, 1, ACCEPT), ("acknowledge", m, 1, 1, 1, RELEASE),
        ("acknowledge", m, 2, 2, 1, REJECT), ("archive", m, 2, 2, 1, None),
        ("release", m, 1, 1, 1, None),
        ("acquire", m, 1, 1, 2, None),
        ("archive", m, 1, 1, 2, None),  # its lock ran out at the delivery count limit
    ]
    assert {(e.group_id, e.topic, e.partition) for e in seen} == {("g", "t", 0)}


async def test_read_committed_stops_at_the_lso_and_archives_aborted_records(start):
    bound = await start()
    broker = bound.broker
    for group, level in (("rc", "read_committed"), ("ru", "read_uncommitted")):
        broker.resource_configs.group_overrides[group] = {
            "share.isolation.level": level, "share.auto.offset.reset": "earliest"}
    log = broker.topics.partition("t", 0)
    now = broker.now_ms()
    log.append(build_batch([Record(value=v, key=None, timestamp_ms=now) for v in (b"t1", b"t2")],
                           producer_id=7, producer_epoch=0, base_sequence=0,
                           transactional=True), now)
    produce(bound, [b"plain"])  # offset 2, behind the open transaction
    t = tid(bound)
    rc = Client(await WireClient.connect(bound.host, bound.port), "m1", "rc")
    ru = Client(await WireClient.connect(bound.host, bound.port), "m2", "ru")
    r = await rc.fetch(0, topics=[(t, [(0, [])])])
    assert only_partition(r)["acquired"] == []  # the last stable offset is 0
    log.append_marker(producer_id=7, producer_epoch=0, coordinator_epoch=0, commit=False,
                      now_ms=now, transaction_version=1)  # ABORT at offset 3
    p = only_partition(await rc.fetch(1))
    assert p["acquired"] == [(2, 2, 1)]  # the aborted 0-1 and the marker are never delivered
    assert record_offsets(p["records"]) == [2]
    r = await rc.fetch(2, topics=[(t, [(0, [(2, 2, [ACCEPT])])])])
    sp = broker.share_fetching.delivery.partition("rc", t, 0)
    assert (sp.start_offset, sp.end_offset) == (4, 4)
    # read_uncommitted delivers the aborted records too (the client filters nothing for shares)
    p = only_partition(await ru.fetch(0, topics=[(t, [(0, [])])]))
    assert p["acquired"] == [(0, 2, 1)]


async def test_a_cluster_redirects_share_fetches_to_the_leader(start):
    bound = await start({"emu.brokers": "2"})
    broker = bound.broker
    t = tid(bound)
    leader = broker.cluster.placement(t, "t", 0).leader
    ports = dict(zip((n.node_id for n in broker.cluster.nodes.values()), bound.ports))
    follower = next(n for n in ports if n != leader)
    wrong = Client(await WireClient.connect(bound.host, ports[follower]), "m")
    r = await wrong.fetch(0, topics=[(t, [(0, [])])])
    p = only_partition(r)
    assert p["error_code"] == E.NOT_LEADER_OR_FOLLOWER and p["leader"] == (leader, 0)
    assert [(n[0], n[2]) for n in r["node_endpoints"]] == [(leader, ports[leader])]
    r = await wrong.ack(1, [(t, [(0, [(0, 0, [ACCEPT])])])])
    assert only_partition(r)["error_code"] == E.NOT_LEADER_OR_FOLLOWER
    assert [n[0] for n in r["node_endpoints"]] == [leader]
    right = Client(await WireClient.connect(bound.host, ports[leader]), "m2")
    await opened(bound, right)
    produce(bound, [b"1"])
    p = only_partition(await right.fetch(1))
    assert p["acquired"] == [(0, 0, 1)] and p["leader"] == (leader, 0)


async def test_v2_record_limit_mode_splits_a_batch_at_max_records(start):
    bound = await start()
    a = await client(bound)
    t = tid(bound)
    await a.fetch(0, version=2, topics=[(t, [(0, [])])])
    produce(bound, [b"1", b"2", b"3", b"4"])
    p = only_partition(await a.fetch(1, version=2, max_records=3, acquire_mode=1))
    assert p["acquired"] == [(0, 2, 1)]
    assert record_offsets(p["records"]) == [0, 1, 2, 3]  # the stored batch, filtered by ranges
    p = only_partition(await a.fetch(2, version=2, max_records=3, acquire_mode=1))
    assert p["acquired"] == [(3, 3, 1)]


async def test_a_fetch_waiting_at_the_in_flight_limit_is_woken_by_an_acknowledgement(
        start, autojump_clock):
    bound = await start({"group.share.partition.max.record.locks": "100"})
    a, b = await client(bound), await client(bound)
    await opened(bound, a)
    await opened(bound, b)
    produce(bound, [b"x"] * 100, [b"y"])
    t = tid(bound)
    assert only_partition(await a.fetch(1))["acquired"] == [(0, 99, 1)]
    got = {}

    async def poll():
        got["r"] = await b.fetch(1, max_wait_ms=60_000)
        got["at"] = trio.current_time()

    started = trio.current_time()
    async with trio.open_nursery() as n:
        n.start_soon(poll)
        await trio.sleep(1)
        assert "r" not in got  # 100 records in flight: nothing more until some finish
        await a.ack(2, [(t, [(0, [(0, 99, [ACCEPT])])])])
    assert only_partition(got["r"])["acquired"] == [(100, 100, 1)]
    assert got["at"] - started < 5
