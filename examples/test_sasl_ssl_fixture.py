"""Testing against the production security setup: SASL_SSL with SCRAM, as in
`security.protocol=SASL_SSL`, `sasl.mechanism=SCRAM-SHA-512` and a CA file.

    python -m pytest examples/test_sasl_ssl_fixture.py

The marker's settings are Kafka's broker configs: one SASL_SSL listener and a user. The
emulator makes a CA and a server certificate at start; `kafka_emu.ca_file` is the CA to trust.
"""

import pytest
from confluent_kafka import Consumer, KafkaError, Producer

SECURE = {"listeners": "SASL_SSL://127.0.0.1:0", "emu.sasl.users": "billing:s3cret"}


def client_config(kafka_emu, password="s3cret"):
    return {"bootstrap.servers": kafka_emu.listeners["SASL_SSL"],
            "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "billing", "sasl.password": password,
            "ssl.ca.location": kafka_emu.ca_file}


@pytest.mark.kafka_emu(settings=SECURE, topics={"orders": 1})
def test_orders_over_sasl_ssl(kafka_emu):
    producer = Producer(client_config(kafka_emu))
    for i in range(5):
        producer.produce("orders", b"order-%d" % i)
    assert producer.flush(30) == 0

    consumer = Consumer({**client_config(kafka_emu), "group.id": "billing",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(["orders"])
    values = []
    for _ in range(300):  # bounded: 300 polls of at most 100 ms
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            values.append(message.value())
        if len(values) == 5:
            break
    consumer.close()
    assert values == [b"order-%d" % i for i in range(5)]


@pytest.mark.kafka_emu(settings=SECURE)
def test_a_wrong_password_is_refused(kafka_emu):
    errors = []
    producer = Producer({**client_config(kafka_emu, password="guess"), "error_cb": errors.append})
    for _ in range(100):  # bounded: error callbacks are delivered by poll
        if errors:
            break
        producer.poll(0.1)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION
