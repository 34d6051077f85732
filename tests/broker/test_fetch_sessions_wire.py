"""Fetch sessions (KIP-227, broker/fetch_sessions.py) over the wire: a session opened by a full
fetch, incremental fetches that name and answer only what changed, and the session errors, as
Kafka's FetchSession answers them."""

import pytest
import trio

from kafka_emu.errors import ErrorCode
from kafka_emu.log.records import Record, build_batch
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import fetch as f
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.testing.wire import WireClient

PRODUCE, FETCH = BY_NAME["Produce"], BY_NAME["Fetch"]
LAYOUT = {"a": 3, "b": 2}
EVERY = [(t, p) for t, n in LAYOUT.items() for p in range(n)]


def _produce(*targets, count: int = 1, size: int = 10):
    by_topic: dict[str, list] = {}
    for topic, partition in targets:
        by_topic.setdefault(topic, []).append(pr.PartitionProduceData(
            index=partition, records=build_batch(
                [Record(value=b"v" * size, key=b"k", timestamp_ms=1000)] * count)))
    return pr.ProduceRequest(acks=-1, timeout_ms=1000, topic_data=[
        pr.TopicProduceData(name=t, partition_data=parts) for t, parts in by_topic.items()])


def _fetch(partitions, *, session_id=0, epoch=0, forgotten=(), max_wait_ms=0,
           max_bytes=1 << 20, ids=None):
    """A Fetch of ``partitions`` ({(topic, index): fetch offset}); ``ids`` ({topic: id}) names
    topics by id (v13+)."""
    by_topic: dict[str, list] = {}
    for (topic, index), offset in partitions.items():
        by_topic.setdefault(topic, []).append(f.FetchPartition(
            partition=index, fetch_offset=offset, partition_max_bytes=1 << 20))
    forgot: dict[str, list] = {}
    for topic, index in forgotten:
        forgot.setdefault(topic, []).append(index)

    def named(topic):
        return {"topic_id": ids[topic]} if ids else {"topic": topic}
    return f.FetchRequest(
        max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=max_bytes, isolation_level=0,
        session_id=session_id, session_epoch=epoch,
        topics=[f.FetchTopic(partitions=parts, **named(t)) for t, parts in by_topic.items()],
        forgotten_topics_data=[f.ForgottenTopic(partitions=parts, **named(t))
                               for t, parts in forgot.items()])


def _answered(resp, ids=None):
    """{(topic, index): (high watermark, log start, records bytes)} of an answer."""
    names = {v: k for k, v in (ids or {}).items()}
    return {(names.get(t.topic_id, t.topic), p.partition_index):
            (p.high_watermark, p.log_start_offset, len(bytes(p.records)) if p.records else 0)
            for t in resp.responses for p in t.partitions}


async def _setup(start_broker, config=None):
    bound = await start_broker(config or None, topics=LAYOUT)
    client = await WireClient.connect(bound.host, bound.port)
    await client.request(PRODUCE, 9, _produce(*EVERY, count=2))
    return bound, client


async def test_a_session_answers_only_the_partitions_that_changed(start_broker):
    bound, client = await _setup(start_broker)
    ends = {tp: 2 for tp in EVERY}
    first = await client.request(FETCH, 12, _fetch(ends))
    assert first.error_code == ErrorCode.NONE and first.session_id != 0
    assert set(_answered(first)) == set(EVERY)  # a full fetch answers every partition
    session = first.session_id
    quiet = await client.request(FETCH, 12, _fetch({}, session_id=session, epoch=1))
    assert (quiet.error_code, quiet.session_id, quiet.responses) == (0, session, [])
    await client.request(PRODUCE, 9, _produce(("a", 1), ("b", 0)))
    moved = await client.request(FETCH, 12, _fetch({}, session_id=session, epoch=2))
    got = _answered(moved)
    assert set(got) == {("a", 1), ("b", 0)}
    assert all(hw == 3 and size > 0 for hw, _, size in got.values())
    # the client moves its positions; nothing new: nothing answered
    after = await client.request(FETCH, 12, _fetch({("a", 1): 3, ("b", 0): 3},
                                                   session_id=session, epoch=3))
    assert after.responses == []


async def test_a_partition_the_client_did_not_move_is_read_again_from_its_old_position(
        start_broker):
    bound, client = await _setup(start_broker)
    first = await client.request(FETCH, 12, _fetch({tp: 2 for tp in EVERY}))
    await client.request(PRODUCE, 9, _produce(("a", 0)))
    for epoch in (1, 2):  # the session still fetches a-0 from 2: the same records each time
        again = await client.request(FETCH, 12, _fetch({}, session_id=first.session_id,
                                                       epoch=epoch))
        assert [k for k, v in _answered(again).items() if v[2]] == [("a", 0)]


async def test_forgotten_partitions_leave_the_session_and_new_ones_join_it(start_broker):
    bound, client = await _setup(start_broker)
    first = await client.request(FETCH, 12, _fetch({("a", 0): 2, ("a", 1): 2}))
    session = first.session_id
    # b-0 joins (answered at once: the session never answered it), a-0 is forgotten
    joined = await client.request(FETCH, 12, _fetch({("b", 0): 2}, session_id=session, epoch=1,
                                                    forgotten=[("a", 0)]))
    assert set(_answered(joined)) == {("b", 0)}
    await client.request(PRODUCE, 9, _produce(("a", 0), ("a", 1), ("b", 0)))
    later = await client.request(FETCH, 12, _fetch({}, session_id=session, epoch=2))
    assert set(_answered(later)) == {("a", 1), ("b", 0)}


