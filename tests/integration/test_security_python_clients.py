"""Real Python clients over SASL_SSL, SASL_PLAINTEXT and SSL (mTLS): confluent-kafka
(librdkafka), kafka-python and aiokafka, each mechanism: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512,
OAUTHBEARER (unsecured JWS tokens). A produce and a consume (or a metadata round) prove the
session; a wrong password fails as Kafka fails it."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import time

import pytest

from kafka_emu.testing import make_config, run_in_thread

from .helpers import unique

LISTENERS = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0"
SETTINGS = {"listeners": LISTENERS, "emu.sasl.users": "alice:alice-secret",
            "connection.failed.authentication.delay.ms": "0"}
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
PROTOCOLS = ["SASL_SSL", "SASL_PLAINTEXT"]


@pytest.fixture(scope="module")
def emu():
    with run_in_thread(make_config(SETTINGS, topics={"secure": 1})) as emu:
        yield emu


def unsecured_jws(sub: str, lifetime_s: int = 3600) -> str:
    def part(obj) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    now = int(time.time())
    return f"{part({'alg': 'none'})}.{part({'sub': sub, 'iat': now, 'exp': now + lifetime_s})}."


# -- confluent-kafka ---------------------------------------------------------------------------
def confluent_conf(emu, protocol, mechanism, password="alice-secret"):
    conf = {"bootstrap.servers": emu.listeners[protocol], "security.protocol": protocol,
            "sasl.mechanisms": mechanism}
    if mechanism == "OAUTHBEARER":
        conf.update({"enable.sasl.oauthbearer.unsecure.jwt": True,
                     "sasl.oauthbearer.config": "principal=alice"})
    else:
        conf.update({"sasl.username": "alice", "sasl.password": password})
    if protocol == "SASL_SSL":
        conf["ssl.ca.location"] = emu.ca_file
    return conf


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mechanism", MECHANISMS + ["OAUTHBEARER"])
def test_confluent_produces_and_consumes(emu, protocol, mechanism):
    from confluent_kafka import Consumer, Producer
    conf = confluent_conf(emu, protocol, mechanism)
    topic = "secure"
    value = unique("v").encode()
    producer = Producer(conf)
    producer.produce(topic, value)
    assert producer.flush(30) == 0
    consumer = Consumer({**conf, "group.id": unique("g"), "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        seen = []
        deadline = time.monotonic() + 30
        while value not in seen and time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is not None and message.error() is None:
                seen.append(message.value())
        assert value in seen
    finally:
        consumer.close()


def test_confluent_wrong_password_is_an_authentication_error(emu):
    from confluent_kafka import KafkaError, Producer
    errors = []
    conf = confluent_conf(emu, "SASL_SSL", "SCRAM-SHA-256", password="wrong")
    producer = Producer({**conf, "error_cb": errors.append})
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        producer.poll(0.5)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in errors[0].str()


def test_confluent_mtls_principal_from_certificate():
    from confluent_kafka.admin import AdminClient
    settings = {"listeners": "SSL://127.0.0.1:0", "ssl.client.auth": "required"}
    with run_in_thread(make_config(settings)) as emu:
        cert, key = emu.tls.client_certificate("CN=alice,O=acme")
        admin = AdminClient({"bootstrap.servers": emu.listeners["SSL"], "security.protocol": "SSL",
                             "ssl.ca.location": emu.ca_file, "ssl.certificate.location": cert,
                             "ssl.key.location": key})
        assert admin.list_topics(timeout=20).brokers
        # librdkafka swaps its bootstrap connection for one to the broker it learnt of: for a
        # moment there may be no connection, or one still in its handshake, so look a while
        deadline = time.monotonic() + 20
        while True:
            principals = emu._run(lambda: [i.principal
                                           for i in emu.broker.connections.values()])
            if (principals and set(principals) == {"User:CN=alice,O=acme"}) \
                    or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert principals and set(principals) == {"User:CN=alice,O=acme"}


# -- kafka-python ------------------------------------------------------------------------------
def _token_provider():
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class TokenProvider(AbstractTokenProvider):
        def token(self) -> str:
            return unsecured_jws("alice")

        def extensions(self) -> dict:
            return {}

    return TokenProvider()


def kafka_python_conf(emu, protocol, mechanism, password="alice-secret"):
    conf = {"bootstrap_servers": emu.listeners[protocol], "security_protocol": protocol,
            "sasl_mechanism": mechanism, "request_timeout_ms": 30000}
    if mechanism == "OAUTHBEARER":
        conf["sasl_oauth_token_provider"] = _token_provider()
    else:
        conf.update(sasl_plain_username="alice", sasl_plain_password=password)
    if protocol == "SASL_SSL":
        conf["ssl_cafile"] = emu.ca_file
    return conf


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mechanism", MECHANISMS + ["OAUTHBEARER"])
def test_kafka_python_produces_and_consumes(emu, protocol, mechanism):
    from kafka import KafkaConsumer, KafkaProducer
    conf = kafka_python_conf(emu, protocol, mechanism)
    value = unique("kp").encode()
    producer = KafkaProducer(**conf)
    producer.send("secure", value).get(timeout=30)
    producer.close()
    consumer = KafkaConsumer("secure", group_id=unique("g"), auto_offset_reset="earliest",
                             consumer_timeout_ms=20000, **conf)
    try:  # iterating ends at consumer_timeout_ms without a message: stop at ours
        assert any(m.value == value for m in consumer)
    finally:
        consumer.close()


def test_kafka_python_wrong_password(emu, caplog):
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError
    with pytest.raises(KafkaError):
        KafkaAdminClient(bootstrap_timeout_ms=3000,
                         **kafka_python_conf(emu, "SASL_PLAINTEXT", "PLAIN", password="nope"))
    assert "Authentication failed: Invalid username or password" in caplog.text


# -- aiokafka ----------------------------------------------------------------------------------
def _aio_token_provider():
    from aiokafka.abc import AbstractTokenProvider

    class AioTokenProvider(AbstractTokenProvider):
        async def token(self) -> str:
            return unsecured_jws("alice")

    return AioTokenProvider()


def aiokafka_conf(emu, protocol, mechanism):
    conf = {"bootstrap_servers": emu.listeners[protocol], "security_protocol": protocol,
            "sasl_mechanism": mechanism}
    if mechanism == "OAUTHBEARER":
        conf["sasl_oauth_token_provider"] = _aio_token_provider()
    else:
        conf.update(sasl_plain_username="alice", sasl_plain_password="alice-secret")
    if protocol == "SASL_SSL":
        conf["ssl_context"] = ssl.create_default_context(cafile=emu.ca_file)
    return conf


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mechanism", MECHANISMS + ["OAUTHBEARER"])
def test_aiokafka_produces_and_consumes(emu, protocol, mechanism):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    conf = aiokafka_conf(emu, protocol, mechanism)
    value = unique("aio").encode()

    async def main():
        producer = AIOKafkaProducer(**conf)
        await producer.start()
        try:
            await producer.send_and_wait("secure", value)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer("secure", group_id=unique("g"),
                                    auto_offset_reset="earliest", **conf)
        await consumer.start()
        try:
            async def until_seen():
                async for message in consumer:
                    if message.value == value:
                        return True
            return await asyncio.wait_for(until_seen(), 30)
        finally:
            await consumer.stop()

    assert asyncio.run(main())
