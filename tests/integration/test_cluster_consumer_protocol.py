"""KIP-848 consumer groups on a 3-broker kafka-emu (issue #13): confluent-kafka consumers with
group.protocol=consumer keep consuming across a coordinator move and a rolling bounce of every
broker. The new coordinator reloads the group as its records hold it, so every member keeps its
id and epoch and the group epoch never moves (no reassignment), and no record is lost or read
twice."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer

from kafka_emu.testing import make_config, run_in_thread

from .helpers import unique, wait_until

if tuple(int(x) for x in __import__("confluent_kafka").libversion()[0].split(".")[:2]) < (2, 4):
    pytest.skip("librdkafka < 2.4 has no group.protocol=consumer", allow_module_level=True)

PARTITIONS = 6
CONSUMERS = 3
SETTINGS = {"emu.coordinator.load.time.ms": 300,
            "group.consumer.min.heartbeat.interval.ms": 100,
            "group.consumer.heartbeat.interval.ms": 500}


@pytest.fixture
def cluster():
    with run_in_thread(make_config(SETTINGS, brokers=3)) as emu:
        yield emu


class Run:
    def __init__(self, emu, topic, group):
        self.emu, self.topic, self.group = emu, topic, group
        self.producer = Producer({"bootstrap.servers": emu.bootstrap_servers,
                                  "enable.idempotence": True, "linger.ms": 5})
        self.consumers = []
        for _ in range(CONSUMERS):
            c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
                          "group.protocol": "consumer", "auto.offset.reset": "earliest",
                          "enable.auto.commit": True, "auto.commit.interval.ms": 200})
            c.subscribe([topic])
            self.consumers.append(c)
        self.seen: list[int] = []
        self.produced = 0

    def produce(self, n):
        """n records spread over every partition (not stuck to one, as keyless records are):
        once they are all consumed, every member is fetching every partition it owns."""
        for v in range(self.produced, self.produced + n):
            self.producer.produce(self.topic, str(v).encode(), partition=v % PARTITIONS)
        assert self.producer.flush(60) == 0
        self.produced += n

    def tick(self):
        for c in self.consumers:
            self.seen.extend(int(m.value()) for m in c.consume(100, 0.05) if m.error() is None)

    def consume_all(self):
        wait_until(lambda: len(set(self.seen)) >= self.produced, timeout=90, tick=self.tick,
                   message=f"{self.produced} records consumed")

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.tick()

    def settle(self):
        """Every member fetching every partition of its (final) assignment: one record on each
        partition, all consumed. Until a member has its committed offsets it has an OffsetFetch
        in flight, and if the coordinator moves meanwhile, the old one answers NOT_COORDINATOR
        (as Kafka does) and librdkafka never asks again nor starts fetching those partitions
        (confluentinc/librdkafka#5586, a client bug): the group would stall for reasons that
        are not this test's."""
        self.produce(PARTITIONS)
        self.consume_all()

    def epochs(self):
        """(group epoch, {member id: member epoch}) once the group is Stable with everyone."""
        def settled():
            g = self.emu.describe_consumer_group(self.group)
            if g.state == "Stable" and len(g.members) == CONSUMERS:
                return g.group_epoch, {m.member_id: m.member_epoch for m in g.members}
            return None
        return wait_until(settled, timeout=60, tick=self.tick, message="a stable consumer group")

    def close(self):
        for c in self.consumers:
            c.close()


def test_a_consumer_group_keeps_its_epochs_across_a_coordinator_move_and_a_rolling_bounce(
        cluster):
    emu = cluster
    topic, group = unique("kip848-moved"), unique("kip848")
    emu.create_topic(topic, PARTITIONS, replication_factor=3)
    run = Run(emu, topic, group)
    try:
        run.produce(150)
        run.consume_all()
        before = run.epochs()
        run.settle()
        old = emu.coordinator_of(group)
        emu.move_coordinator(group, old % 3 + 1)
        run.produce(150)
        run.consume_all()
        run.spin(1.5)  # heartbeats and commits against the new coordinator
        assert emu.coordinator_of(group) == old % 3 + 1
        assert run.epochs() == before  # reloaded: same members, same epochs, no new target
        for node_id in (1, 2, 3):
            emu.stop_broker(node_id)
            run.produce(60)
            run.spin(0.5)
            emu.start_broker(node_id)
            run.consume_all()
        run.spin(1.5)
        assert run.epochs() == before
    finally:
        run.close()
    assert sorted(run.seen) == list(range(run.produced))  # none lost, none read twice


def test_members_are_not_fenced_while_their_group_loads_longer_than_a_session(kafka_emu_factory):
    """The old coordinator stops the group's timers and the new one restarts them when the load
    ends, so a load longer than the session timeout fences nobody (members cannot heartbeat
    while it lasts: COORDINATOR_LOAD_IN_PROGRESS)."""
    emu = kafka_emu_factory({**SETTINGS, "group.consumer.min.session.timeout.ms": 1000,
                             "group.consumer.session.timeout.ms": 3000}, brokers=3)
    topic, group = unique("kip848-slow"), unique("kip848-slow")
    emu.create_topic(topic, PARTITIONS, replication_factor=3)
    run = Run(emu, topic, group)
    try:
        run.produce(60)
        run.consume_all()
        before = run.epochs()
        run.settle()
        old = emu.coordinator_of(group)
        emu.move_coordinator(group, old % 3 + 1, load_ms=6000)
        run.spin(7.0)
        run.produce(60)
        run.consume_all()
        assert run.epochs() == before
    finally:
        run.close()
    assert sorted(run.seen) == list(range(run.produced))
