"""End to end with confluent-kafka's transactional producer (librdkafka): consume, produce and
commit the consumed offsets in one transaction (send_offsets_to_transaction: AddOffsetsToTxn,
then TxnOffsetCommit with the consumer's group metadata, KIP-447). The group's committed
offsets change only when the transaction commits; an aborted one leaves them as they were and
its records hidden from read_committed consumers."""

from __future__ import annotations

import pytest
from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer,
                             TopicPartition)

from kafka_emu.broker.handlers._index import INDEX

from .helpers import unique, wait_until

TIMEOUT = 30.0

# the transaction coordinator's APIs (InitProducerId with an id, AddPartitionsToTxn,
# AddOffsetsToTxn, EndTxn) come from another module of work (kafka_emu/transactions/)
pytestmark = pytest.mark.skipif(not {24, 25, 26} <= set(INDEX),
                                reason="the transaction coordinator's APIs are not served yet")


def committed(emu, group: str, topic: str) -> int:
    """The group's committed offset of ``topic``-0 as OffsetFetch answers it (-1: none)."""
    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
                  "isolation.level": "read_uncommitted"})
    try:
        (tp,) = c.committed([TopicPartition(topic, 0)], timeout=TIMEOUT)
        return tp.offset if tp.offset >= 0 else -1
    finally:
        c.close()


def read_all(emu, topic: str, want: int, isolation: str) -> list[bytes]:
    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("r"),
                  "isolation.level": isolation, "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got: list[bytes] = []

    def tick():
        got.extend(m.value() for m in c.consume(100, timeout=0.05) if m.error() is None)
    try:
        wait_until(lambda: len(got) >= want, tick=tick, timeout=TIMEOUT,
                   message=f"{want} records from {topic}")
        got.extend(m.value() for m in c.consume(100, timeout=0.5) if m.error() is None)
    finally:
        c.close()
    return got


def test_send_offsets_to_transaction_commit_then_abort(kafka_emu_factory):
    src, dst, group = unique("in"), unique("out"), unique("g")
    emu = kafka_emu_factory(topics={src: 1, dst: 1})
    feed = Producer({"bootstrap.servers": emu.bootstrap_servers})
    for i in range(6):
        feed.produce(src, value=b"in-%d" % i, partition=0)
    assert feed.flush(TIMEOUT) == 0

    consumer = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "isolation.level": "read_committed"})
    consumer.subscribe([src])
    batch: list = []
    wait_until(lambda: len(batch) >= 3,
               tick=lambda: batch.extend(m for m in consumer.consume(3 - len(batch), 0.1)
                                         if m.error() is None),
               timeout=TIMEOUT, message="three records consumed")

    producer = Producer({"bootstrap.servers": emu.bootstrap_servers,
                         "transactional.id": unique("tx"), "transaction.timeout.ms": 60_000})
    producer.init_transactions(TIMEOUT)

    producer.begin_transaction()
    for m in batch:
        producer.produce(dst, value=b"out-" + m.value(), partition=0)
    producer.send_offsets_to_transaction([TopicPartition(src, 0, batch[-1].offset() + 1)],
                                         consumer.consumer_group_metadata(), TIMEOUT)
    assert committed(emu, group, src) == -1  # pending until the commit marker
    producer.commit_transaction(TIMEOUT)
    assert committed(emu, group, src) == 3

    producer.begin_transaction()
    producer.produce(dst, value=b"aborted", partition=0)
    assert producer.flush(TIMEOUT) == 0  # written before the abort (else librdkafka purges it)
    producer.send_offsets_to_transaction([TopicPartition(src, 0, 6)],
                                         consumer.consumer_group_metadata(), TIMEOUT)
    producer.abort_transaction(TIMEOUT)
    assert committed(emu, group, src) == 3

    assert read_all(emu, dst, 3, "read_committed") == [b"out-in-0", b"out-in-1", b"out-in-2"]
    assert b"aborted" in read_all(emu, dst, 4, "read_uncommitted")
    consumer.close()


def test_kip447_stale_group_metadata_is_fenced_after_a_rebalance(kafka_emu_factory):
    """A copier whose consumer was rebalanced away (a zombie) sends its offsets with the group
    metadata of the old generation: TxnOffsetCommit v3+ answers ILLEGAL_GENERATION, which
    librdkafka makes an abortable transaction error; nothing is committed."""
    src, group = unique("in"), unique("g")
    emu = kafka_emu_factory(topics={src: 2})
    conf = {"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
            "enable.auto.commit": False, "session.timeout.ms": 10_000,
            "heartbeat.interval.ms": 500}
    first = Consumer(conf)
    first.subscribe([src])
    wait_until(lambda: first.assignment(), tick=lambda: first.poll(0.1), timeout=TIMEOUT,
               message="first consumer assigned")
    stale = first.consumer_group_metadata()
    generation = emu.group_view(group)["generation"]
    second = Consumer(conf)
    second.subscribe([src])
    wait_until(lambda: (lambda v: v["generation"] > generation and v["state"] == "Stable"
                        and len(v["members"]) == 2)(emu.group_view(group)),
               tick=lambda: (first.poll(0.05), second.poll(0.05)), timeout=TIMEOUT,
               message="a rebalance to a new generation")

    producer = Producer({"bootstrap.servers": emu.bootstrap_servers,
                         "transactional.id": unique("tx")})
    producer.init_transactions(TIMEOUT)
    producer.begin_transaction()
    with pytest.raises(KafkaException) as info:
        producer.send_offsets_to_transaction([TopicPartition(src, 0, 5)], stale, TIMEOUT)
    error = info.value.args[0]
    assert error.code() == KafkaError.ILLEGAL_GENERATION and error.txn_requires_abort()
    producer.abort_transaction(TIMEOUT)
    assert committed(emu, group, src) == -1
    first.close()
    second.close()
