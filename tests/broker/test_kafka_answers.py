"""Answers Kafka 4.x gives that kafka-emu got wrong (issue #8, "answer what Kafka answers" and
"limits Kafka enforces"); each test is named for what broke."""

from __future__ import annotations

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.create_topics import (CreatableReplicaAssignment,
                                                       CreatableTopic, CreateTopicsRequest)
from kafka_emu.protocol.messages.describe_groups import DescribeGroupsRequest
from kafka_emu.protocol.messages.metadata import MetadataRequest
from kafka_emu.testing.wire import WireClient

from test_server import JOIN, join_as_new_member, join_request

DESCRIBE = BY_NAME["DescribeGroups"]
METADATA = BY_NAME["Metadata"]
CREATE = BY_NAME["CreateTopics"]
UNSET = -(2**31)

# AclOperation codes: READ 3, DELETE 6, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11
KAFKA4_GROUP_OPERATIONS = 2**3 + 2**6 + 2**8 + 2**10 + 2**11
# CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
# IDEMPOTENT_WRITE 12
CLUSTER_OPERATIONS = 2**5 + 2**7 + 2**8 + 2**9 + 2**10 + 2**11 + 2**12


async def _group(bound, group="g"):
    client = await WireClient.connect(bound.host, bound.port)
    member = await join_as_new_member(client, group=group)
    joined = await client.request(JOIN, 5, join_request(member_id=member, group=group))
    assert joined.error_code == ErrorCode.NONE
    return client


async def test_describe_groups_operations_are_kafka4s_group_set_not_3x(start_broker):
    bound = await start_broker()
    client = await _group(bound)
    assert KAFKA4_GROUP_OPERATIONS == 3400
    for version in (3, 4, 5, 6):
        resp = await client.request(DESCRIBE, version, DescribeGroupsRequest(
            groups=["g"], include_authorized_operations=True))
        assert resp.groups[0].authorized_operations == 3400, version
        resp = await client.request(DESCRIBE, version, DescribeGroupsRequest(
            groups=["g"], include_authorized_operations=False))
        assert resp.groups[0].authorized_operations == UNSET


async def test_describe_groups_operations_left_unset_on_an_entry_with_an_error(start_broker):
    bound = await start_broker()
    client = await _group(bound)
    resp = await client.request(DESCRIBE, 6, DescribeGroupsRequest(
        groups=["g", "nobody"], include_authorized_operations=True))
    found, missing = resp.groups
    assert found.error_code == ErrorCode.NONE and found.authorized_operations == 3400
    assert missing.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert missing.authorized_operations == UNSET
    # v5 answers an unknown group with a Dead entry and no error: Kafka fills in the operations
    resp = await client.request(DESCRIBE, 5, DescribeGroupsRequest(
        groups=["nobody"], include_authorized_operations=True))
    assert resp.groups[0].error_code == ErrorCode.NONE
    assert resp.groups[0].authorized_operations == 3400


async def test_metadata_cluster_authorized_operations_were_never_filled_in(start_broker):
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    for version in (8, 9, 10):
        asked = await client.request(METADATA, version, MetadataRequest(
            topics=None, include_cluster_authorized_operations=True))
        assert asked.cluster_authorized_operations == CLUSTER_OPERATIONS == 8096, version
        not_asked = await client.request(METADATA, version, MetadataRequest(topics=None))
        assert not_asked.cluster_authorized_operations == UNSET


def _topic(name, partitions=-1, assignments=()):
    return CreatableTopic(name=name, num_partitions=partitions,
                          replication_factor=-1,
                          assignments=list(assignments), configs=[])


async def test_create_topics_over_ten_thousand_partitions_is_a_policy_violation(start_broker):
    bound = await start_broker()
    client = await WireClient.connect(bound.host, bound.port)
    for version in (2, 5, 7):
        resp = await client.request(CREATE, version, CreateTopicsRequest(
            topics=[_topic("big", 10_000), _topic("one", 1)]))
        assert [(t.name, t.error_code, t.error_message) for t in resp.topics] == [
            ("big", ErrorCode.POLICY_VIOLATION,
             "Excessively large number of partitions per request."),
            ("one", ErrorCode.POLICY_VIOLATION,
             "Excessively large number of partitions per request.")], version
    assert bound.broker.topics.lookup("big") is None and bound.broker.topics.lookup("one") is None
    # exactly 10,000 is allowed (validate_only: nothing is built)
    resp = await client.request(CREATE, 5, CreateTopicsRequest(
        topics=[_topic("big", 9_999), _topic("one", 1)], validate_only=True))
    assert [t.error_code for t in resp.topics] == [ErrorCode.NONE, ErrorCode.NONE]


