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


@pytest.mark.parametrize("brokers", [1, 3])
def test_sixteen_partitions_round_trip_through_the_fast_path(kafka_emu_factory, monkeypatch,
                                                             brokers):
    outcomes: list[bool] = []
    real = produce_handler.fast_answer

    def counting(ctx, request, undecoded):
        answer = real(ctx, request, undecoded)
        outcomes.append(answer is not produce_fast.NOT_TAKEN)
        return answer

    monkeypatch.setattr(produce_handler, "fast_answer", counting)
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
