"""confluent-kafka (librdkafka) consumer groups against kafka-emu: assignment, rebalance on
close, static membership across a restart (issue 4)."""

from __future__ import annotations

from confluent_kafka import Consumer

from kafka_emu.coordinator import GenerationChanged

from .helpers import (HEARTBEAT_MS, SESSION_TIMEOUT_MS, assert_disjoint_cover,
                      described_assignments, settled_split, wait_until)

PARTITIONS = 6


def make_consumer(emu, group_id: str, topic: str, **extra) -> Consumer:
    conf = {
        "bootstrap.servers": emu.bootstrap_servers,
        "group.id": group_id,
        "session.timeout.ms": SESSION_TIMEOUT_MS,
        "heartbeat.interval.ms": HEARTBEAT_MS,
        "auto.offset.reset": "earliest",
        "topic.metadata.refresh.interval.ms": 1000,
    }
    conf.update(extra)
    consumer = Consumer(conf)
    consumer.subscribe([topic])
    return consumer


def poll_all(consumers, timeout: float = 0.05) -> None:
    for c in consumers:
        c.poll(timeout)


def wait_for_split(emu, consumers, group_id, topic, partitions=PARTITIONS):
    """Poll until every consumer holds a non-empty share and the broker agrees (Stable)."""
    return wait_until(lambda: settled_split(emu, consumers, group_id, partitions),
                      tick=lambda: poll_all(consumers), timeout=30,
                      message=f"{len(consumers)} confluent consumers to share {topic}")


def test_three_consumers_split_partitions_then_one_leaves(kafka_emu_factory, topic_name, group_id):
    emu = kafka_emu_factory(topics={topic_name: PARTITIONS})
    consumers = [make_consumer(emu, group_id, topic_name) for _ in range(3)]
    try:
        mine = wait_for_split(emu, consumers, group_id, topic_name)
        assert_disjoint_cover(mine, topic_name, PARTITIONS)
        assert_disjoint_cover(described_assignments(emu, group_id).values(), topic_name, PARTITIONS)

        consumers.pop().close()  # sends LeaveGroup: the survivors rebalance at once
        mine = wait_for_split(emu, consumers, group_id, topic_name)
        assert_disjoint_cover(mine, topic_name, PARTITIONS)
        assert_disjoint_cover(described_assignments(emu, group_id).values(), topic_name, PARTITIONS)
    finally:
        for c in consumers:
            c.close()


def test_static_member_restart_keeps_generation(kafka_emu_factory, topic_name, group_id):
    events = []
    emu = kafka_emu_factory(topics={topic_name: PARTITIONS}, observer=events.append)
    consumers = [make_consumer(emu, group_id, topic_name, **{"group.instance.id": f"static-{i}"})
                 for i in range(3)]
    try:
        before = wait_for_split(emu, consumers, group_id, topic_name)
        generations = [e.generation for e in events
                       if isinstance(e, GenerationChanged) and e.group_id == group_id]
        assert generations, "no GenerationChanged event observed"
        generation = generations[-1]

        # A static member does not send LeaveGroup on close; its replacement with the same
        # group.instance.id takes over the old member id's assignment without a rebalance.
        consumers.pop().close()
        consumers.append(make_consumer(emu, group_id, topic_name,
                                       **{"group.instance.id": "static-2"}))
        after = wait_for_split(emu, consumers, group_id, topic_name)
        assert after == before
        generations = [e.generation for e in events
                       if isinstance(e, GenerationChanged) and e.group_id == group_id]
        assert generations[-1] == generation, f"generation moved: {generations}"
        assert emu.describe_group(group_id).state == "Stable"
    finally:
        for c in consumers:
            c.close()
