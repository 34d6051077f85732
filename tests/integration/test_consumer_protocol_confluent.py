"""confluent-kafka (librdkafka >= 2.4) with group.protocol=consumer (KIP-848) against kafka-emu:
server-side assignment, revoke-before-assign with no partition owned twice at any moment, a
member leaving, a member SIGKILLed (its partitions move after the session timeout), commits with
member epochs, a regex subscription, static membership, and the admin client's
ConsumerGroupDescribe/ListGroups view. kafkajs has no KIP-848 support (its consumer only speaks
JoinGroup/SyncGroup), so librdkafka is the real client here."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from .helpers import wait_until

PARTITIONS = 6
PER_PARTITION = 10
# The broker's KIP-848 timing, lowered from Kafka's 45 s session so a killed member goes quickly.
SETTINGS = {"group.consumer.min.session.timeout.ms": 1000,
            "group.consumer.session.timeout.ms": 6000,
            "group.consumer.min.heartbeat.interval.ms": 100,
            "group.consumer.heartbeat.interval.ms": 500}

if tuple(int(x) for x in __import__("confluent_kafka").libversion()[0].split(".")[:2]) < (2, 4):
    pytest.skip("librdkafka < 2.4 has no group.protocol=consumer", allow_module_level=True)


def make_consumer(emu, group_id, **extra) -> Consumer:
    conf = {"bootstrap.servers": emu.bootstrap_servers, "group.id": group_id,
            "group.protocol": "consumer", "auto.offset.reset": "earliest",
            "enable.auto.commit": False}
    conf.update(extra)
    return Consumer(conf)


def produce(emu, topic, partitions=PARTITIONS, per_partition=PER_PARTITION) -> None:
    producer = Producer({"bootstrap.servers": emu.bootstrap_servers})
    for p in range(partitions):
        for i in range(per_partition):
            producer.produce(topic, value=f"{p}-{i}".encode(), partition=p)
    assert producer.flush(10) == 0


class Child:
    """A consumer in a child process, reporting what it owns line by line."""

    def __init__(self, emu, group_id, topic) -> None:
        script = Path(__file__).with_name("consumer_protocol_child.py")
        self.proc = subprocess.Popen([sys.executable, str(script), emu.bootstrap_servers, group_id,
                                      topic], stdout=subprocess.PIPE, text=True)
        self.owned: set[tuple[str, int]] = set()
        self.committed: dict[tuple[str, int], int] = {}
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.strip())

    def update(self) -> None:
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return
            kind, _, rest = line.partition(" ")
            if kind == "ASSIGN":
                self.owned = {(t, int(p)) for t, p in (x.split(":") for x in rest.split(",") if x)}
            elif kind == "COMMIT":
                tp, offset = rest.split("=")
                t, p = tp.split(":")
                self.committed[(t, int(p))] = int(offset)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)


class Watch:
    """Polls the in-process consumers, commits what they read, and checks after every tick that
    no partition is owned by two live members (in-process ones and the child's last report)."""

    def __init__(self, consumers, child=None) -> None:
        self.consumers = list(consumers)
        self.child = child
        self.consumed: dict[tuple[str, int], int] = {}
        self.overlaps: list = []

    def tick(self) -> None:
        for c in self.consumers:
            msg = c.poll(0.02)
            if msg is not None and msg.error() is None:
                tp = (msg.topic(), msg.partition())
                self.consumed[tp] = msg.offset() + 1
                c.commit(offsets=[TopicPartition(msg.topic(), msg.partition(), msg.offset() + 1)],
                         asynchronous=False)
        owned = [{(tp.topic, tp.partition) for tp in c.assignment()} for c in self.consumers]
        if self.child is not None:
            self.child.update()
            owned.append(set(self.child.owned))
        seen: set = set()
        for o in owned:
            if seen & o:
                self.overlaps.append(sorted(seen & o))
            seen |= o

    def owned(self):
        return [{(tp.topic, tp.partition) for tp in c.assignment()} for c in self.consumers]


def settled(emu, group_id, members, topic, parts=PARTITIONS):
    """The broker's Stable view with `members` members covering every partition once."""
    d = emu.describe_consumer_group(group_id)
    if d.error != 0 or d.state != "Stable" or len(d.members) != members:
        return None
    owned = [{(t, p) for t, ps in m.assignment for p in ps} for m in d.members]
    if any(not o for o in owned) or sum(map(len, owned)) != parts:
        return None
    if set().union(*owned) != {(topic, p) for p in range(parts)}:
        return None
    return d


def test_three_members_share_one_leaves_one_is_killed(kafka_emu_factory, topic_name, group_id):
    emu = kafka_emu_factory(SETTINGS, topics={topic_name: PARTITIONS})
    produce(emu, topic_name)
    child = Child(emu, group_id, topic_name)
    consumers = [make_consumer(emu, group_id) for _ in range(2)]
    for c in consumers:
        c.subscribe([topic_name])
    watch = Watch(consumers, child)
    try:
        first = wait_until(lambda: settled(emu, group_id, 3, topic_name), tick=watch.tick,
                           timeout=60, message="three KIP-848 members to share the topic")
        assert first.assignor_name == "uniform" and first.group_epoch == first.assignment_epoch
        # the clients agree with the broker
        wait_until(lambda: all(watch.owned()) and child.owned, tick=watch.tick, timeout=30,
                   message="every client to own its share")

        leaver = consumers.pop()
        watch.consumers = consumers
        leaver.close()  # ConsumerGroupHeartbeat with epoch -1: the others take over at once
        after_leave = wait_until(lambda: settled(emu, group_id, 2, topic_name), tick=watch.tick,
                                 timeout=60, message="two members after a leave")
        assert after_leave.group_epoch > first.group_epoch

        watch.tick()
        child.kill()  # no leave: only the session timeout removes it
        watch.child = None  # its last report is stale from now on (a dead process owns nothing)
        killed_at = time.monotonic()
        alone = wait_until(lambda: settled(emu, group_id, 1, topic_name), tick=watch.tick,
                           timeout=60, message="the survivor to own everything")
        assert time.monotonic() - killed_at >= 5.0  # not before the 6 s session timeout
        assert alone.group_epoch > after_leave.group_epoch
        wait_until(lambda: len(watch.owned()[0]) == PARTITIONS, tick=watch.tick, timeout=30,
                   message="the survivor's client to own every partition")

        # everything gets consumed and committed once the survivor has caught up
        wait_until(lambda: all(watch.consumed.get((topic_name, p), 0) == PER_PARTITION
                               or child.committed.get((topic_name, p)) == PER_PARTITION
                               for p in range(PARTITIONS)),
                   tick=watch.tick, timeout=60, message="all records consumed")
        committed = consumers[0].committed(
            [TopicPartition(topic_name, p) for p in range(PARTITIONS)], timeout=10)
        assert [tp.offset for tp in committed] == [PER_PARTITION] * PARTITIONS
        assert watch.overlaps == [], f"partitions owned twice at once: {watch.overlaps[:5]}"
    finally:
        if child.proc.poll() is None:
            child.kill()
        for c in consumers:
            c.close()


def test_admin_client_describes_and_lists_the_consumer_group(kafka_emu_factory, topic_name,
                                                             group_id):
    emu = kafka_emu_factory(SETTINGS, topics={topic_name: 4})
    consumers = [make_consumer(emu, group_id, **{"group.remote.assignor": "range"})
                 for _ in range(2)]
    for c in consumers:
        c.subscribe([topic_name])
    watch = Watch(consumers)
    try:
        wait_until(lambda: settled(emu, group_id, 2, topic_name, 4), tick=watch.tick, timeout=60,
                   message="two members")
        admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
        desc = admin.describe_consumer_groups([group_id])[group_id].result(10)
        assert desc.type.name == "CONSUMER" and desc.state.name == "STABLE"
        assert desc.partition_assignor == "range"
        got = sorted(sorted(tp.partition for tp in m.assignment.topic_partitions)
                     for m in desc.members)
        assert got == [[0, 1], [2, 3]]  # range: consecutive partitions
        listed = admin.list_consumer_groups().result(10).valid
        assert [(g.group_id, g.type.name) for g in listed] == [(group_id, "CONSUMER")]
    finally:
        for c in consumers:
            c.close()


def test_regex_subscription_picks_up_new_topic(kafka_emu_factory, group_id):
    emu = kafka_emu_factory(SETTINGS, topics={"metrics-a": 2, "other": 2})
    consumer = make_consumer(emu, group_id, **{"topic.metadata.refresh.interval.ms": 500})
    consumer.subscribe(["^metrics-.*"])
    watch = Watch([consumer])
    try:
        wait_until(lambda: watch.owned()[0] == {("metrics-a", 0), ("metrics-a", 1)},
                   tick=watch.tick, timeout=60, message="the regex's first topic")
        emu.create_topic("metrics-b", 1)
        wait_until(lambda: ("metrics-b", 0) in watch.owned()[0], tick=watch.tick, timeout=60,
                   message="the new matching topic")
        assert not any(t == "other" for t, _ in watch.owned()[0])
    finally:
        consumer.close()


def test_static_member_restart_takes_over_without_rebalance(kafka_emu_factory, topic_name,
                                                            group_id):
    emu = kafka_emu_factory(SETTINGS, topics={topic_name: PARTITIONS})
    consumers = [make_consumer(emu, group_id, **{"group.instance.id": f"static-{i}"})
                 for i in range(2)]
    for c in consumers:
        c.subscribe([topic_name])
    watch = Watch(consumers)
    try:
        before = wait_until(lambda: settled(emu, group_id, 2, topic_name), tick=watch.tick,
                            timeout=60, message="two static members")
        owned_before = {m.instance_id: m.assignment for m in before.members}
        consumers.pop().close()  # a static member leaves with epoch -2: no rebalance
        replacement = make_consumer(emu, group_id, **{"group.instance.id": "static-1"})
        replacement.subscribe([topic_name])
        consumers.append(replacement)
        watch.consumers = consumers
        after = wait_until(lambda: settled(emu, group_id, 2, topic_name), tick=watch.tick,
                           timeout=60, message="the replacement to take over")
        assert {m.instance_id: m.assignment for m in after.members} == owned_before
        assert after.group_epoch == before.group_epoch
    finally:
        for c in consumers:
            c.close()
