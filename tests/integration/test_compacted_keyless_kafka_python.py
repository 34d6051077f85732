"""A real producer (kafka-python) sending a keyless record to a compacted topic gets Kafka's
INVALID_RECORD (issue #33: kafka-emu stored it); a keyed record goes through."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kafka.errors import InvalidRecordError

from .helpers import unique


def test_keyless_record_on_compacted_topic_fails_the_send(kafka_emu_factory):
    emu = kafka_emu_factory()
    topic = unique("compacted")
    admin = KafkaAdminClient(bootstrap_servers=emu.bootstrap_servers)
    admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"cleanup.policy": "compact"})])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=emu.bootstrap_servers, retries=0)
    try:
        with pytest.raises(InvalidRecordError):
            producer.send(topic, value=b"no key").get(timeout=20)
        assert producer.send(topic, key=b"k", value=b"v").get(timeout=20).offset == 0
    finally:
        producer.close()
