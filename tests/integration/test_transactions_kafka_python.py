"""kafka-python 3's transactional producer (KafkaProducer(transactional_id=...)) against the
transaction coordinator: commit and abort read back with read_committed, and a second producer
with the same transactional id fencing the first."""

from __future__ import annotations

import pytest
from kafka import KafkaProducer
from kafka.errors import ProducerFencedError

from .helpers import unique
from .test_transactions_confluent import TIMEOUT, committed_values


def producer(emu, tid: str) -> KafkaProducer:
    return KafkaProducer(bootstrap_servers=emu.bootstrap_servers, transactional_id=tid,
                         request_timeout_ms=int(TIMEOUT * 1000))


def test_commit_and_abort(kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 1})
    p = producer(emu, tid)
    try:
        p.init_transactions()
        p.begin_transaction()
        p.send(topic, b"kept", partition=0)
        p.commit_transaction()
        p.begin_transaction()
        p.send(topic, b"dropped", partition=0).get(TIMEOUT)
        p.abort_transaction()
        p.begin_transaction()
        p.send(topic, b"kept too", partition=0)
        p.commit_transaction()
    finally:
        p.close(timeout=5)
    assert committed_values(emu, topic, 2) == [b"kept", b"kept too"]


def test_second_producer_fences_the_first(kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 1})
    first, second = producer(emu, tid), producer(emu, tid)
    try:
        first.init_transactions()
        first.begin_transaction()
        first.send(topic, b"zombie", partition=0).get(TIMEOUT)
        second.init_transactions()
        with pytest.raises(ProducerFencedError):  # EndTxn v2+: PRODUCER_FENCED (90)
            first.commit_transaction()
        second.begin_transaction()
        second.send(topic, b"live", partition=0)
        second.commit_transaction()
    finally:
        first.close(timeout=5)
        second.close(timeout=5)
    assert committed_values(emu, topic, 1) == [b"live"]
