"""confluent-kafka's transactional producer (librdkafka 2.16) against the transaction
coordinator: commit and abort, a second producer with the same transactional.id fencing the first
(fatal for the first), and a transaction timeout made to happen on the emulator's manual clock
(aborted and fenced by the coordinator, as Kafka's abortTimedOutTransactions does)."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from .helpers import unique, wait_until

TIMEOUT = 30.0


def producer(emu, tid: str, **extra) -> Producer:
    return Producer({"bootstrap.servers": emu.bootstrap_servers, "transactional.id": tid,
                     "linger.ms": 5, **extra})


def committed_values(emu, topic: str, want: int, partitions: int = 1) -> list[bytes]:
    """Every record a read_committed consumer sees in ``topic`` (waits for ``want``, then a
    little more to catch extras); the control batches never reach the application."""
    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("rc"),
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[bytes] = []

    def tick():
        for m in c.consume(num_messages=100, timeout=0.05):
            if m.error() is None:
                got.append(m.value())
    try:
        wait_until(lambda: len(got) >= want, tick=tick, timeout=TIMEOUT,
                   message=f"{want} committed records (have {got})")
        for _ in range(10):
            tick()
    finally:
        c.close()
    return sorted(got)


def test_commit_and_abort(kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 2})
    p = producer(emu, tid)
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    for i in range(6):
        p.produce(topic, value=b"c%d" % i, partition=i % 2)
    p.commit_transaction(TIMEOUT)
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, value=b"a%d" % i, partition=i % 2)
    p.flush(TIMEOUT)
    p.abort_transaction(TIMEOUT)
    p.begin_transaction()
    p.produce(topic, value=b"c6", partition=0)
    p.commit_transaction(TIMEOUT)
    assert committed_values(emu, topic, 7, partitions=2) == [b"c%d" % i for i in range(7)]
    ended = [e for e in emu.timeline() if e["type"] == "TransactionEnded"]
    assert [(e["transactional_id"], e["committed"], e["cause"], len(e["partitions"]))
            for e in ended] == [(tid, True, "client", 2), (tid, False, "client", 2),
                                (tid, True, "client", 1)]


def test_second_producer_fences_the_first(kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 1})
    first = producer(emu, tid)
    first.init_transactions(TIMEOUT)
    first.begin_transaction()
    first.produce(topic, value=b"zombie")
    first.flush(TIMEOUT)
    # the newcomer's InitProducerId aborts the open transaction (CONCURRENT_TRANSACTIONS until
    # it is done, which librdkafka retries) and bumps the epoch
    second = producer(emu, tid)
    second.init_transactions(TIMEOUT)
    with pytest.raises(KafkaException) as caught:
        first.commit_transaction(TIMEOUT)
    error = caught.value.args[0]
    assert error.fatal(), error
    assert error.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED), error
    second.begin_transaction()
    second.produce(topic, value=b"live")
    second.commit_transaction(TIMEOUT)
    assert committed_values(emu, topic, 1) == [b"live"]


def test_transaction_timeout_aborts_and_fences_on_the_emulators_clock(kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 1}, clock="manual")
    p = producer(emu, tid, **{"transaction.timeout.ms": 2000, "socket.timeout.ms": 1000,
                              "message.timeout.ms": 2000})
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    p.produce(topic, value=b"late")
    p.flush(TIMEOUT)
    # 2 s timeout; the coordinator's check runs every 10 s, so by 10 s it has aborted
    advanced = emu.advance(10_000)
    assert advanced["now_ms"] - advanced["from_ms"] == 10_000
    with pytest.raises(KafkaException) as caught:
        p.commit_transaction(TIMEOUT)
    print("after the timeout, commit_transaction raised", caught.value.args[0])
    assert caught.value.args[0].code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                                           KafkaError.INVALID_PRODUCER_EPOCH)
    other = producer(emu, tid)
    other.init_transactions(TIMEOUT)  # the id is usable again, at a later epoch
    other.begin_transaction()
    other.produce(topic, value=b"on time")
    other.commit_transaction(TIMEOUT)
    assert committed_values(emu, topic, 1) == [b"on time"]


def test_operator_aborts_an_open_transaction_over_http(kafka_emu_factory):
    import json
    import urllib.request
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 1}, control_port=0)
    p = producer(emu, tid)
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    p.produce(topic, value=b"stuck")
    p.flush(TIMEOUT)
    request = urllib.request.Request(
        f"{emu.control_url}/transactions/{tid}/abort", data=b"{}", method="POST",
        headers={"Authorization": f"Bearer {emu.control_token}",
                 "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
        body = json.load(answer)["result"]
    assert body["aborted"] and body["partitions"] == [f"{topic}-0"], body
    with pytest.raises(KafkaException) as caught:
        p.commit_transaction(TIMEOUT)
    assert caught.value.args[0].fatal()
    other = producer(emu, tid)
    other.init_transactions(TIMEOUT)
    other.begin_transaction()
    other.produce(topic, value=b"next")
    other.commit_transaction(TIMEOUT)
    assert committed_values(emu, topic, 1) == [b"next"]
