"""kafka-python 3.x consumer groups against kafka-emu: assignment, rebalance on close, static
membership across a restart (issue 4)."""

from __future__ import annotations

from kafka import KafkaConsumer

from kafka_emu.coordinator import GenerationChanged

from .helpers import (HEARTBEAT_MS, SESSION_TIMEOUT_MS, assert_disjoint_cover,
                      described_assignments, poll_concurrently, settled_split,
                      wait_until)

PARTITIONS = 6


def make_consumer(emu, group_id: str, topic: str, **extra) -> KafkaConsumer:
    consumer = KafkaConsumer(
        bootstrap_servers=emu.bootstrap_servers, group_id=group_id,
        session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_MS,
        auto_offset_reset="earliest", metadata_max_age_ms=1000, **extra)
    consumer.subscribe([topic])
    return consumer


def poll_all(consumers) -> None:
    poll_concurrently(consumers, 20)


def wait_for_split(emu, consumers, group_id, topic, partitions=PARTITIONS):
    """Poll until every consumer holds a non-empty share and the broker agrees (Stable)."""
    return wait_until(lambda: settled_split(emu, consumers, group_id, partitions),
                      tick=lambda: poll_all(consumers), timeout=30,
                      message=f"{len(consumers)} kafka-python consumers to share {topic}")


def generations(events, group_id):
    return [e.generation for e in events if isinstance(e, GenerationChanged) and e.group_id == group_id]


def test_three_consumers_split_partitions_then_one_leaves(kafka_emu_factory, topic_name, group_id):
    emu = kafka_emu_factory(topics={topic_name: PARTITIONS})
    consumers = [make_consumer(emu, group_id, topic_name) for _ in range(3)]
    try:
        mine = wait_for_split(emu, consumers, group_id, topic_name)
        assert_disjoint_cover(mine, topic_name, PARTITIONS)
        assert_disjoint_cover(described_assignments(emu, group_id).values(), topic_name, PARTITIONS)

        consumers.pop().close()
        mine = wait_for_split(emu, consumers, group_id, topic_name)
        assert_disjoint_cover(mine, topic_name, PARTITIONS)
        assert_disjoint_cover(described_assignments(emu, group_id).values(), topic_name, PARTITIONS)
    finally:
        for c in consumers:
            c.close()


def test_static_member_restart_keeps_generation(kafka_emu_factory, topic_name, group_id):
    events = []
    emu = kafka_emu_factory(topics={topic_name: PARTITIONS}, observer=events.append)
    consumers = [make_consumer(emu, group_id, topic_name, group_instance_id=f"static-{i}")
                 for i in range(3)]
    try:
        before = wait_for_split(emu, consumers, group_id, topic_name)
        generation = generations(events, group_id)[-1]

        consumers.pop().close()  # static: no LeaveGroup
        consumers.append(make_consumer(emu, group_id, topic_name, group_instance_id="static-2"))
        after = wait_for_split(emu, consumers, group_id, topic_name)
        assert after == before
        assert generations(events, group_id)[-1] == generation, generations(events, group_id)
        assert emu.describe_group(group_id).state == "Stable"
    finally:
        for c in consumers:
            c.close()


def test_protocol_vote_tie_goes_to_kafkas_hash_order_not_the_alphabet(kafka_emu_factory, topic_name,
                                                                      group_id):
    """Two kafka-python consumers preferring range and sticky in opposite orders tie 1-1. Kafka's
    vote map iterates sticky (bucket 8) before range (bucket 9), so the group runs sticky; the
    emulator used to pick the alphabetically first, range."""
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    emu = kafka_emu_factory(topics={topic_name: PARTITIONS})
    consumers = [
        make_consumer(emu, group_id, topic_name,
                      partition_assignment_strategy=(RangePartitionAssignor,
                                                     StickyPartitionAssignor)),
        make_consumer(emu, group_id, topic_name,
                      partition_assignment_strategy=(StickyPartitionAssignor,
                                                     RangePartitionAssignor)),
    ]
    try:
        mine = wait_for_split(emu, consumers, group_id, topic_name)
        assert_disjoint_cover(mine, topic_name, PARTITIONS)
        assert emu.describe_group(group_id).protocol_data == "sticky"
    finally:
        for c in consumers:
            c.close()
