"""aiokafka data path against kafka-emu (issue 5): compressed round trips with keys, headers and
timestamps, exactly-once group consumption with committed-offset resume, auto.offset.reset and
offsets_for_times. Each test runs its own asyncio loop (the suite runs in trio mode)."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from .data import COMPRESSIONS, COUNT, PARTITIONS, base_timestamp_ms, check_stream, message
from .helpers import HEARTBEAT_MS, SESSION_TIMEOUT_MS, stable_assignment, unique


async def producer(emu, **extra) -> AIOKafkaProducer:
    p = AIOKafkaProducer(bootstrap_servers=emu.bootstrap_servers, linger_ms=5, **extra)
    await p.start()
    return p


async def consumer(emu, *topics, **extra) -> AIOKafkaConsumer:
    extra.setdefault("session_timeout_ms", SESSION_TIMEOUT_MS)
    extra.setdefault("heartbeat_interval_ms", HEARTBEAT_MS)
    c = AIOKafkaConsumer(*topics, bootstrap_servers=emu.bootstrap_servers, fetch_max_wait_ms=100,
                         metadata_max_age_ms=1000, **extra)
    await c.start()
    return c


async def drain(consumers, want: int, timeout: float = 20.0) -> list:
    got: list = []
    deadline = asyncio.get_running_loop().time() + timeout
    while len(got) < want:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {want} records (have {len(got)})")
        for c in consumers:
            for recs in (await c.getmany(timeout_ms=50)).values():
                got.extend(recs)
    return got


async def assert_quiet(consumers, seconds: float = 0.3) -> None:
    for c in consumers:
        extra = await c.getmany(timeout_ms=int(seconds * 1000))
        assert not extra, f"unexpected records: {extra}"


async def wait_for(predicate, message: str, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_round_trip_keeps_keys_headers_timestamps_and_order(kafka_emu_factory, compression):
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: PARTITIONS})
    base = base_timestamp_ms()

    async def main():
        p = await producer(emu, compression_type=None if compression == "none" else compression)
        try:
            futures = []
            for i in range(COUNT):
                part, key, value, headers, ts = message(i, base)
                futures.append(await p.send(topic, value=value, key=key, partition=part,
                                            timestamp_ms=ts, headers=headers))
            await asyncio.wait_for(asyncio.gather(*futures), 20)
        finally:
            await p.stop()
        c = await consumer(emu, auto_offset_reset="earliest")
        try:
            c.assign([TopicPartition(topic, i) for i in range(PARTITIONS)])
            return await drain([c], COUNT)
        finally:
            await c.stop()

    got = asyncio.run(main())
    check_stream([(r.partition, r.offset, r.key, r.value, list(r.headers), r.timestamp)
                  for r in got], base)


def test_group_of_three_consumes_exactly_once_then_new_member_resumes(kafka_emu_factory):
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 6})

    async def main():
        members = [await consumer(emu, topic, group_id=group, auto_offset_reset="earliest",
                                  enable_auto_commit=False) for _ in range(3)]
        await wait_for(lambda: stable_assignment(emu, group, 3)
                       and all(m.assignment() for m in members), "group of three")
        p = await producer(emu)
        for i in range(600):
            await p.send(topic, value=f"old-{i}".encode(), partition=i % 6)
        await p.flush()
        got = await drain(members, 600)
        await assert_quiet(members)
        assert len({(r.partition, r.offset) for r in got}) == 600
        assert sorted(r.value for r in got) == sorted(f"old-{i}".encode() for i in range(600))
        for m in members:
            await m.commit()
            await m.stop()
        assert emu.describe_group(group).state == "Empty"

        for i in range(60):
            await p.send(topic, value=f"new-{i}".encode(), partition=i % 6)
        await p.flush()
        await p.stop()
        late = await consumer(emu, topic, group_id=group, auto_offset_reset="earliest",
                              enable_auto_commit=False)
        try:
            got = await drain([late], 60)
            await assert_quiet([late])
        finally:
            await late.stop()
        assert sorted(r.value for r in got) == sorted(f"new-{i}".encode() for i in range(60))

    asyncio.run(main())


@pytest.mark.parametrize("reset", ["earliest", "latest"])
def test_auto_offset_reset(kafka_emu_factory, reset):
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 1})

    async def main():
        p = await producer(emu)
        for i in range(10):
            await p.send(topic, value=b"before-%d" % i)
        await p.flush()
        c = await consumer(emu, topic, group_id=group, auto_offset_reset=reset)
        try:
            await wait_for(lambda: c.assignment(), "assignment")
            tp = TopicPartition(topic, 0)
            seen = []
            if reset == "latest":
                assert await c.position(tp) == 10
            else:
                seen.extend(r.value for r in await drain([c], 10))
            for i in range(5):
                await p.send(topic, value=b"after-%d" % i)
            await p.flush()
            seen.extend(r.value for r in await drain([c], 5))
        finally:
            await c.stop()
            await p.stop()
        expected = [b"before-%d" % i for i in range(10)] if reset == "earliest" else []
        assert seen == expected + [b"after-%d" % i for i in range(5)]

    asyncio.run(main())


def test_offsets_for_times_and_seek(kafka_emu_factory):
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: 1})
    base = base_timestamp_ms()

    async def main():
        p = await producer(emu)
        for i in range(100):
            await p.send(topic, value=b"%d" % i, timestamp_ms=base + i * 1000)
        await p.flush()
        await p.stop()
        c = await consumer(emu)
        try:
            tp = TopicPartition(topic, 0)
            c.assign([tp])
            found = (await c.offsets_for_times({tp: base + 41_500}))[tp]
            assert (found.offset, found.timestamp) == (42, base + 42_000)
            assert (await c.offsets_for_times({tp: base + 1_000_000}))[tp] is None
            assert (await c.end_offsets([tp]))[tp] == 100
            c.seek(tp, found.offset)
            got = await drain([c], 58)
        finally:
            await c.stop()
        assert [int(r.value) for r in got] == list(range(42, 100))

    asyncio.run(main())