async def test_a_log_start_that_moves_is_answered_without_records(start_broker):
    bound, client = await _setup(start_broker)
    first = await client.request(FETCH, 12, _fetch({tp: 2 for tp in EVERY}))
    bound.broker.topics.catalogue.partition("b", 1).delete_records(1)
    moved = await client.request(FETCH, 12, _fetch({}, session_id=first.session_id, epoch=1))
    assert _answered(moved) == {("b", 1): (2, 1, 0)}


@pytest.mark.parametrize("case", ["unknown session", "wrong epoch", "closed by epoch -1"])
async def test_session_errors_are_top_level_and_leave_the_session_as_it_was(start_broker,
                                                                            case):
    bound, client = await _setup(start_broker)
    first = await client.request(FETCH, 12, _fetch({tp: 2 for tp in EVERY}))
    session = first.session_id
    if case == "unknown session":
        request, code = _fetch({}, session_id=session + 1, epoch=1), \
            ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    elif case == "wrong epoch":
        request, code = _fetch({}, session_id=session, epoch=2), \
            ErrorCode.INVALID_FETCH_SESSION_EPOCH
    else:
        closing = await client.request(FETCH, 12, _fetch({("a", 0): 0}, session_id=session,
                                                         epoch=-1))
        assert closing.session_id == 0 and set(_answered(closing)) == {("a", 0)}
        request, code = _fetch({}, session_id=session, epoch=1), \
            ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    failed = await client.request(FETCH, 12, request)
    assert (failed.error_code, failed.session_id, failed.responses) == (code, 0, [])
    if case != "closed by epoch -1":  # the session goes on at the epoch it expected
        ok = await client.request(FETCH, 12, _fetch({}, session_id=session, epoch=1))
        assert (ok.error_code, ok.session_id) == (0, session)


async def test_a_session_by_topic_ids_refuses_a_fetch_by_names(start_broker):
    bound, client = await _setup(start_broker)
    ids = {t: bound.broker.topics.catalogue.get(t).topic_id for t in LAYOUT}
    first = await client.request(FETCH, 13, _fetch({tp: 2 for tp in EVERY}, ids=ids))
    assert set(_answered(first, ids)) == set(EVERY) and first.session_id
    await client.request(PRODUCE, 9, _produce(("b", 1)))
    by_id = await client.request(FETCH, 13, _fetch({}, session_id=first.session_id, epoch=1,
                                                   ids=ids))
    assert set(_answered(by_id, ids)) == {("b", 1)}
    by_name = await client.request(FETCH, 12, _fetch({}, session_id=first.session_id, epoch=2))
    assert by_name.error_code == ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR


async def test_a_partition_that_returned_records_goes_to_the_end_of_the_session(start_broker):
    bound, client = await _setup(start_broker)
    first = await client.request(FETCH, 12, _fetch({("a", 0): 2, ("a", 1): 2}))
    await client.request(PRODUCE, 9, _produce(("a", 0), ("a", 1)))
    order = []
    for epoch in (1, 2, 3):  # max_bytes 1: the first partition in order gets its one batch
        got = await client.request(FETCH, 12, _fetch({}, session_id=first.session_id,
                                                     epoch=epoch, max_bytes=1))
        order += [k for k, v in _answered(got).items() if v[2]]
    assert order == [("a", 0), ("a", 1), ("a", 0)]


async def test_a_waiting_incremental_fetch_is_woken_and_answers_the_moved_partition(
        start_broker, autojump_clock):
    bound, client = await _setup(start_broker)
    producer = await WireClient.connect(bound.host, bound.port)
    first = await client.request(FETCH, 12, _fetch({tp: 2 for tp in EVERY}))
    result = {}

    async def poll():
        result["resp"] = await client.request(FETCH, 12, _fetch(
            {}, session_id=first.session_id, epoch=1, max_wait_ms=10_000))
        result["at"] = trio.current_time()

    async with trio.open_nursery() as nursery:
        start = trio.current_time()
        nursery.start_soon(poll)
        await trio.sleep(1)
        assert "resp" not in result
        await producer.request(PRODUCE, 9, _produce(("b", 1)))
    assert result["at"] - start < 2
    assert set(_answered(result["resp"])) == {("b", 1)}


async def test_no_slots_no_sessions(start_broker):
    bound, client = await _setup(start_broker, {
        "max.incremental.fetch.session.cache.slots": "0"})
    first = await client.request(FETCH, 12, _fetch({tp: 2 for tp in EVERY}))
    assert first.session_id == 0 and set(_answered(first)) == set(EVERY)
    gone = await client.request(FETCH, 12, _fetch({}, session_id=1, epoch=1))
    assert gone.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


async def test_a_full_cache_makes_room_only_for_a_larger_session(start_broker):
    bound, client = await _setup(start_broker, {
        "max.incremental.fetch.session.cache.slots": "1"})
    small = await client.request(FETCH, 12, _fetch({("a", 0): 2, ("a", 1): 2}))
    assert small.session_id
    same = await client.request(FETCH, 12, _fetch({("b", 0): 2, ("b", 1): 2}))
    assert same.session_id == 0  # not larger: the cache keeps the one it has
    large = await client.request(FETCH, 12, _fetch({tp: 2 for tp in EVERY}))
    assert large.session_id not in (0, small.session_id)
    evicted = await client.request(FETCH, 12, _fetch({}, session_id=small.session_id, epoch=1))
    assert evicted.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
