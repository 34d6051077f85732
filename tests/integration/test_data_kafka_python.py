"""kafka-python 3.x data path against kafka-emu (issue 5): compressed round trips with keys,
headers and timestamps, exactly-once group consumption with committed-offset resume,
auto.offset.reset, offsets_for_times, topic admin errors live in test_admin.py."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from .data import COMPRESSIONS, COUNT, PARTITIONS, base_timestamp_ms, check_stream, message
from .helpers import (HEARTBEAT_MS, SESSION_TIMEOUT_MS, poll_concurrently, stable_assignment,
                      unique, wait_until)


def producer(emu, **extra) -> KafkaProducer:
    return KafkaProducer(bootstrap_servers=emu.bootstrap_servers, linger_ms=5, **extra)


def consumer(emu, topic: str | None = None, **extra) -> KafkaConsumer:
    extra.setdefault("session_timeout_ms", SESSION_TIMEOUT_MS)
    extra.setdefault("heartbeat_interval_ms", HEARTBEAT_MS)
    extra.setdefault("fetch_max_wait_ms", 100)
    extra.setdefault("metadata_max_age_ms", 1000)
    c = KafkaConsumer(bootstrap_servers=emu.bootstrap_servers, **extra)
    if topic is not None:
        c.subscribe([topic])
    return c


def drain(consumers, want: int, timeout: float = 20.0) -> list:
    """Poll every consumer until `want` records arrived in total; returns them in order."""
    got: list = []

    def tick():
        got.extend(poll_concurrently(consumers))
    wait_until(lambda: len(got) >= want, tick=tick, timeout=timeout,
               message=f"{want} records (have {len(got)})")
    return got


def assert_quiet(consumers, seconds: float = 0.5) -> None:
    extra = poll_concurrently(consumers, int(seconds * 1000))
    assert not extra, f"unexpected records: {extra}"


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_round_trip_keeps_keys_headers_timestamps_and_order(kafka_emu_factory, compression):
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: PARTITIONS})
    base = base_timestamp_ms()
    p = producer(emu, compression_type=None if compression == "none" else compression)
    for i in range(COUNT):
        part, key, value, headers, ts = message(i, base)
        p.send(topic, key=key, value=value, headers=headers, partition=part, timestamp_ms=ts)
    p.flush(timeout=20)
    p.close()

    c = consumer(emu, auto_offset_reset="earliest")
    c.assign([TopicPartition(topic, i) for i in range(PARTITIONS)])
    got = drain([c], COUNT)
    c.close()
    check_stream([(r.partition, r.offset, r.key, r.value, r.headers, r.timestamp) for r in got],
                 base)


def test_group_of_three_consumes_exactly_once_then_new_member_resumes(kafka_emu_factory):
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 6})
    members = [consumer(emu, topic, group_id=group, auto_offset_reset="earliest",
                        enable_auto_commit=False) for _ in range(3)]
    got: list = []
    # let the group settle before producing so no rebalance hands a partition over mid-stream
    wait_until(lambda: stable_assignment(emu, group, 3) and all(m.assignment() for m in members),
               tick=lambda: got.extend(poll_concurrently(members)), message="group of three")

    p = producer(emu)
    for i in range(600):
        p.send(topic, value=f"old-{i}".encode(), partition=i % 6)
    p.flush(timeout=20)
    assert not got
    got = drain(members, 600)
    assert_quiet(members, 0.3)
    assert len({(r.partition, r.offset) for r in got}) == 600
    assert sorted(r.value for r in got) == sorted(f"old-{i}".encode() for i in range(600))
    for m in members:
        m.commit()
        m.close()
    committed_state = emu.describe_group(group).state
    assert committed_state == "Empty", committed_state

    for i in range(60):
        p.send(topic, value=f"new-{i}".encode(), partition=i % 6)
    p.flush(timeout=20)
    p.close()
    late = consumer(emu, topic, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False)
    got = drain([late], 60)
    assert_quiet([late], 0.3)
    late.close()
    assert sorted(r.value for r in got) == sorted(f"new-{i}".encode() for i in range(60))


@pytest.mark.parametrize("reset", ["earliest", "latest"])
def test_auto_offset_reset(kafka_emu_factory, reset):
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 1})
    p = producer(emu)
    for i in range(10):
        p.send(topic, value=b"before-%d" % i)
    p.flush(timeout=10)

    c = consumer(emu, topic, group_id=group, auto_offset_reset=reset)
    tp = TopicPartition(topic, 0)
    seen = []

    def tick():
        for recs in c.poll(timeout_ms=50).values():
            seen.extend(r.value for r in recs)
    wait_until(lambda: c.assignment(), tick=tick, message="assignment")
    if reset == "latest":
        assert c.position(tp) == 10
    for i in range(5):
        p.send(topic, value=b"after-%d" % i)
    p.flush(timeout=10)
    p.close()
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
        p.send(topic, value=b"%d" % i, timestamp_ms=base + i * 1000)
    p.flush(timeout=10)
    p.close()

    c = consumer(emu)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    found = c.offsets_for_times({tp: base + 41_500})[tp]
    assert (found.offset, found.timestamp) == (42, base + 42_000)
    assert c.offsets_for_times({tp: base + 1_000_000})[tp] is None
    assert c.beginning_offsets([tp])[tp] == 0 and c.end_offsets([tp])[tp] == 100
    c.seek(tp, found.offset)
    got = drain([c], 58)
    c.close()
    assert [int(r.value) for r in got] == list(range(42, 100))
