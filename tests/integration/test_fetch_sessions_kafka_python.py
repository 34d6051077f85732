"""kafka-python 3.x fetches in a KIP-227 session (its FetchSessionHandler: a full fetch at epoch
0, then incremental ones): every record arrives once, in order per partition, while records
keep coming to some partitions and not others -- and the broker's session shows the client went
incremental. The same load with sessions off (max.incremental.fetch.session.cache.slots=0)
gets the same records."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from .helpers import unique, wait_until

PARTITIONS = 12


def _drain(consumer: KafkaConsumer, got: dict, want: int) -> None:
    def tick():
        for tp, records in consumer.poll(timeout_ms=200).items():
            got.setdefault(tp.partition, []).extend(r.value for r in records)
    wait_until(lambda: sum(map(len, got.values())) >= want, tick=tick, timeout=30,
               message=f"{want} records")


@pytest.mark.parametrize("slots", ["1000", "0"])
def test_a_consumer_in_a_fetch_session_gets_every_record_once(kafka_emu_factory, slots):
    topic = unique("sessions")
    emu = kafka_emu_factory({"max.incremental.fetch.session.cache.slots": slots},
                            topics={topic: PARTITIONS})
    producer = KafkaProducer(bootstrap_servers=emu.bootstrap_servers, linger_ms=5)
    # one batch per partition per fetch (a limit below a batch's size): a session that read
    # from anywhere but the client's position would hand the same batch over and over
    consumer = KafkaConsumer(bootstrap_servers=emu.bootstrap_servers, fetch_max_wait_ms=100,
                             max_partition_fetch_bytes=64, auto_offset_reset="earliest",
                             enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        sent: dict[int, list] = {}
        got: dict[int, list] = {}
        # rounds of records to a few partitions at a time: the others stay unchanged, so an
        # incremental answer leaves them out
        for round_ in range(6):
            for i in range(40):
                p = (round_ * 3 + i % 3) % PARTITIONS
                value = f"{round_}-{i}".encode()
                producer.send(topic, value=value, partition=p)
                sent.setdefault(p, []).append(value)
            producer.flush(timeout=20)
            _drain(consumer, got, sum(map(len, sent.values())))
        assert got == sent  # each partition's records once, in order
        assert not any(consumer.poll(timeout_ms=300).values())

        sessions = emu._run(lambda: [(s.epoch, len(s.partitions))
                                     for s in emu.broker.fetch_sessions.sessions.values()])
        if slots == "0":
            assert sessions == []
        else:  # one session of every partition, many incremental fetches into it
            assert len(sessions) == 1 and sessions[0][1] == PARTITIONS and sessions[0][0] > 6
    finally:
        consumer.close()
        producer.close()
