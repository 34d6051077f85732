"""ACLs for authenticated principals, the production configuration (issue #38): a super user
administers ACLs with confluent-kafka's AdminClient over SASL_SSL (SCRAM-SHA-256), and another
user's consumer is refused its group (GROUP_AUTHORIZATION_FAILED) until an ACL lets it read, then
consumes; a kafka-python producer authenticated as that user is refused a topic it may not
write; over mTLS an ACL names the certificate's subject. Principals come from SASL (User:alice)
or the client certificate (User:CN=alice,O=acme), hosts from the client's address."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient,
                                   ResourcePatternType, ResourceType)
from kafka import KafkaProducer
from kafka import errors as kerr

from .helpers import unique, wait_until

SETTINGS = {"listeners": "SASL_SSL://127.0.0.1:0",
            "sasl.enabled.mechanisms": "SCRAM-SHA-256",
            "emu.sasl.users": "admin:admin-secret,alice:alice-secret",
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:admin"}


def conf(emu, user):
    return {"bootstrap.servers": emu.listeners["SASL_SSL"], "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user,
            "sasl.password": f"{user}-secret", "ssl.ca.location": emu.ca_file}


def test_super_user_grants_a_user_its_group_over_sasl_ssl(kafka_emu_factory):
    topic, group = unique("topic"), unique("group")
    emu = kafka_emu_factory(SETTINGS, topics={topic: 1})
    producer = Producer(conf(emu, "admin"))  # a super user writes anywhere
    producer.produce(topic, b"hello")
    assert producer.flush(20) == 0
    admin = AdminClient(conf(emu, "admin"))
    read_topic = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice",
                            "*", AclOperation.READ, AclPermissionType.ALLOW)
    assert admin.create_acls([read_topic], request_timeout=10)[read_topic].result() is None
    consumer = Consumer({**conf(emu, "alice"), "group.id": group,
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        errors = []

        def refused():
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is not None:
                errors.append(msg.error().code())
            return KafkaError.GROUP_AUTHORIZATION_FAILED in errors
        wait_until(refused, message="GROUP_AUTHORIZATION_FAILED for alice")
        read_group = AclBinding(ResourceType.GROUP, group, ResourcePatternType.LITERAL,
                                "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)
        assert admin.create_acls([read_group], request_timeout=10)[read_group].result() is None
        consumer.close()
        consumer = Consumer({**conf(emu, "alice"), "group.id": group,
                             "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])

        def value():
            msg = consumer.poll(0.2)
            return msg.value() if msg is not None and msg.error() is None else None
        assert wait_until(value, timeout=30, message="alice's first record") == b"hello"
    finally:
        consumer.close()
    denied = emu.broker.authorizer.denied
    assert denied and {principal for principal, _ in denied} == {"User:alice"}


def test_kafka_python_user_without_write_over_sasl_ssl(kafka_emu_factory):
    topic = unique("topic")
    emu = kafka_emu_factory(SETTINGS, topics={topic: 1})
    producer = KafkaProducer(bootstrap_servers=emu.listeners["SASL_SSL"],
                             security_protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-256",
                             sasl_plain_username="alice", sasl_plain_password="alice-secret",
                             ssl_cafile=emu.ca_file, retries=0, request_timeout_ms=10000)
    try:
        with pytest.raises(kerr.TopicAuthorizationFailedError):
            producer.send(topic, b"v").get(timeout=20)
    finally:
        producer.close(timeout=5)


def test_certificate_principals_over_mtls(kafka_emu_factory):
    """mTLS: the principal is the client certificate's subject (Kafka's default principal
    builder), and ACLs name it so."""
    topic = unique("topic")
    emu = kafka_emu_factory({"listeners": "SSL://127.0.0.1:0", "ssl.client.auth": "required",
                             "authorizer.class.name": SETTINGS["authorizer.class.name"],
                             "emu.acls": f"ALLOW User:CN=alice,O=acme WRITE TOPIC {topic}"},
                            topics={topic: 1})

    def producer(subject):
        cert, key = emu.tls.client_certificate(subject)
        return Producer({"bootstrap.servers": emu.listeners["SSL"], "security.protocol": "SSL",
                         "ssl.ca.location": emu.ca_file, "ssl.certificate.location": cert,
                         "ssl.key.location": key, "message.timeout.ms": 20000})
    reports = []
    for subject in ("CN=alice,O=acme", "CN=mallory,O=acme"):
        p = producer(subject)
        p.produce(topic, subject.encode(), on_delivery=lambda err, msg: reports.append(err))
        p.flush(30)
    assert reports[0] is None
    assert reports[1] is not None and reports[1].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert [e["principal"] for e in emu.timeline(types=["AuthorizationDenied"])][:1] == [
        "User:CN=mallory,O=acme"]
