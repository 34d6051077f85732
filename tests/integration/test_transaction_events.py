"""TransactionBegun and TransactionEnded on the timeline with a real client (confluent-kafka):
a transaction begins at its first partition added (and at AddOffsetsToTxn when the offsets come
first), ends with its cause, and the ended event's duration runs from the begun event."""

from __future__ import annotations

import uuid

import pytest

pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402

TIMEOUT = 30


def test_each_transaction_begins_once_and_ends_with_its_duration(kafka_emu_factory):
    topic, tid, group = (f"{p}-{uuid.uuid4().hex[:6]}" for p in ("t", "tx", "g"))
    emu = kafka_emu_factory(topics={topic: 2})
    p = Producer({"bootstrap.servers": emu.bootstrap_servers, "transactional.id": tid})
    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group})
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    p.produce(topic, value=b"a", partition=0)
    p.flush(TIMEOUT)
    p.produce(topic, value=b"b", partition=1)  # a second partition: no second begin
    p.commit_transaction(TIMEOUT)
    p.begin_transaction()  # offsets first: AddOffsetsToTxn begins it
    p.send_offsets_to_transaction([TopicPartition(topic, 0, 1)],
                                  c.consumer_group_metadata(), TIMEOUT)
    p.abort_transaction(TIMEOUT)
    c.close()
    events = [e for e in emu.timeline()
              if e["type"] in ("TransactionBegun", "TransactionEnded")]
    assert [(e["type"], e.get("committed")) for e in events] == [
        ("TransactionBegun", None), ("TransactionEnded", True),
        ("TransactionBegun", None), ("TransactionEnded", False)]
    first, _, second, _ = events
    assert [tuple(tp) for tp in first["partitions"]] == [(topic, 0)]
    assert second["groups"] == [group] and second["partitions"][0][0] == "__consumer_offsets"
    for begun, ended in (events[0:2], events[2:4]):
        assert begun["transactional_id"] == ended["transactional_id"] == tid
        assert begun["producer_id"] == ended["producer_id"]
        assert ended["duration_ms"] == ended["at_ms"] - begun["at_ms"]
        assert begun["timeout_ms"] == 60000  # librdkafka's transaction.timeout.ms default
