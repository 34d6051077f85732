"""Admin clients against kafka-emu: KIP-518 group listing with a state filter, describing
groups, and creating/deleting topics including the error cases (issues 4 and 5)."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, ConsumerGroupState, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient
from kafka import errors as kerr

from .helpers import HEARTBEAT_MS, SESSION_TIMEOUT_MS, unique, wait_until

PARTITIONS = 3


@pytest.fixture
def two_groups(kafka_emu_factory):
    """An emulator with one Stable group (a live consumer) and one Empty group (committed, closed)."""
    topic = unique("topic")
    emu = kafka_emu_factory(topics={topic: PARTITIONS})
    stable, empty = unique("stable"), unique("empty")

    def consumer(group):
        c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
                      "session.timeout.ms": SESSION_TIMEOUT_MS,
                      "heartbeat.interval.ms": HEARTBEAT_MS, "auto.offset.reset": "earliest"})
        c.subscribe([topic])
        wait_until(lambda: c.assignment(), tick=lambda: c.poll(0.05),
                   message=f"{group} to get an assignment")
        return c

    gone = consumer(empty)
    gone.close()
    live = consumer(stable)
    wait_until(lambda: emu.describe_group(stable).state == "Stable", message="Stable group")
    wait_until(lambda: emu.describe_group(empty).state == "Empty", message="Empty group")
    yield emu, topic, stable, empty
    live.close()


# --- group listing and description -------------------------------------------------------------

def test_confluent_lists_groups_by_state_and_describes(two_groups):
    emu, topic, stable, empty = two_groups
    admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})

    def listed(states):
        result = admin.list_consumer_groups(states=states, request_timeout=10).result()
        assert not result.errors, result.errors
        return {(g.group_id, g.state) for g in result.valid}

    assert listed({ConsumerGroupState.STABLE}) == {(stable, ConsumerGroupState.STABLE)}
    assert listed({ConsumerGroupState.EMPTY}) == {(empty, ConsumerGroupState.EMPTY)}
    assert listed({ConsumerGroupState.STABLE, ConsumerGroupState.EMPTY}) == {
        (stable, ConsumerGroupState.STABLE), (empty, ConsumerGroupState.EMPTY)}
    assert {g for g, _ in listed(None)} == {stable, empty}

    described = admin.describe_consumer_groups([stable, empty], request_timeout=10)
    s = described[stable].result()
    assert s.state == ConsumerGroupState.STABLE
    assert s.partition_assignor == "range"
    assert len(s.members) == 1
    assert {(tp.topic, tp.partition) for tp in s.members[0].assignment.topic_partitions} == {
        (topic, p) for p in range(PARTITIONS)}
    e = described[empty].result()
    assert e.state == ConsumerGroupState.EMPTY and not e.members


def test_kafka_python_lists_groups_by_state_and_describes(two_groups):
    emu, topic, stable, empty = two_groups
    admin = KafkaAdminClient(bootstrap_servers=emu.bootstrap_servers)
    try:
        def ids(groups):
            return {g["group_id"] if isinstance(g, dict) else g[0] for g in groups}

        assert ids(admin.list_groups(states_filter=["Stable"])) == {stable}
        assert ids(admin.list_groups(states_filter=["Empty"])) == {empty}
        assert ids(admin.list_groups(states_filter=["Stable", "Empty"])) == {stable, empty}
        assert ids(admin.list_groups()) == {stable, empty}

        described = admin.describe_groups([stable, empty])
        s, e = described[stable], described[empty]
        assert s["group_state"] == "Stable", s
        assert s["protocol_type"] == "consumer"
        assert len(s["members"]) == 1
        assert e["group_state"] == "Empty" and not e["members"], e
    finally:
        admin.close()


# --- topics ------------------------------------------------------------------------------------

def _confluent_create(admin, topic: NewTopic):
    return admin.create_topics([topic], request_timeout=10)[topic.topic]


def test_confluent_create_and_delete_topics(kafka_emu):
    admin = AdminClient({"bootstrap.servers": kafka_emu.bootstrap_servers})
    name = unique("t")
    _confluent_create(admin, NewTopic(name, num_partitions=4, replication_factor=1)).result()
    md = admin.list_topics(topic=name, timeout=10)
    assert len(md.topics[name].partitions) == 4

    cases = [
        (NewTopic(name, num_partitions=1, replication_factor=1), KafkaError.TOPIC_ALREADY_EXISTS),
        (NewTopic(unique("t"), num_partitions=0, replication_factor=1), KafkaError.INVALID_PARTITIONS),
        (NewTopic(unique("t"), num_partitions=1, replication_factor=3),
         KafkaError.INVALID_REPLICATION_FACTOR),
        (NewTopic("bad/name", num_partitions=1, replication_factor=1), KafkaError.TOPIC_EXCEPTION),
    ]
    for new, code in cases:
        with pytest.raises(KafkaException) as info:
            _confluent_create(admin, new).result()
        assert info.value.args[0].code() == code, (new.topic, info.value)

    admin.delete_topics([name], request_timeout=10)[name].result()
    # Listing this one topic would auto-create it again: check the deletion with kafka-python.
    other = KafkaAdminClient(bootstrap_servers=kafka_emu.bootstrap_servers)
    try:
        wait_until(lambda: name not in other.list_topics(), message="topic deleted")
    finally:
        other.close()
    with pytest.raises(KafkaException) as info:
        admin.delete_topics([name], request_timeout=10)[name].result()
    assert info.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_kafka_python_create_and_delete_topics(kafka_emu):
    admin = KafkaAdminClient(bootstrap_servers=kafka_emu.bootstrap_servers)
    try:
        name = unique("t")
        admin.create_topics({name: {"num_partitions": 2, "replication_factor": 1}})
        assert name in admin.list_topics()

        cases = [
            ({name: {"num_partitions": 1, "replication_factor": 1}}, kerr.TopicAlreadyExistsError),
            ({unique("t"): {"num_partitions": 0, "replication_factor": 1}}, kerr.InvalidPartitionsError),
            ({unique("t"): {"num_partitions": 1, "replication_factor": 3}},
             kerr.InvalidReplicationFactorError),
            ({"bad name!": {"num_partitions": 1, "replication_factor": 1}}, kerr.InvalidTopicError),
            ({"a" * 250: {"num_partitions": 1, "replication_factor": 1}}, kerr.InvalidTopicError),
        ]
        for new, error in cases:
            with pytest.raises(error):
                admin.create_topics(new)

        admin.delete_topics([name])
        wait_until(lambda: name not in admin.list_topics(), message="topic deleted")
        with pytest.raises(kerr.UnknownTopicOrPartitionError):
            admin.delete_topics([name])
    finally:
        admin.close()


def test_confluent_lists_all_topics_regression_trailing_bytes(kafka_emu_factory):
    emu = kafka_emu_factory(topics={"listed": 2})
    admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
    assert "listed" in admin.list_topics(timeout=5).topics


def test_confluent_describe_cluster_reported_no_operations(two_groups):
    """librdkafka's DescribeCluster (Metadata v8-10 IncludeClusterAuthorizedOperations) showed no
    operations; without an authorizer Kafka reports every cluster operation, and Kafka 4.x's
    group set (with DESCRIBE_CONFIGS and ALTER_CONFIGS) for groups."""
    from confluent_kafka.admin import AclOperation as Op
    emu, _, stable, _ = two_groups
    admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
    cluster = admin.describe_cluster(include_authorized_operations=True,
                                     request_timeout=30).result()
    assert set(cluster.authorized_operations) == {
        Op.CREATE, Op.ALTER, Op.DESCRIBE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS,
        Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE}
    (future,) = admin.describe_consumer_groups(
        [stable], include_authorized_operations=True, request_timeout=30).values()
    assert set(future.result().authorized_operations) == {
        Op.READ, Op.DELETE, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS}
