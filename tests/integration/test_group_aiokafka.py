"""aiokafka consumer groups against kafka-emu: assignment, rebalance on stop, static membership
across a restart (issue 4). Each test runs its own asyncio loop (the suite is in trio mode)."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer

from kafka_emu.coordinator import GenerationChanged

from .helpers import (HEARTBEAT_MS, SESSION_TIMEOUT_MS, assert_disjoint_cover,
                      client_assignments, described_assignments, settled_split)

PARTITIONS = 6


async def start_consumer(emu, group_id: str, topic: str, **extra) -> AIOKafkaConsumer:
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=emu.bootstrap_servers, group_id=group_id,
        session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_MS,
        auto_offset_reset="earliest", metadata_max_age_ms=1000, **extra)
    await consumer.start()
    return consumer


async def wait_for_split(emu, consumers, group_id, topic, timeout=30.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        mine = settled_split(emu, consumers, group_id, PARTITIONS)
        if mine is not None:
            return mine
        if loop.time() > deadline:
            raise AssertionError(f"aiokafka consumers never shared {topic}: "
                                 f"{client_assignments(consumers)}, "
                                 f"broker {emu.describe_group(group_id)}")
        await asyncio.sleep(0.05)


def generations(events, group_id):
    return [e.generation for e in events if isinstance(e, GenerationChanged) and e.group_id == group_id]


def test_three_consumers_split_partitions_then_one_leaves(kafka_emu_factory, topic_name, group_id):
    emu = kafka_emu_factory(topics={topic_name: PARTITIONS})

    async def main():
        consumers = [await start_consumer(emu, group_id, topic_name) for _ in range(3)]
        try:
            mine = await wait_for_split(emu, consumers, group_id, topic_name)
            assert_disjoint_cover(mine, topic_name, PARTITIONS)
            assert_disjoint_cover(described_assignments(emu, group_id).values(), topic_name, PARTITIONS)

            await consumers.pop().stop()
            mine = await wait_for_split(emu, consumers, group_id, topic_name)
            assert_disjoint_cover(mine, topic_name, PARTITIONS)
            assert_disjoint_cover(described_assignments(emu, group_id).values(), topic_name, PARTITIONS)
        finally:
            for c in consumers:
                await c.stop()

    asyncio.run(main())


def test_static_member_restart_keeps_generation(kafka_emu_factory, topic_name, group_id):
    events = []
    emu = kafka_emu_factory(topics={topic_name: PARTITIONS}, observer=events.append)

    async def main():
        consumers = [await start_consumer(emu, group_id, topic_name, group_instance_id=f"static-{i}")
                     for i in range(3)]
        try:
            before = await wait_for_split(emu, consumers, group_id, topic_name)
            generation = generations(events, group_id)[-1]

            await consumers.pop().stop()  # static: no LeaveGroup
            consumers.append(await start_consumer(emu, group_id, topic_name,
                                                  group_instance_id="static-2"))
            after = await wait_for_split(emu, consumers, group_id, topic_name)
            assert after == before
            assert generations(events, group_id)[-1] == generation, generations(events, group_id)
            assert emu.describe_group(group_id).state == "Stable"
        finally:
            for c in consumers:
                await c.stop()

    asyncio.run(main())
