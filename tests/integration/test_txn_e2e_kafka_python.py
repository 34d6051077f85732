"""End to end with kafka-python's transactional producer: consume with a group member, produce
and send its group metadata's offsets in a transaction (TxnOffsetCommit v3: generation and
member id, KIP-447); the offsets are committed only with the transaction, and a read_committed
kafka-python consumer sees no aborted record."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from kafka_emu.broker.handlers._index import INDEX

from .helpers import unique, wait_until

pytestmark = pytest.mark.skipif(not {24, 25, 26} <= set(INDEX),
                                reason="the transaction coordinator's APIs are not served yet")


def committed(emu, group: str, tp: TopicPartition):
    c = KafkaConsumer(bootstrap_servers=emu.bootstrap_servers, group_id=group,
                      enable_auto_commit=False)
    try:
        return c.committed(tp)
    finally:
        c.close()


def read_all(emu, topic: str, isolation: str) -> list[bytes]:
    c = KafkaConsumer(bootstrap_servers=emu.bootstrap_servers, isolation_level=isolation,
                      enable_auto_commit=False, consumer_timeout_ms=1500)
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek_to_beginning(tp)
        return [m.value for m in c]
    finally:
        c.close()


def test_kafka_python_send_offsets_with_group_metadata(kafka_emu_factory):
    src, dst, group = unique("in"), unique("out"), unique("g")
    emu = kafka_emu_factory(topics={src: 1, dst: 1})
    feed = KafkaProducer(bootstrap_servers=emu.bootstrap_servers)
    for i in range(4):
        feed.send(src, b"in-%d" % i, partition=0)
    feed.flush()
    feed.close()

    consumer = KafkaConsumer(src, bootstrap_servers=emu.bootstrap_servers, group_id=group,
                             enable_auto_commit=False, auto_offset_reset="earliest")
    got: list = []
    wait_until(lambda: len(got) >= 4,
               tick=lambda: [got.extend(ms) for ms in consumer.poll(200).values()],
               timeout=30, message="four records consumed")
    tp = TopicPartition(src, 0)

    producer = KafkaProducer(bootstrap_servers=emu.bootstrap_servers,
                             transactional_id=unique("tx"))
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(dst, b"copied", partition=0)
    producer.send_offsets_to_transaction({tp: OffsetAndMetadata(4, "", -1)},
                                         consumer.group_metadata())
    assert committed(emu, group, tp) is None  # pending
    producer.commit_transaction()
    assert committed(emu, group, tp) == 4

    producer.begin_transaction()
    producer.send(dst, b"dropped", partition=0)
    producer.flush()
    producer.abort_transaction()
    producer.close()
    assert read_all(emu, dst, "read_committed") == [b"copied"]
    assert read_all(emu, dst, "read_uncommitted") == [b"copied", b"dropped"]
    consumer.close()
