"""Real clients against ACLs (issue #38 item 4): confluent-kafka's AdminClient creates,
describes and deletes ACLs; a consumer whose principal lacks READ on its group gets
GROUP_AUTHORIZATION_FAILED and a producer without WRITE on its topic TOPIC_AUTHORIZATION_FAILED,
as from Kafka (confluent-kafka and kafka-python). Plaintext connections are User:ANONYMOUS;
``allow.everyone.if.no.acl.found`` lets it administer ACLs while an ACL naming somebody else
takes a topic or group away from it (the default is gone once any ACL covers the resource)."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType,
                                   AdminClient, ResourcePatternType, ResourceType)
from kafka import KafkaConsumer, KafkaProducer
from kafka import errors as kerr

from kafka_emu.security.acls import AclBinding as EmuBinding

from .helpers import unique, wait_until

SETTINGS = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true"}
ANON = "User:ANONYMOUS"


def add_acl(emu, rtype, name, op, principal, perm=3):
    binding = EmuBinding(resource_type=rtype, resource_name=name, pattern_type=3,
                         principal=principal, host="*", operation=op, permission=perm)
    emu._run(lambda: emu.broker.authorizer.add(binding))


def test_confluent_admin_creates_describes_and_deletes_acls(kafka_emu_factory):
    emu = kafka_emu_factory(SETTINGS)
    admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
    read = AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:alice",
                      "*", AclOperation.READ, AclPermissionType.ALLOW)
    deny = AclBinding(ResourceType.GROUP, "tmp-", ResourcePatternType.PREFIXED, "User:*",
                      "10.0.0.1", AclOperation.ALL, AclPermissionType.DENY)
    for future in admin.create_acls([read, deny], request_timeout=10).values():
        assert future.result() is None
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                                  AclOperation.ANY, AclPermissionType.ANY)
    listed = admin.describe_acls(everything, request_timeout=10).result()
    assert sorted(listed, key=str) == sorted([read, deny], key=str)
    # the CLUSTER resource has one name; Kafka refuses others with INVALID_REQUEST
    bad = AclBinding(ResourceType.BROKER, "other", ResourcePatternType.LITERAL, "User:x", "*",
                     AclOperation.ALTER, AclPermissionType.ALLOW)
    with pytest.raises(KafkaException) as refused:
        admin.create_acls([bad], request_timeout=10)[bad].result()
    assert refused.value.args[0].code() == KafkaError.INVALID_REQUEST
    assert "kafka-cluster" in refused.value.args[0].str()
    topics_only = AclBindingFilter(ResourceType.TOPIC, None, ResourcePatternType.ANY, None, None,
                                   AclOperation.ANY, AclPermissionType.ANY)
    deleted = admin.delete_acls([topics_only], request_timeout=10)[topics_only].result()
    assert deleted == [read]
    assert admin.describe_acls(everything, request_timeout=10).result() == [deny]


def test_confluent_consumer_without_read_on_its_group(kafka_emu_factory):
    topic, group = unique("topic"), unique("group")
    emu = kafka_emu_factory(SETTINGS, topics={topic: 1})
    add_acl(emu, 3, group, 3, "User:somebody-else")  # READ on the group, for another principal
    consumer = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        errors = []

        def group_error():
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is not None:
                errors.append(msg.error())
            return [e for e in errors if e.code() == KafkaError.GROUP_AUTHORIZATION_FAILED]
        found = wait_until(group_error, message="GROUP_AUTHORIZATION_FAILED from poll")
        assert found[0].fatal() is False
    finally:
        consumer.close()


def test_kafka_python_consumer_without_read_on_its_group(kafka_emu_factory):
    topic, group = unique("topic"), unique("group")
    emu = kafka_emu_factory(SETTINGS, topics={topic: 1})
    add_acl(emu, 3, group, 3, "User:somebody-else")
    consumer = KafkaConsumer(topic, bootstrap_servers=emu.bootstrap_servers, group_id=group,
                             auto_offset_reset="earliest", request_timeout_ms=10000)
    try:
        with pytest.raises(kerr.GroupAuthorizationFailedError):
            for _ in range(100):
                consumer.poll(timeout_ms=200)
    finally:
        consumer.close()


def test_confluent_producer_without_write_on_its_topic(kafka_emu_factory):
    topic = unique("topic")
    emu = kafka_emu_factory(SETTINGS, topics={topic: 1})
    add_acl(emu, 2, topic, 8, ANON)  # DESCRIBE only: Metadata answers, Produce is refused
    producer = Producer({"bootstrap.servers": emu.bootstrap_servers, "message.timeout.ms": 20000})
    reports = []
    producer.produce(topic, b"v", on_delivery=lambda err, msg: reports.append(err))
    wait_until(lambda: reports, tick=lambda: producer.poll(0.1), message="a delivery report")
    assert reports[0] is not None and reports[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert emu.broker.topics.partition(topic, 0).log_end_offset == 0


def test_kafka_python_producer_without_write_on_its_topic(kafka_emu_factory):
    topic = unique("topic")
    emu = kafka_emu_factory(SETTINGS, topics={topic: 1})
    add_acl(emu, 2, topic, 8, ANON)
    producer = KafkaProducer(bootstrap_servers=emu.bootstrap_servers, retries=0,
                             request_timeout_ms=10000)
    try:
        with pytest.raises(kerr.TopicAuthorizationFailedError):
            producer.send(topic, b"v").get(timeout=20)
    finally:
        producer.close(timeout=5)


def test_confluent_kip848_consumer_without_read_on_its_group(kafka_emu_factory):
    topic, group = unique("topic"), unique("group")
    emu = kafka_emu_factory(SETTINGS, topics={topic: 1})
    add_acl(emu, 3, group, 3, "User:somebody-else")
    consumer = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
                         "group.protocol": "consumer", "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        errors = []

        def group_error():
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is not None:
                errors.append(msg.error())
            return [e for e in errors if e.code() == KafkaError.GROUP_AUTHORIZATION_FAILED]
        wait_until(group_error, message="GROUP_AUTHORIZATION_FAILED from poll")
    finally:
        consumer.close()


def test_confluent_admin_sees_authorized_operations_from_the_acls(kafka_emu_factory):
    from confluent_kafka import TopicCollection
    topic, group = unique("topic"), unique("group")
    emu = kafka_emu_factory(SETTINGS, topics={topic: 1})
    add_acl(emu, 2, topic, 3, ANON)  # READ on the topic: READ and DESCRIBE
    add_acl(emu, 4, "kafka-cluster", 8, ANON)  # DESCRIBE on the cluster
    admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
    cluster = admin.describe_cluster(include_authorized_operations=True,
                                     request_timeout=10).result()
    assert set(cluster.authorized_operations) == {AclOperation.DESCRIBE}
    topics = admin.describe_topics(TopicCollection([topic]), include_authorized_operations=True,
                                   request_timeout=10)
    described = topics[topic].result()
    assert set(described.authorized_operations) == {AclOperation.READ, AclOperation.DESCRIBE}
    # a group with no ACL at all: every group operation (allow.everyone.if.no.acl.found)
    groups = admin.describe_consumer_groups([group], include_authorized_operations=True,
                                            request_timeout=10)
    ops = set(groups[group].result().authorized_operations)
    assert ops == {AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
                   AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}


def test_denials_are_on_the_timeline_by_principal(kafka_emu_factory):
    topic = unique("topic")
    emu = kafka_emu_factory({**SETTINGS, "emu.acls": f"ALLOW User:bob WRITE TOPIC {topic}"},
                            topics={topic: 1})
    producer = KafkaProducer(bootstrap_servers=emu.bootstrap_servers, retries=0,
                             request_timeout_ms=10000)
    try:
        with pytest.raises(kerr.TopicAuthorizationFailedError):
            producer.send(topic, b"v").get(timeout=20)
    finally:
        producer.close(timeout=5)
    denied = emu.timeline(types=["AuthorizationDenied"])
    assert denied and {(e["principal"], e["resource_type"], e["resource_name"], e["error_code"])
                       for e in denied} == {(ANON, "TOPIC", topic, 29)}


def test_aiokafka_consumer_without_read_on_its_group(kafka_emu_factory):
    import asyncio
    from aiokafka import AIOKafkaConsumer
    from aiokafka import errors as aerr
    topic, group = unique("topic"), unique("group")
    emu = kafka_emu_factory({**SETTINGS, "emu.acls": f"ALLOW User:bob READ GROUP {group}"},
                            topics={topic: 1})

    async def consume():
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=emu.bootstrap_servers,
                                    group_id=group, auto_offset_reset="earliest")
        try:
            await consumer.start()
            await asyncio.wait_for(consumer.getone(), timeout=20)
        finally:
            await consumer.stop()
    with pytest.raises(aerr.GroupAuthorizationFailedError):
        asyncio.run(consume())


def test_kcat_producer_without_write_on_its_topic(kafka_emu_factory):
    import shutil
    import subprocess
    kcat = shutil.which("kcat")
    if kcat is None:
        pytest.skip("kcat not on PATH (Debian/Ubuntu: apt-get install -y kcat)")
    topic = unique("topic")
    emu = kafka_emu_factory({**SETTINGS, "emu.acls": f"ALLOW User:ANONYMOUS DESCRIBE TOPIC {topic}"},
                            topics={topic: 1})
    done = subprocess.run([kcat, "-b", emu.bootstrap_servers, "-P", "-t", topic],
                          input="v\n", capture_output=True, text=True, timeout=30)
    assert "Topic authorization failed" in done.stderr, done.stderr
    assert emu.broker.topics.partition(topic, 0).log_end_offset == 0