async def test_create_topics_partition_cap_counts_defaults_and_assignments(start_broker):
    bound = await start_broker({"num.partitions": 5000})
    client = await WireClient.connect(bound.host, bound.port)
    # two topics at the default (-1) = 10,000, plus one by manual assignment = 10,001
    node = bound.broker.config.node_id
    resp = await client.request(CREATE, 5, CreateTopicsRequest(topics=[
        _topic("a"), _topic("b"),
        _topic("c", assignments=[CreatableReplicaAssignment(partition_index=0,
                                                            broker_ids=[node])])]))
    assert {t.error_code for t in resp.topics} == {ErrorCode.POLICY_VIOLATION}
    # a duplicated name is not forwarded to Kafka's controller, so it does not count
    resp = await client.request(CREATE, 5, CreateTopicsRequest(
        topics=[_topic("a"), _topic("b"), _topic("d", 1), _topic("d", 1)], validate_only=True))
    assert [(t.name, t.error_code) for t in resp.topics] == [
        ("a", ErrorCode.NONE), ("b", ErrorCode.NONE), ("d", ErrorCode.INVALID_REQUEST)]


async def test_create_topics_duplicate_names_get_one_result_each_as_kafka_4(start_broker):
    """Was: one "Found multiple entries" result per occurrence, in request order. Kafka 4.x's
    ControllerApis answers each duplicated name once, "Duplicate topic name.", after the
    created topics, in its HashSet's order (bar, bucket 2, before foo, bucket 7)."""
    bound = await start_broker()
    client = await WireClient.connect(bound.host, bound.port)
    resp = await client.request(CREATE, 7, CreateTopicsRequest(topics=[
        _topic("foo", 1), _topic("foo", 2), _topic("bar", 1), _topic("baz", 1),
        _topic("bar", 1)]))
    assert [(t.name, t.error_code, t.error_message) for t in resp.topics] == [
        ("baz", ErrorCode.NONE, None),
        ("bar", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("foo", ErrorCode.INVALID_REQUEST, "Duplicate topic name.")]
    assert bound.broker.topics.lookup("foo") is None


API_VERSIONS = BY_NAME["ApiVersions"]


async def test_versions_kafka_4_removed_are_no_longer_advertised_or_served(start_broker):
    import struct
    from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
    from kafka_emu.protocol.messages.offset_commit import OffsetCommitRequest
    bound = await start_broker()
    client = await WireClient.connect(bound.host, bound.port)
    resp = await client.request(API_VERSIONS, 3, ApiVersionsRequest(
        client_software_name="t", client_software_version="1"))
    ranges = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    # KIP-896: OffsetCommit 0-1, OffsetFetch 0, CreateTopics 0-1, DeleteTopics 0 are gone
    assert ranges[8] == (2, 10) and ranges[9] == (1, 10)
    assert ranges[19] == (2, 7) and ranges[20] == (1, 6)
    assert ranges[1] == (4, 18) and ranges[2] == (1, 11)
    # Kafka 4.x keeps listing Produce from v0 (KAFKA-18659) while refusing v0-2
    assert ranges[0] == (0, 13)
    # a removed version is refused as Kafka refuses any unsupported version: the connection closes
    await client.send(BY_NAME["OffsetCommit"], 2, OffsetCommitRequest(group_id="g", topics=[]))
    old = await WireClient.connect(bound.host, bound.port)
    body = struct.pack(">hhih", 8, 1, 9, 1) + b"w" + struct.pack(">h", 1) + b"g"
    await old.send_raw(struct.pack(">i", len(body)) + body)
    assert await old.receive_frame() is None
    produce_v2 = await WireClient.connect(bound.host, bound.port)
    body = struct.pack(">hhih", 0, 2, 9, 1) + b"w" + struct.pack(">hii", 1, 1000, 0)  # acks timeout []
    await produce_v2.send_raw(struct.pack(">i", len(body)) + body)
    assert await produce_v2.receive_frame() is None
    assert (await client.receive(BY_NAME["OffsetCommit"], 2)).topics == []


async def test_metadata_v10_v11_topic_by_id_only_is_invalid_request_not_an_internal_error(
        start_broker):
    import uuid
    from kafka_emu.protocol.messages.metadata import MetadataRequestTopic
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    topic_id = bound.broker.topics.lookup("t").topic_id
    for version in (10, 11):
        resp = await client.request(METADATA, version, MetadataRequest(
            topics=[MetadataRequestTopic(name=None, topic_id=topic_id)]))
        # Kafka's MetadataRequest.getErrorResponse: each requested topic, null name as ""
        assert [(t.error_code, t.name, t.partitions) for t in resp.topics] == [
            (ErrorCode.INVALID_REQUEST, "", [])], version
        resp = await client.request(METADATA, version, MetadataRequest(
            topics=[MetadataRequestTopic(name="t", topic_id=uuid.uuid4())]))
        assert [t.error_code for t in resp.topics] == [ErrorCode.INVALID_REQUEST]
    # v12 serves a topic by id; the connection is still open after the refusals
    resp = await client.request(METADATA, 12, MetadataRequest(
        topics=[MetadataRequestTopic(name=None, topic_id=topic_id)]))
    assert [(t.error_code, t.name) for t in resp.topics] == [(ErrorCode.NONE, "t")]
    assert bound.broker.unexpected == []


async def test_delete_topics_duplicate_name_deletes_nothing_as_kafka_4(start_broker):
    """Was: a name given twice was deleted by the first entry and UNKNOWN_TOPIC_OR_PARTITION for
    the second. Kafka 4.x's ControllerApis refuses the name once ("Duplicate topic name.") and
    deletes nothing under it; the same for ids, names that alias a given id, and entries with
    neither or both."""
    import uuid
    from kafka_emu.protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
    delete = BY_NAME["DeleteTopics"]
    zero = uuid.UUID(int=0)
    bound = await start_broker(topics={"a": 1, "b": 1, "c": 1, "d": 1, "e": 1})
    client = await WireClient.connect(bound.host, bound.port)
    resp = await client.request(delete, 5, DeleteTopicsRequest(
        topic_names=["a", "b", "a", "nope"], timeout_ms=1000))
    assert [(t.name, t.error_code, t.error_message) for t in resp.responses] == [
        ("a", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
         "This server does not host this topic-partition."),
        ("b", ErrorCode.NONE, None)]
    topics = bound.broker.topics
    assert topics.lookup("a") is not None and topics.lookup("b") is None
    a_id, c_id, d_id, e_id = (topics.lookup(n).topic_id for n in "acde")
    resp = await client.request(delete, 6, DeleteTopicsRequest(topics=[
        DeleteTopicState(name=None, topic_id=c_id), DeleteTopicState(name=None, topic_id=c_id),
        DeleteTopicState(name="d", topic_id=zero), DeleteTopicState(name=None, topic_id=d_id),
        DeleteTopicState(name=None, topic_id=zero), DeleteTopicState(name="e", topic_id=e_id),
        DeleteTopicState(name="a", topic_id=zero)], timeout_ms=1000))
    assert [(t.name, t.topic_id, t.error_code, t.error_message) for t in resp.responses] == [
        (None, zero, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified."),
        ("e", e_id, ErrorCode.INVALID_REQUEST,
         "You may not specify both topic name and topic id."),
        (None, c_id, ErrorCode.INVALID_REQUEST, "Duplicate topic id."),
        ("d", d_id, ErrorCode.INVALID_REQUEST,
         "The provided topic name maps to an ID that was already supplied."),
        ("a", a_id, ErrorCode.NONE, None)]
    assert [n for n in "acde" if topics.lookup(n) is not None] == ["c", "d", "e"]
