"""Topic configs that change what the log keeps (issue #13, item 4), set with real admin clients:
retention.ms and retention.bytes enforced by the periodic retention check on the emulator's
clock (moved with ``emu.advance``), max.message.bytes on Produce, cleanup.policy=compact kept.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from kafka import KafkaConsumer
from kafka import TopicPartition as KPTopicPartition

from .helpers import unique, wait_until

CHECK_MS = 300_000  # log.retention.check.interval.ms, Kafka's default
INITIAL_MS = 30_000  # log.initial.task.delay.ms


def set_topic_configs(emu, topic: str, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
        ConfigEntry(name.replace("_", "."), value, incremental_operation=AlterConfigOpType.SET)
        for name, value in configs.items()])
    admin.incremental_alter_configs([resource], request_timeout=10)[resource].result()


def produce_batches(emu, topic: str, count: int, size: int = 100) -> None:
    """``count`` records, each flushed alone so each is one stored batch."""
    producer = Producer({"bootstrap.servers": emu.bootstrap_servers, "linger.ms": 0})
    for i in range(count):
        producer.produce(topic, value=b"x" * size, key=b"%d" % i, partition=0)
        assert producer.flush(10) == 0


def watermarks(emu, topic: str) -> tuple[int, int]:
    """(earliest, latest) as confluent-kafka asks them (ListOffsets -2 and -1)."""
    consumer = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("wm")})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)
    finally:
        consumer.close()


def test_retention_ms_deletes_expired_records_at_the_next_check_after_advance(kafka_emu_factory):
    emu = kafka_emu_factory()
    topic = unique("ret-ms")
    emu.create_topic(topic, 1)
    set_topic_configs(emu, topic, retention_ms="60000")
    produce_batches(emu, topic, 5)
    assert watermarks(emu, topic) == (0, 5)

    # 30 s in: the first retention run, but nothing is a minute old yet
    first = emu.advance(INITIAL_MS + 1_000)
    assert first["logs_trimmed"] == []
    assert watermarks(emu, topic) == (0, 5)
    # past retention.ms but before the next run: still nothing (Kafka deletes only in runs)
    assert emu.advance(60_000)["logs_trimmed"] == []
    assert watermarks(emu, topic) == (0, 5)
    # the next run deletes every batch, the last one too: the log is empty at its end
    trimmed = emu.advance(CHECK_MS)["logs_trimmed"]
    assert trimmed == [{"topic": topic, "partition": 0, "batches": 5, "log_start_offset": 5}]
    assert watermarks(emu, topic) == (5, 5)

    # a consumer positioned below the log start is told OFFSET_OUT_OF_RANGE and resets
    kp = KafkaConsumer(bootstrap_servers=emu.bootstrap_servers, auto_offset_reset="earliest",
                       enable_auto_commit=False, consumer_timeout_ms=500)
    try:
        tp = KPTopicPartition(topic, 0)
        assert kp.beginning_offsets([tp]) == {tp: 5}
        kp.assign([tp])
        kp.seek(tp, 1)
        assert kp.poll(timeout_ms=2_000) == {}
        assert wait_until(lambda: kp.position(tp) == 5, message="reset to the log start",
                          tick=lambda: kp.poll(timeout_ms=100))
    finally:
        kp.close()
    produce_batches(emu, topic, 1)  # the log goes on from its end
    assert watermarks(emu, topic) == (5, 6)


def test_retention_bytes_deletes_oldest_batches_while_the_rest_still_reaches_it(
        kafka_emu_factory):
    emu = kafka_emu_factory({"log.retention.check.interval.ms": "10000",
                             "log.initial.task.delay.ms": "0"})
    topic = unique("ret-bytes")
    emu.create_topic(topic, 1)
    produce_batches(emu, topic, 10, size=1000)
    batch = emu.broker.topics.partition(topic, 0).size_bytes // 10
    set_topic_configs(emu, topic, retention_bytes=str(3 * batch + 1))
    assert watermarks(emu, topic) == (0, 10)
    trimmed = emu.advance(10_000)["logs_trimmed"]
    # what remains is at least retention.bytes: four batches, not three
    assert trimmed == [{"topic": topic, "partition": 0, "batches": 6, "log_start_offset": 6}]
    assert watermarks(emu, topic) == (6, 10)
    consumer = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("g"),
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])  # below the log start: reset
        seen = []
        wait_until(lambda: len(seen) >= 4, message="the four kept records",
                   tick=lambda: seen.extend(m.offset() for m in consumer.consume(10, 0.2)
                                            if m.error() is None))
        assert seen == [6, 7, 8, 9]
    finally:
        consumer.close()


def test_the_retention_run_is_a_deadline_the_control_plane_can_jump_to(kafka_emu_factory):
    emu = kafka_emu_factory({"emu.clock": "manual", "log.retention.ms": "1000"})
    topic = unique("ret-next")
    emu.create_topic(topic, 1)
    produce_batches(emu, topic, 2)
    (deadline,) = emu.deadlines(kind="log_retention")
    assert deadline["in_ms"] == INITIAL_MS and deadline["group_id"] is None
    result = emu.advance_to_next_deadline(kind="log_retention")
    assert result["deadline"]["kind"] == "log_retention"
    # record timestamps come from the producer's wall clock, the manual clock stood still
    # since the start: whether the records are a second old depends on that, so only the
    # schedule is checked here
    assert emu.deadlines(kind="log_retention")[0]["in_ms"] == CHECK_MS


def test_max_message_bytes_refuses_larger_batches_with_message_too_large(kafka_emu_factory):
    emu = kafka_emu_factory()
    topic = unique("max-msg")
    emu.create_topic(topic, 1)
    set_topic_configs(emu, topic, max_message_bytes="1000")
    producer = Producer({"bootstrap.servers": emu.bootstrap_servers, "linger.ms": 0})
    outcomes = []
    producer.produce(topic, value=b"x" * 5000, partition=0,
                     on_delivery=lambda err, msg: outcomes.append(err))
    assert producer.flush(10) == 0  # alone in its batch
    producer.produce(topic, value=b"x" * 100, partition=0,
                     on_delivery=lambda err, msg: outcomes.append(err))
    assert producer.flush(10) == 0
    assert outcomes[0] is not None and outcomes[0].code() == KafkaError.MSG_SIZE_TOO_LARGE
    assert outcomes[1] is None
    assert watermarks(emu, topic) == (0, 1)


def test_compact_topics_keep_everything_and_refuse_delete_records(kafka_emu_factory):
    emu = kafka_emu_factory({"log.initial.task.delay.ms": "0"})
    topic = unique("compact")
    admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
    from confluent_kafka.admin import NewTopic
    admin.create_topics([NewTopic(topic, 1, config={"cleanup.policy": "compact",
                                                    "retention.ms": "1"})],
                        request_timeout=10)[topic].result()
    produce_batches(emu, topic, 3)
    assert emu.advance(CHECK_MS)["logs_trimmed"] == []
    assert watermarks(emu, topic) == (0, 3)
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    described = admin.describe_configs([resource], request_timeout=10)[resource].result()
    assert described["cleanup.policy"].value == "compact"
    with pytest.raises(KafkaException) as refused:
        admin.delete_records([TopicPartition(topic, 0, 2)],
                             request_timeout=10)[TopicPartition(topic, 0, 2)].result()
    assert refused.value.args[0].name() == "POLICY_VIOLATION"
