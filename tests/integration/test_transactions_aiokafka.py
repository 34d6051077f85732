"""aiokafka's transactional producer (AIOKafkaProducer(transactional_id=...)) against the
transaction coordinator: a committed and an aborted transaction read back with read_committed,
send_offsets_to_transaction, and fencing by a second producer with the same id. Each test runs
its own asyncio loop (the suite runs in trio mode)."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import ProducerFenced

from .helpers import unique

TIMEOUT = 30.0


def txn_producer(emu, tid: str) -> AIOKafkaProducer:
    return AIOKafkaProducer(bootstrap_servers=emu.bootstrap_servers, transactional_id=tid,
                            request_timeout_ms=int(TIMEOUT * 1000))


async def read_committed(emu, topic: str, want: int) -> list[bytes]:
    c = AIOKafkaConsumer(bootstrap_servers=emu.bootstrap_servers,
                         isolation_level="read_committed", enable_auto_commit=False,
                         auto_offset_reset="earliest", fetch_max_wait_ms=100)
    await c.start()
    try:
        c.assign([TopicPartition(topic, 0)])
        await c.seek_to_beginning()
        got: list[bytes] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while len(got) < want and loop.time() < deadline:
            for records in (await c.getmany(timeout_ms=100)).values():
                got += [r.value for r in records]
        for _ in range(5):  # anything more would be a record that should not be seen
            for records in (await c.getmany(timeout_ms=100)).values():
                got += [r.value for r in records]
        return got
    finally:
        await c.stop()


def test_commit_and_abort(kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 1})

    async def run():
        p = txn_producer(emu, tid)
        await p.start()
        try:
            async with p.transaction():
                await p.send_and_wait(topic, b"one", partition=0)
                await p.send_and_wait(topic, b"two", partition=0)
            with pytest.raises(RuntimeError):
                async with p.transaction():
                    await p.send_and_wait(topic, b"aborted", partition=0)
                    raise RuntimeError("the application gives up")  # aborts the transaction
            async with p.transaction():
                await p.send_and_wait(topic, b"three", partition=0)
        finally:
            await p.stop()
        return await read_committed(emu, topic, 3)

    assert asyncio.run(run()) == [b"one", b"two", b"three"]


def test_send_offsets_to_transaction(kafka_emu_factory):
    topic, tid, group = unique("t"), unique("tx"), unique("g")
    emu = kafka_emu_factory(topics={topic: 1})

    async def run():
        p = txn_producer(emu, tid)
        await p.start()
        try:
            async with p.transaction():
                await p.send_and_wait(topic, b"x", partition=0)
                await p.send_offsets_to_transaction({TopicPartition(topic, 0): 42}, group)
        finally:
            await p.stop()
        c = AIOKafkaConsumer(bootstrap_servers=emu.bootstrap_servers, group_id=group,
                             enable_auto_commit=False)
        await c.start()
        try:
            return await c.committed(TopicPartition(topic, 0))
        finally:
            await c.stop()

    assert asyncio.run(run()) == 42


def test_second_producer_fences_the_first(kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 1})

    async def run():
        first, second = txn_producer(emu, tid), txn_producer(emu, tid)
        await first.start()
        try:
            await first.begin_transaction()
            await first.send_and_wait(topic, b"zombie", partition=0)
            await second.start()  # InitProducerId: aborts the open transaction, bumps the epoch
            with pytest.raises(ProducerFenced):
                await first.commit_transaction()
            async with second.transaction():
                await second.send_and_wait(topic, b"live", partition=0)
        finally:
            await first.stop()
            await second.stop()
        return await read_committed(emu, topic, 1)

    assert asyncio.run(run()) == [b"live"]


def test_transaction_timeout_on_the_emulators_clock_fences(kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 1}, clock="manual")

    async def run():
        p = AIOKafkaProducer(bootstrap_servers=emu.bootstrap_servers, transactional_id=tid,
                             transaction_timeout_ms=2000)
        await p.start()
        try:
            await p.begin_transaction()
            await p.send_and_wait(topic, b"late", partition=0)
            # timed out after 2 s; found by the coordinator's check at 10 s
            await asyncio.get_running_loop().run_in_executor(None, emu.advance, 10_000)
            with pytest.raises(ProducerFenced):
                await p.commit_transaction()
        finally:
            await p.stop()
        # the abort marker moved the LSO past "late": the next transaction is readable
        nxt = txn_producer(emu, tid)
        await nxt.start()
        try:
            async with nxt.transaction():
                await nxt.send_and_wait(topic, b"next", partition=0)
        finally:
            await nxt.stop()
        return await read_committed(emu, topic, 1)

    assert asyncio.run(run()) == [b"next"]
