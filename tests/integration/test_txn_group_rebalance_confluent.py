"""Exactly once through consumer-group rebalances (KIP-447), with real clients: copiers in one
consumer group (confluent-kafka, subscribe) each consume, produce and commit the consumed
offsets in one transaction, the EOS loop Kafka documents -- commit before the next poll, so a
rebalance never lands inside a transaction; a commit fenced by the group (a rebalance between
the poll and the commit: ILLEGAL_GENERATION from TxnOffsetCommit, or a transaction the client
must abort) is aborted and the copier rewinds to the group's committed offsets. A third copier
joins mid-copy and one leaves mid-copy, so partitions move between transactional producers
twice, with input produced in three phases so that records are still flowing at each move
(phase two only once the third copier holds partitions, phase three once the first has left);
a read_committed reader then sees every input record exactly once in the output."""

from __future__ import annotations

import threading
from collections import Counter

from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaException, Producer,
                             TopicPartition)

from .helpers import unique, wait_until

TIMEOUT = 30.0
RECORDS = 900
PARTITIONS = 3


class Copier(threading.Thread):
    def __init__(self, emu, group: str, src: str, dst: str, name: str) -> None:
        super().__init__(name=f"copier-{name}", daemon=True)
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.commits = 0
        self.aborts = 0
        self.assigned: list[TopicPartition] = []
        self.consumer = Consumer({
            "bootstrap.servers": emu.bootstrap_servers, "group.id": group,
            "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "isolation.level": "read_committed", "session.timeout.ms": 10_000,
            "heartbeat.interval.ms": 250})
        self.producer = Producer({"bootstrap.servers": emu.bootstrap_servers,
                                  "transactional.id": unique(f"tx-{name}"),
                                  "transaction.timeout.ms": 60_000})
        self.src, self.dst = src, dst

    def run(self) -> None:
        try:
            self.producer.init_transactions(TIMEOUT)
            self.consumer.subscribe([self.src], on_assign=self._on_assign)
            while not self.stop.is_set():
                batch = [m for m in self.consumer.consume(20, timeout=0.2) if m.error() is None]
                if batch:
                    self._copy(batch)
        except BaseException as exc:  # the test thread re-raises it
            self.error = exc
        finally:
            self.consumer.close()  # leaves the group: a rebalance for the others

    def _on_assign(self, consumer, partitions) -> None:
        self.assigned = list(partitions)

    def _copy(self, batch) -> None:
        self.producer.begin_transaction()
        for m in batch:
            self.producer.produce(self.dst, value=m.value(), partition=m.partition())
        try:
            positions = self.consumer.position(self.consumer.assignment())
            self.producer.send_offsets_to_transaction(
                positions, self.consumer.consumer_group_metadata(), TIMEOUT)
            self.producer.commit_transaction(TIMEOUT)
            self.commits += 1
        except KafkaException as exc:
            if not exc.args[0].txn_requires_abort():
                raise
            # fenced by the group (KIP-447): nothing of this batch counts; start again from
            # what the group has committed for the partitions we still hold
            self.producer.abort_transaction(TIMEOUT)
            self.aborts += 1
            held = self.consumer.assignment()
            for tp in self.consumer.committed(held, timeout=TIMEOUT):
                self.consumer.seek(TopicPartition(
                    tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))


def output(emu, dst: str, want: int) -> list[bytes]:
    reader = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("r"),
                       "isolation.level": "read_committed", "enable.auto.commit": False})
    reader.assign([TopicPartition(dst, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    got: list[bytes] = []
    try:
        wait_until(lambda: len(got) >= want,
                   tick=lambda: got.extend(m.value() for m in reader.consume(200, timeout=0.1)
                                           if m.error() is None),
                   timeout=60.0, message=f"{want} committed records in {dst}")
        got.extend(m.value() for m in reader.consume(200, timeout=1.0) if m.error() is None)
    finally:
        reader.close()
    return got


def test_exactly_once_through_copiers_joining_and_leaving_the_group(kafka_emu_factory):
    src, dst, group = unique("in"), unique("out"), unique("g")
    emu = kafka_emu_factory(topics={src: PARTITIONS, dst: PARTITIONS})
    feed = Producer({"bootstrap.servers": emu.bootstrap_servers})
    phase = RECORDS // 3

    def produce(first: int) -> None:
        for i in range(first, first + phase):
            feed.produce(src, value=b"%d" % i, partition=i % PARTITIONS)
        assert feed.flush(TIMEOUT) == 0

    produce(0)
    first, second = (Copier(emu, group, src, dst, n) for n in ("a", "b"))
    copiers = [first, second]
    for c in copiers:
        c.start()
    try:
        wait_until(lambda: sum(c.commits for c in copiers) >= 3, timeout=60.0,
                   message="the first two copiers committing")
        third = Copier(emu, group, src, dst, "c")
        copiers.append(third)
        third.start()
        wait_until(lambda: third.assigned or third.error is not None, timeout=60.0,
                   message="the third copier assigned partitions")
        produce(phase)
        wait_until(lambda: third.commits >= 1 or third.error is not None, timeout=60.0,
                   message="the third copier committing")
        first.stop.set()  # leaves the group: its partitions move to the others
        first.join(TIMEOUT)
        produce(2 * phase)
        got = output(emu, dst, RECORDS)
    finally:
        for c in copiers:
            c.stop.set()
        for c in copiers:
            c.join(TIMEOUT)
    for c in copiers:
        assert c.error is None, f"{c.name}: {c.error!r}"
    assert third.commits >= 1 and second.commits >= 1
    counts = Counter(got)
    assert sorted(int(v) for v in counts) == list(range(RECORDS))  # nothing lost
    assert [v for v, n in counts.items() if n > 1] == []  # nothing twice
