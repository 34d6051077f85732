"""End to end with aiokafka's transactional producer: send_offsets_to_transaction with a group id
(TxnOffsetCommit v0-1, no generation: KIP-447 fencing does not apply) inside a transaction; the
offsets become visible only when it commits, and an aborted one is hidden from a read_committed
aiokafka consumer. Each test runs its own asyncio loop (the suite is in trio mode)."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from kafka_emu.broker.handlers._index import INDEX

from .helpers import unique

pytestmark = pytest.mark.skipif(not {24, 25, 26} <= set(INDEX),
                                reason="the transaction coordinator's APIs are not served yet")


async def committed(emu, group: str, tp: TopicPartition) -> int | None:
    c = AIOKafkaConsumer(bootstrap_servers=emu.bootstrap_servers, group_id=group,
                         enable_auto_commit=False)
    await c.start()
    try:
        return await c.committed(tp)
    finally:
        await c.stop()


async def read_all(emu, topic: str, isolation: str) -> list[bytes]:
    c = AIOKafkaConsumer(bootstrap_servers=emu.bootstrap_servers, isolation_level=isolation,
                         auto_offset_reset="earliest", enable_auto_commit=False)
    await c.start()
    try:
        c.assign([TopicPartition(topic, 0)])
        await c.seek_to_beginning()
        batches = await c.getmany(timeout_ms=2000)
        got = [m.value for ms in batches.values() for m in ms]
        while True:  # until a poll brings nothing more
            more = await c.getmany(timeout_ms=500)
            if not more:
                return got
            got += [m.value for ms in more.values() for m in ms]
    finally:
        await c.stop()


def test_aiokafka_send_offsets_commit_then_abort(kafka_emu_factory):
    src, dst, group = unique("in"), unique("out"), unique("g")
    emu = kafka_emu_factory(topics={src: 1, dst: 1})
    tp = TopicPartition(src, 0)

    async def main():
        producer = AIOKafkaProducer(bootstrap_servers=emu.bootstrap_servers,
                                    transactional_id=unique("tx"))
        await producer.start()
        try:
            async with producer.transaction():
                await producer.send_and_wait(dst, b"one", partition=0)
                await producer.send_offsets_to_transaction({tp: OffsetAndMetadata(7, "")}, group)
                assert await committed(emu, group, tp) is None  # pending
            assert await committed(emu, group, tp) == 7

            await producer.begin_transaction()
            await producer.send_and_wait(dst, b"two", partition=0)
            await producer.send_offsets_to_transaction({tp: OffsetAndMetadata(9, "")}, group)
            await producer.abort_transaction()
            assert await committed(emu, group, tp) == 7
        finally:
            await producer.stop()
        assert await read_all(emu, dst, "read_committed") == [b"one"]
        assert await read_all(emu, dst, "read_uncommitted") == [b"one", b"two"]

    asyncio.run(main())
