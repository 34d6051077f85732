"""Using kafka-emu's pytest fixture in your own tests (installing kafka-emu registers it).

    python -m pytest examples/test_with_fixture.py
"""

from kafka import KafkaConsumer, KafkaProducer


def test_orders_are_consumed(kafka_emu):
    kafka_emu.create_topic("orders", partitions=3)

    producer = KafkaProducer(bootstrap_servers=kafka_emu.bootstrap_servers)
    for i in range(10):
        producer.send("orders", key=b"customer-%d" % (i % 3), value=b"order-%d" % i)
    producer.flush()
    producer.close()

    consumer = KafkaConsumer("orders", bootstrap_servers=kafka_emu.bootstrap_servers,
                             group_id="billing", auto_offset_reset="earliest",
                             session_timeout_ms=6000, heartbeat_interval_ms=500)
    values = []
    for _ in range(200):  # bounded: 200 polls of at most 100 ms
        for records in consumer.poll(timeout_ms=100).values():
            values.extend(r.value for r in records)
        if len(values) == 10:
            break
    assert sorted(values) == sorted(b"order-%d" % i for i in range(10))

    group = kafka_emu.describe_group("billing")
    assert group.state == "Stable"
    assert len(group.members) == 1
    consumer.close()
    assert kafka_emu.describe_group("billing").state == "Empty"
