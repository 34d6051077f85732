"""confluent-kafka (librdkafka) data path against kafka-emu (issue 5): compressed round trips
with keys, headers and timestamps, exactly-once group consumption with committed-offset resume,
auto.offset.reset, offsets_for_times, and the idempotent producer."""

from __future__ import annotations

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from .data import COMPRESSIONS, COUNT, PARTITIONS, base_timestamp_ms, check_stream, message
from .helpers import HEARTBEAT_MS, SESSION_TIMEOUT_MS, stable_assignment, unique, wait_until


def producer(emu, **extra) -> Producer:
    return Producer({"bootstrap.servers": emu.bootstrap_servers, "linger.ms": 5, **extra})


def consumer(emu, **extra) -> Consumer:
    return Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("unused"),
                     "session.timeout.ms": SESSION_TIMEOUT_MS,
                     "heartbeat.interval.ms": HEARTBEAT_MS, "fetch.wait.max.ms": 100,
                     "enable.auto.commit": False, **extra})


def flush(p: Producer) -> None:
    assert p.flush(20) == 0, "producer did not deliver everything within 20s"


def drain(consumers, want: int, timeout: float = 20.0) -> list:
    got: list = []

    def tick():
        for c in consumers:
            for m in c.consume(num_messages=500, timeout=0.05):
                assert m.error() is None, m.error()
                got.append(m)
    wait_until(lambda: len(got) >= want, tick=tick, timeout=timeout,
               message=f"{want} records (have {len(got)})")
    return got


def assert_quiet(consumers, seconds: float = 0.5) -> None:
    for c in consumers:
        extra = [m for m in c.consume(num_messages=10, timeout=seconds) if m.error() is None]
        assert not extra, f"unexpected records: {[(m.partition(), m.offset()) for m in extra]}"


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_round_trip_keeps_keys_headers_timestamps_and_order(kafka_emu_factory, compression):
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: PARTITIONS})
    base = base_timestamp_ms()
    p = producer(emu, **{"compression.type": compression})
    for i in range(COUNT):
        part, key, value, headers, ts = message(i, base)
        p.produce(topic, value=value, key=key, partition=part, headers=headers, timestamp=ts)
        p.poll(0)
    flush(p)

    c = consumer(emu)
    c.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(PARTITIONS)])
    got = drain([c], COUNT)
    c.close()
    check_stream([(m.partition(), m.offset(), m.key(), m.value(), m.headers() or [],
                   m.timestamp()[1]) for m in got], base)


def test_group_of_three_consumes_exactly_once_then_new_member_resumes(kafka_emu_factory):
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 6})
    members = [consumer(emu, **{"group.id": group, "auto.offset.reset": "earliest"})
               for _ in range(3)]
    for m in members:
        m.subscribe([topic])
    wait_until(lambda: stable_assignment(emu, group, 3) and all(m.assignment() for m in members),
               tick=lambda: [m.poll(0.02) for m in members], message="group of three")

    p = producer(emu)
    for i in range(600):
        p.produce(topic, value=f"old-{i}".encode(), partition=i % 6)
    flush(p)
    got = drain(members, 600)
    assert_quiet(members, 0.3)
    assert len({(m.partition(), m.offset()) for m in got}) == 600
    assert sorted(m.value() for m in got) == sorted(f"old-{i}".encode() for i in range(600))
    for m in members:
        m.commit(asynchronous=False)
        m.close()
    assert emu.describe_group(group).state == "Empty"

    for i in range(60):
        p.produce(topic, value=f"new-{i}".encode(), partition=i % 6)
    flush(p)
    late = consumer(emu, **{"group.id": group, "auto.offset.reset": "earliest"})
    late.subscribe([topic])
    got = drain([late], 60)
    assert_quiet([late], 0.3)
    late.close()
    assert sorted(m.value() for m in got) == sorted(f"new-{i}".encode() for i in range(60))


@pytest.mark.parametrize("reset", ["earliest", "latest"])
def test_auto_offset_reset(kafka_emu_factory, reset):
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 1})
    p = producer(emu)
    for i in range(10):
        p.produce(topic, value=b"before-%d" % i)
    flush(p)

    c = consumer(emu, **{"group.id": group, "auto.offset.reset": reset})
    c.subscribe([topic])
    seen = []

    def tick():
        seen.extend(m.value() for m in c.consume(num_messages=100, timeout=0.05) if not m.error())
    wait_until(lambda: c.assignment(), tick=tick, message="assignment")
    if reset == "latest":
        # librdkafka resolves "latest" (ListOffsets) asynchronously after the assignment and
        # exposes no position before the first message: give it half a second of polling.
        for _ in range(10):
            tick()
    for i in range(5):
        p.produce(topic, value=b"after-%d" % i)
    flush(p)
    want = 15 if reset == "earliest" else 5
    wait_until(lambda: len(seen) >= want, tick=tick, message=f"{want} records")
    c.close()
    expected = [b"before-%d" % i for i in range(10)] if reset == "earliest" else []
    assert seen == expected + [b"after-%d" % i for i in range(5)]


def test_offsets_for_times_and_seek(kafka_emu_factory):
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: 1})
    base = base_timestamp_ms()
    p = producer(emu)
    for i in range(100):
        p.produce(topic, value=b"%d" % i, timestamp=base + i * 1000)
    flush(p)

    c = consumer(emu)
    found = c.offsets_for_times([TopicPartition(topic, 0, base + 41_500)], timeout=10)[0]
    assert found.error is None and found.offset == 42
    beyond = c.offsets_for_times([TopicPartition(topic, 0, base + 1_000_000)], timeout=10)[0]
    assert beyond.offset == -1  # OFFSET_END: no message at or after that time
    assert c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10) == (0, 100)
    c.assign([found])
    got = drain([c], 58)
    c.close()
    assert [int(m.value()) for m in got] == list(range(42, 100))


def test_idempotent_producer_writes_each_message_once(kafka_emu_factory):
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: PARTITIONS})
    p = producer(emu, **{"enable.idempotence": True, "acks": "all",
                         "max.in.flight.requests.per.connection": 5})
    for i in range(COUNT):
        p.produce(topic, value=b"%d" % i, partition=i % PARTITIONS)
        p.poll(0)
    flush(p)

    c = consumer(emu)
    c.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(PARTITIONS)])
    got = drain([c], COUNT)
    assert_quiet([c], 0.3)
    c.close()
    values = [int(m.value()) for m in got]
    assert sorted(values) == list(range(COUNT))
    for part in range(PARTITIONS):
        in_partition = [int(m.value()) for m in got if m.partition() == part]
        assert in_partition == sorted(in_partition)
