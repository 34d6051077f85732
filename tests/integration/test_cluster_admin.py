"""The admin APIs client libraries call beyond groups and topics (issue #13, item 3):
CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, DescribeCluster and
DescribeTopicPartitions, driven by confluent-kafka's and kafka-python's admin clients."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaException, TopicCollection
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                   ConfigSource, NewPartitions)
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource as KPConfigResource
from kafka.admin import ConfigResourceType, NewPartitions as KPNewPartitions

from .helpers import HEARTBEAT_MS, SESSION_TIMEOUT_MS, unique, wait_until


@pytest.fixture
def emu(kafka_emu_factory):
    return kafka_emu_factory({"log.retention.bytes": 5_000_000})


def confluent(emu) -> AdminClient:
    return AdminClient({"bootstrap.servers": emu.bootstrap_servers})


def test_confluent_describe_cluster_lists_this_broker_and_cluster_operations(emu):
    admin = confluent(emu)  # keep a reference: a collected client cancels its futures
    result = admin.describe_cluster(include_authorized_operations=True,
                                    request_timeout=10).result()
    assert result.cluster_id == emu.config.cluster_id
    assert [n.id for n in result.nodes] == [emu.config.node_id]
    assert result.controller.id == emu.config.node_id
    ops = {op.name for op in result.authorized_operations}
    assert ops == {"CREATE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS",
                   "ALTER_CONFIGS", "IDEMPOTENT_WRITE"}


def test_confluent_create_partitions_grows_a_topic_and_refuses_shrinking(emu):
    topic = unique("grow")
    emu.create_topic(topic, 2)
    admin = confluent(emu)
    admin.create_partitions([NewPartitions(topic, 5)], request_timeout=10)[topic].result()
    assert len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 5
    with pytest.raises(KafkaException) as shrink:
        admin.create_partitions([NewPartitions(topic, 3)], request_timeout=10)[topic].result()
    assert shrink.value.args[0].name() == "INVALID_PARTITIONS"
    assert "would not be an increase" in shrink.value.args[0].str()
    absent = unique("none")
    futures = admin.create_partitions([NewPartitions(absent, 3)], request_timeout=10)
    with pytest.raises(KafkaException) as missing:
        futures[absent].result()
    assert missing.value.args[0].name() == "UNKNOWN_TOPIC_OR_PART"  # librdkafka's name
    # validate_only changes nothing
    admin.create_partitions([NewPartitions(topic, 9)], validate_only=True,
                            request_timeout=10)[topic].result()
    assert len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 5


def test_confluent_describe_and_alter_topic_configs(emu):
    topic = unique("cfg")
    emu.create_topic(topic, 1)
    admin = confluent(emu)
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)

    def described():
        return admin.describe_configs([resource], request_timeout=10)[resource].result()

    configs = described()
    assert configs["retention.ms"].value == "604800000"
    assert configs["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    # the broker was started with log.retention.bytes: a static broker config for the topic
    assert configs["retention.bytes"].value == "5000000"
    assert configs["retention.bytes"].source == ConfigSource.STATIC_BROKER_CONFIG.value

    admin.incremental_alter_configs([ConfigResource(
        ConfigResource.Type.TOPIC, topic, incremental_configs=[
            ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry("cleanup.policy", "compact",
                        incremental_operation=AlterConfigOpType.APPEND)])],
        request_timeout=10)[resource].result()
    configs = described()
    assert configs["retention.ms"].value == "1000"
    assert configs["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["cleanup.policy"].value == "delete,compact"

    admin.incremental_alter_configs([ConfigResource(
        ConfigResource.Type.TOPIC, topic, incremental_configs=[
            ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)])],
        request_timeout=10)[resource].result()
    assert described()["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value

    with pytest.raises(KafkaException) as bad:
        admin.incremental_alter_configs([ConfigResource(
            ConfigResource.Type.TOPIC, topic, incremental_configs=[
                ConfigEntry("no.such.config", "1", incremental_operation=AlterConfigOpType.SET)])],
            request_timeout=10)[resource].result()
    assert bad.value.args[0].name() == "INVALID_CONFIG"
    assert described()["cleanup.policy"].value == "delete,compact"  # nothing changed


def test_confluent_describe_broker_configs_shows_what_kafka_emu_was_started_with(emu):
    admin = confluent(emu)
    resource = ConfigResource(ConfigResource.Type.BROKER, str(emu.config.node_id))
    configs = admin.describe_configs([resource], request_timeout=10)[resource].result()
    assert configs["log.retention.bytes"].value == "5000000"
    assert configs["log.retention.bytes"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert configs["group.max.session.timeout.ms"].value == "1800000"
    assert configs["group.max.session.timeout.ms"].source == ConfigSource.DEFAULT_CONFIG.value


def test_confluent_describe_topics_uses_describe_topic_partitions(emu):
    topic = unique("dtp")
    emu.create_topic(topic, 4)
    admin = confluent(emu)
    described = admin.describe_topics(TopicCollection([topic]), request_timeout=10)[topic].result()
    assert [p.id for p in described.partitions] == [0, 1, 2, 3]
    assert all(p.leader.id == emu.config.node_id for p in described.partitions)
    assert not described.is_internal


def test_a_subscribed_confluent_consumer_picks_up_added_partitions(emu):
    topic, group = unique("more"), unique("g")
    emu.create_topic(topic, 1)
    consumer = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
                         "session.timeout.ms": SESSION_TIMEOUT_MS,
                         "heartbeat.interval.ms": HEARTBEAT_MS,
                         "topic.metadata.refresh.interval.ms": 500})
    try:
        consumer.subscribe([topic])
        wait_until(lambda: len(consumer.assignment()) == 1, tick=lambda: consumer.poll(0.05),
                   message="the first partition")
        admin = confluent(emu)
        admin.create_partitions([NewPartitions(topic, 3)], request_timeout=10)[topic].result()
        wait_until(lambda: len(consumer.assignment()) == 3, tick=lambda: consumer.poll(0.05),
                   timeout=30, message="a rebalance onto the added partitions")
    finally:
        consumer.close()


def test_kafka_python_admin_create_partitions_and_configs(emu):
    topic = unique("kp")
    emu.create_topic(topic, 1)
    admin = KafkaAdminClient(bootstrap_servers=emu.bootstrap_servers)
    try:
        admin.create_partitions({topic: KPNewPartitions(total_count=4)})
        assert len(admin.describe_topics([topic])[0]["partitions"]) == 4
        admin.alter_configs([KPConfigResource(ConfigResourceType.TOPIC, topic,
                                              configs={"max.message.bytes": "2000000"})])
        described = admin.describe_configs([KPConfigResource(ConfigResourceType.TOPIC, topic)],
                                           config_filter="all")
        [entries] = [by_name[topic] for by_name in described.values()]
        assert entries["max.message.bytes"]["value"] == "2000000"
        assert entries["retention.ms"]["value"] == "604800000"
        cluster = admin.describe_cluster()
        assert cluster["cluster_id"] == emu.config.cluster_id
    finally:
        admin.close()


def test_kafka_python_describe_log_dirs_shows_the_bytes_each_partition_holds(emu):
    from kafka import KafkaProducer
    topic = unique("dirs")
    emu.create_topic(topic, 2)
    producer = KafkaProducer(bootstrap_servers=emu.bootstrap_servers)
    producer.send(topic, b"x" * 1000, partition=1).get(timeout=10)
    producer.close()
    admin = KafkaAdminClient(bootstrap_servers=emu.bootstrap_servers)
    try:
        described = admin.describe_log_dirs({topic: [0, 1]})
    finally:
        admin.close()
    [broker] = described
    assert broker["broker"] == emu.config.node_id
    [log_dir] = broker["log_dirs"]
    assert log_dir["log_dir"] == "/kafka-emu/in-memory"
    sizes = {p["partition_index"]: p["partition_size"]
             for t in log_dir["topics"] if t["name"] == topic for p in t["partitions"]}
    assert sizes[0] == 0 and sizes[1] > 1000


def test_confluent_elect_leaders_needs_no_election_with_one_replica(emu):
    from confluent_kafka import TopicPartition
    from confluent_kafka import ElectionType
    topic = unique("elect")
    emu.create_topic(topic, 2)
    admin = confluent(emu)
    # (confluent-kafka 2.16's binding raises SystemError for keyword options here)
    result = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, 0),
                                                          TopicPartition(topic, 5)]).result()
    errors = {tp.partition: error.name() for tp, error in result.items()}
    assert errors == {0: "ELECTION_NOT_NEEDED", 5: "UNKNOWN_TOPIC_OR_PART"}


def elect_after_a_broker_stopped(admin: AdminClient, tps: list, stopped: int) -> dict:
    """A preferred election sent right after a broker stopped. librdkafka sends admin requests
    to the controller its cached metadata names; if that is the stopped broker, the request
    waits for it until it times out (_TIMED_OUT, "Timed out waiting for controller"), or fails
    with _TRANSPORT on the connection the stop dropped, or with _DESTROY_BROKER when new
    metadata retires the broker handle it waits on; librdkafka does not retry admin requests,
    as against Kafka. So first wait until the client's metadata names a live controller (a
    user would), then retry the transient failures once more metadata is in."""
    from confluent_kafka import ElectionType, KafkaError
    transient = (KafkaError._TRANSPORT, KafkaError._DESTROY_BROKER, KafkaError._TIMED_OUT)

    def fresh_metadata():
        try:
            return admin.list_topics(timeout=10)
        except KafkaException as exc:
            if exc.args[0].code() not in transient:
                raise
            return None

    def names_a_live_controller():
        meta = fresh_metadata()
        return meta is not None and stopped not in meta.brokers and meta.controller_id != stopped

    wait_until(names_a_live_controller, message="metadata without the stopped broker")
    for _ in range(5):
        try:
            return admin.elect_leaders(ElectionType.PREFERRED, tps).result()
        except KafkaException as exc:
            if exc.args[0].code() not in transient:
                raise
            fresh_metadata()
    raise AssertionError("the election failed five times for a dropped connection")


def test_confluent_elect_leaders_on_a_cluster_moves_leadership_back_to_the_preferred_replica(
        kafka_emu_factory):
    from confluent_kafka import ElectionType, TopicPartition
    emu = kafka_emu_factory(brokers=3)
    topic = unique("elect3")
    emu.create_topic(topic, 2, replication_factor=3)
    admin = confluent(emu)
    placed = emu.partition(topic, 0)
    preferred = placed["replicas"][0]
    other = next(r for r in placed["replicas"] if r != preferred)
    epoch = emu.move_leader(topic, 0, other)["leader_epoch"]

    def leader_seen_by_client():
        meta = admin.list_topics(topic, timeout=10).topics[topic].partitions[0]
        return meta.leader

    assert leader_seen_by_client() == other
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    result = admin.elect_leaders(ElectionType.PREFERRED, tps).result()
    # partition 1 was never moved: its preferred replica leads already
    assert {tp.partition: (e.name() if e else None) for tp, e in result.items()} == {
        0: None, 1: "ELECTION_NOT_NEEDED"}
    assert emu.partition(topic, 0)["leader"] == preferred
    assert emu.partition(topic, 0)["leader_epoch"] == epoch + 1
    assert leader_seen_by_client() == preferred

    # the preferred replica stopped: leadership went elsewhere and cannot come back yet
    emu.stop_broker(preferred)
    result = elect_after_a_broker_stopped(admin, tps[:1], preferred)
    assert [e.name() for e in result.values()] == ["PREFERRED_LEADER_NOT_AVAILABLE"]
    emu.start_broker(preferred)
    result = admin.elect_leaders(ElectionType.PREFERRED, tps[:1]).result()
    assert list(result.values()) == [None]
    assert emu.partition(topic, 0)["leader"] == preferred
