"""confluent-kafka (librdkafka 2.16) producing to 16 partitions through the Produce fast path
(broker/handlers/produce_fast.py) over real sockets, then consuming every record back in order:
each partition's offsets are dense from 0 and its values are the ones sent, in order. The
server answers in this process, so the test also counts that the fast path answered the
producer's requests (a usual request from librdkafka: flexible version, no transactional id)
rather than the generic path; on three brokers (``serve --brokers 3``) each request goes to
its partitions' leader, which the fast path checks per partition (Cluster.partition_error)."""

from __future__ import annotations

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from kafka_emu.broker.handlers import produce as produce_handler
from kafka_emu.broker.handlers import produce_fast

from .helpers import unique, wait_until

PARTITIONS = 16
PER_PARTITION = 40


@pytest.fixture
def fast_path_outcomes(monkeypatch) -> list[bool]:
    """Whether the fast path answered each Produce the server got (True) or declined it."""
    outcomes: list[bool] = []
    real = produce_handler.fast_answer

    def counting(ctx, request, undecoded):
        answer = real(ctx, request, undecoded)
        outcomes.append(answer is not produce_fast.NOT_TAKEN)
        return answer

    monkeypatch.setattr(produce_handler, "fast_answer", counting)
    return outcomes


@pytest.mark.parametrize("brokers", [1, 3])
def test_sixteen_partitions_round_trip_through_the_fast_path(kafka_emu_factory,
                                                             fast_path_outcomes, brokers):
    outcomes = fast_path_outcomes
    topic = unique("fast")
    emu = kafka_emu_factory(topics={topic: PARTITIONS}, brokers=brokers)
    for acks, idempotent in (("1", False), ("all", True)):
        p = Producer({"bootstrap.servers": emu.bootstrap_servers, "linger.ms": 20,
                      "acks": acks, "enable.idempotence": idempotent})
        for i in range(PER_PARTITION // 2):
            for part in range(PARTITIONS):
                p.produce(topic, key=b"k%d" % part, value=b"%s-%d-%d" % (acks.encode(), part, i),
                          partition=part)
            p.poll(0)
        assert p.flush(30) == 0, "producer did not deliver everything within 30s"
    assert outcomes and all(outcomes), outcomes  # every Produce answered by the fast path

    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("g"),
                  "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, part, OFFSET_BEGINNING) for part in range(PARTITIONS)])
    got: dict[int, list] = {part: [] for part in range(PARTITIONS)}

    def tick():
        for m in c.consume(num_messages=500, timeout=0.1):
            assert m.error() is None, m.error()
            got[m.partition()].append((m.offset(), m.key(), m.value()))
    wait_until(lambda: sum(map(len, got.values())) >= PARTITIONS * PER_PARTITION, tick=tick,
               timeout=30, message="every record back")
    c.close()
    for part, records in got.items():
        want = [(i, b"k%d" % part,
                 b"%s-%d-%d" % (b"1" if i < PER_PARTITION // 2 else b"all", part,
                                i % (PER_PARTITION // 2)))
                for i in range(PER_PARTITION)]
        assert records == want, part


def test_aiokafka_classic_produce_round_trips_through_the_fast_path(kafka_emu_factory, monkeypatch):
    """aiokafka 0.14 sends a Produce before v9 (v7 here: not flexible), the fast path's v7-8
    layout."""
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka import TopicPartition as AioPartition

    versions: list[tuple[int, bool]] = []
    real = produce_handler.fast_answer

    def counting(ctx, request, undecoded):
        answer = real(ctx, request, undecoded)
        versions.append((ctx.version, answer is not produce_fast.NOT_TAKEN))
        return answer

    monkeypatch.setattr(produce_handler, "fast_answer", counting)
    topic = unique("fast8")
    emu = kafka_emu_factory(topics={topic: PARTITIONS})

    async def main():
        p = AIOKafkaProducer(bootstrap_servers=emu.bootstrap_servers, linger_ms=20)
        await p.start()
        try:
            sent = [await p.send(topic, value=b"%d-%d" % (part, i), partition=part)
                    for i in range(5) for part in range(PARTITIONS)]
            offsets = [(m.partition, m.offset) for m in await asyncio.wait_for(
                asyncio.gather(*sent), 30)]
        finally:
            await p.stop()
        c = AIOKafkaConsumer(bootstrap_servers=emu.bootstrap_servers, fetch_max_wait_ms=100,
                             auto_offset_reset="earliest")
        await c.start()
        try:
            c.assign([AioPartition(topic, part) for part in range(PARTITIONS)])
            got: list = []
            deadline = asyncio.get_running_loop().time() + 30
            while len(got) < 5 * PARTITIONS:
                assert asyncio.get_running_loop().time() < deadline, len(got)
                for records in (await c.getmany(timeout_ms=100)).values():
                    got.extend((r.partition, r.offset, r.value) for r in records)
        finally:
            await c.stop()
        return offsets, got

    offsets, got = asyncio.run(main())
    assert sorted(offsets) == [(part, i) for part in range(PARTITIONS) for i in range(5)]
    assert sorted(got) == [(part, i, b"%d-%d" % (part, i)) for part in range(PARTITIONS)
                           for i in range(5)]
    assert versions and all(v in ((7, True), (8, True)) for v in versions), versions


def test_large_batches_are_kept_in_their_frames_and_read_back(kafka_emu_factory,
                                                             fast_path_outcomes):
    """Batches of hundreds of KB (a records length of three varint bytes; frames read straight
    into a buffer of their own, protocol/framing.py's ``room``) take the fast path, and the log
    keeps each as a view of its frame (kafka_emu/owned_bytes.py) rather than a copy -- a plain
    producer's through ``append_plain``, an idempotent one's through the full ``append`` --
    and a consumer reads every record back, dense offsets, values in order."""
    from kafka_emu.owned_bytes import OwnedBytes

    outcomes = fast_path_outcomes
    topic, partitions, per_round = unique("large"), 2, 3000
    emu = kafka_emu_factory(topics={topic: partitions})
    for acks, idempotent in (("1", False), ("all", True)):
        p = Producer({"bootstrap.servers": emu.bootstrap_servers, "linger.ms": 200,
                      "batch.size": 1_000_000, "acks": acks, "enable.idempotence": idempotent})
        for i in range(per_round):
            for part in range(partitions):
                p.produce(topic, value=b"%s-%d-%d-" % (acks.encode(), part, i) + b"x" * 200,
                          partition=part)
            p.poll(0)
        assert p.flush(30) == 0, "producer did not deliver everything within 30s"
    assert outcomes and all(outcomes), outcomes
    logs = emu.broker.topics.catalogue.get(topic).partitions
    kept = [type(b) is memoryview and b.obj.__class__ is OwnedBytes
            for log in logs for b in log._batches]
    assert sum(kept) >= 2 * partitions, kept  # (both producers' large batches, at least)

    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("g"),
                  "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, part, OFFSET_BEGINNING) for part in range(partitions)])
    got: dict[int, list] = {part: [] for part in range(partitions)}

    def tick():
        for m in c.consume(num_messages=2000, timeout=0.1):
            assert m.error() is None, m.error()
            got[m.partition()].append((m.offset(), m.value()))
    wait_until(lambda: sum(map(len, got.values())) >= 2 * partitions * per_round, tick=tick,
               timeout=30, message="every record back")
    c.close()
    for part, records in got.items():
        want = [(i, b"%s-%d-%d-" % (b"1" if i < per_round else b"all", part, i % per_round)
                 + b"x" * 200) for i in range(2 * per_round)]
        assert records == want, part
