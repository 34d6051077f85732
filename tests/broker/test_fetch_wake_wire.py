"""A long-poll Fetch woken by an append re-reads only the partitions whose logs moved
(handlers/fetch.py, ``_read_changed``): its answer must be the one a full read gives. Each case
parks a Fetch of five partitions over two topics at their ends, changes the state under it,
wakes it with an append, and compares its answer with an immediate Fetch (max_wait_ms 0) of
the same partitions sent right after, with nothing changed in between."""

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


def _batch(value: bytes, count: int = 1):
    return build_batch([Record(value=value, key=b"k", timestamp_ms=1000)] * count)


def _produce(*targets, count: int = 1):
    """One Produce request appending a batch to each (topic, partition) named."""
    by_topic: dict[str, list] = {}
    for topic, partition in targets:
        by_topic.setdefault(topic, []).append(pr.PartitionProduceData(
            index=partition, records=_batch(f"{topic}{partition}".encode(), count)))
    return pr.ProduceRequest(acks=-1, timeout_ms=1000, topic_data=[
        pr.TopicProduceData(name=t, partition_data=parts) for t, parts in by_topic.items()])


def _fetch(ends, max_wait_ms, max_bytes=1 << 20, min_bytes=1, isolation_level=0):
    return f.FetchRequest(
        max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=max_bytes,
        isolation_level=isolation_level, topics=[
            f.FetchTopic(topic=t, partitions=[
                f.FetchPartition(partition=p, fetch_offset=ends[t, p], partition_max_bytes=1 << 20)
                for p in range(n)]) for t, n in LAYOUT.items()])


async def _woken_and_full(start_broker, change, wake, *, max_bytes=1 << 20, min_bytes=1,
                          isolation_level=0):
    """(the parked Fetch's answer, an immediate Fetch's answer, seconds the first waited)."""
    bound = await start_broker(topics=LAYOUT)
    broker = bound.broker
    consumer = await WireClient.connect(bound.host, bound.port)
    checker = await WireClient.connect(bound.host, bound.port)
    producer = await WireClient.connect(bound.host, bound.port)
    # some history first, so that log starts and high watermarks are not all zero
    await producer.request(PRODUCE, 9, _produce(*((t, p) for t, n in LAYOUT.items()
                                                  for p in range(n)), count=3))
    catalogue = broker.topics.catalogue
    ends = {(t, p): catalogue.partition(t, p).high_watermark
            for t, n in LAYOUT.items() for p in range(n)}
    kwargs = dict(max_bytes=max_bytes, min_bytes=min_bytes, isolation_level=isolation_level)
    result = {}

    async def poll():
        start = trio.current_time()
        result["resp"] = await consumer.request(FETCH, 12, _fetch(ends, 10_000, **kwargs))
        result["waited"] = trio.current_time() - start

    async with trio.open_nursery() as nursery:
        nursery.start_soon(poll)
        await trio.sleep(1)
        await change(broker, producer)
        await trio.sleep(1)
        assert "resp" not in result  # the change alone did not answer it
        await producer.request(PRODUCE, 9, _produce(*wake))
    full = await checker.request(FETCH, 12, _fetch(ends, 0, **kwargs))
    return result["resp"], full, result["waited"]


async def _nothing(broker, producer):
    pass


async def _delete_records(broker, producer):
    log = broker.topics.catalogue.partition("a", 0)  # not woken: its log start moves
    log.delete_records(log.high_watermark)


async def _delete_topic(broker, producer):
    broker.topics.catalogue.delete_topic("b")


async def _append_below_min_bytes(broker, producer):
    # a wake-up that finds too little: the next read is a full one
    await producer.request(PRODUCE, 9, _produce(("a", 2)))


CASES = {
    "one partition moved": (_nothing, [("a", 1)], {}),
    "three moved in one Produce": (_nothing, [("a", 2), ("b", 0), ("b", 1)], {}),
    "max_bytes 1: the first moved partition alone": (
        _nothing, [("a", 2), ("b", 1)], {"max_bytes": 1}),
    "read_committed": (_nothing, [("b", 1)], {"isolation_level": 1}),
    "a log start moved under an unwoken partition": (_delete_records, [("a", 1)], {}),
    "a topic deleted under it": (_delete_topic, [("a", 1)], {}),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_woken_long_poll_fetch_answers_as_a_full_read(start_broker, autojump_clock,
                                                               case):
    change, wake, kwargs = CASES[case]
    woken, full, waited = await _woken_and_full(start_broker, change, wake, **kwargs)
    assert 2 <= waited < 2.5  # woken by the append, not by max_wait_ms
    assert woken == full
    got = {(t.topic, p.partition_index): p for t in woken.responses for p in t.partitions}
    moved = [key for key, p in got.items() if p.records]
    assert moved == (wake[:1] if kwargs.get("max_bytes") == 1 else
                     [key for key in wake if key[0] in LAYOUT and key in got])
    if change is _delete_topic:
        assert {got["b", p].error_code for p in range(2)} == {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    if change is _delete_records:
        assert got["a", 0].log_start_offset == got["a", 0].high_watermark == 3


async def test_a_fetch_woken_below_min_bytes_reads_everything_on_the_next_wake(
        start_broker, autojump_clock):
    # min_bytes of two batches: the first append (a/2) is not enough, the second (b/0) is
    woken, full, waited = await _woken_and_full(
        start_broker, _append_below_min_bytes, [("b", 0)], min_bytes=2 * len(_batch(b"a2")))
    assert 2 <= waited < 2.5
    assert woken == full
    assert [(t.topic, p.partition_index) for t in woken.responses for p in t.partitions
            if p.records] == [("a", 2), ("b", 0)]


@pytest.mark.parametrize("change", [_nothing, _delete_records, _delete_topic])
async def test_a_long_poll_fetch_that_times_out_answers_as_a_full_read(start_broker,
                                                                       autojump_clock, change):
    # nothing wakes it (a log start that moves, a topic deleted: no append): at max_wait_ms it
    # answers what a full read gives then
    bound = await start_broker(topics=LAYOUT)
    consumer = await WireClient.connect(bound.host, bound.port)
    checker = await WireClient.connect(bound.host, bound.port)
    producer = await WireClient.connect(bound.host, bound.port)
    await producer.request(PRODUCE, 9, _produce(*((t, p) for t, n in LAYOUT.items()
                                                  for p in range(n)), count=3))
    ends = {(t, p): 3 for t, n in LAYOUT.items() for p in range(n)}
    result = {}

    async def poll():
        start = trio.current_time()
        result["resp"] = await consumer.request(FETCH, 12, _fetch(ends, 5_000))
        result["waited"] = trio.current_time() - start

    async with trio.open_nursery() as nursery:
        nursery.start_soon(poll)
        await trio.sleep(1)
        await change(bound.broker, producer)
    full = await checker.request(FETCH, 12, _fetch(ends, 0))
    assert 5 <= result["waited"] < 5.5
    assert result["resp"] == full
    if change is _delete_records:
        a0 = [p for t in full.responses for p in t.partitions if t.topic == "a"][0]
        assert a0.log_start_offset == 3
