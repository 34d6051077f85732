"""The versions Kafka 4.1-4.3 added, over the wire, encoded and decoded by kafka-python 3's classes
(generated from Kafka 4.3's JSON schemas): an encoder independent of kafka-emu's codec.

OffsetCommit / OffsetFetch v10 name topics by id (KIP-848), ListOffsets v11 the earliest
pending upload (-6, KIP-1023), DescribeLogDirs v5 IsCordoned, DescribeCluster v2 fenced brokers
(KIP-1073), ListConfigResources v0-1 (KIP-1142).
"""

from __future__ import annotations

import struct
import uuid

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import OffsetCommitRequest, OffsetCommitResponse
from kafka.protocol.consumer import OffsetFetchRequest, OffsetFetchResponse

from kafka_emu.errors import ErrorCode
from kafka_emu.testing.wire import WireClient


def _kp(name: str):
    import importlib
    import pkgutil

    import kafka.protocol as kp
    for mod in pkgutil.walk_packages(kp.__path__, "kafka.protocol."):
        found = getattr(importlib.import_module(mod.name), name, None)
        if isinstance(found, type) and issubclass(found, ApiMessage):
            return found
    raise LookupError(name)


async def kp_call(client: WireClient, request, response_cls, version: int):
    """Send kafka-python's ``request`` at ``version`` (request header v2, flexible) and decode
    the answer with ``response_cls`` (response header v1)."""
    body = bytes(ApiMessage.encode(request, version=version))
    client_id = b"kp"
    header = struct.pack(">hhih", request.API_KEY, version, 77, len(client_id)) + client_id + b"\0"
    frame = header + body
    await client.send_raw(struct.pack(">i", len(frame)) + frame)
    answer = await client.receive_frame()
    assert answer is not None, "the broker closed the connection"
    assert struct.unpack(">i", answer[:4])[0] == 77 and answer[4] == 0  # correlation id, no tags
    return ApiMessage.decode.__func__(response_cls, answer[5:], version=version)


def _commit(group: str, topic_id, partitions):
    T = OffsetCommitRequest.OffsetCommitRequestTopic
    P = T.OffsetCommitRequestPartition
    return OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                               topics=[T(topic_id=topic_id, partitions=[
                                   P(partition_index=i, committed_offset=o, committed_metadata="m")
                                   for i, o in partitions])])


async def test_offset_commit_and_fetch_v10_by_topic_id(start_broker):
    bound = await start_broker(topics={"t": 2})
    topic_id = bound.broker.topics.lookup("t").topic_id
    client = await WireClient.connect(bound.host, bound.port)
    ghost = uuid.uuid4()
    resp = await kp_call(client, _commit("g", topic_id, [(0, 5), (1, 9), (7, 1)]),
                         OffsetCommitResponse, 10)
    assert [(t.topic_id, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in resp.topics] == [(topic_id, [
                (0, ErrorCode.NONE), (1, ErrorCode.NONE),
                (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)])]
    resp = await kp_call(client, _commit("g", ghost, [(0, 1)]), OffsetCommitResponse, 10)
    assert [(t.topic_id, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in resp.topics] == [(ghost, [(0, ErrorCode.UNKNOWN_TOPIC_ID)])]

    G = OffsetFetchRequest.OffsetFetchRequestGroup
    T = G.OffsetFetchRequestTopics
    fetch = OffsetFetchRequest(groups=[G(group_id="g", topics=[
        T(topic_id=ghost, partition_indexes=[0]), T(topic_id=topic_id, partition_indexes=[0, 1])])])
    resp = await kp_call(client, fetch, OffsetFetchResponse, 10)
    (group,) = resp.groups
    assert group.error_code == ErrorCode.NONE
    assert [(t.topic_id, [(p.partition_index, p.committed_offset, p.error_code)
                          for p in t.partitions]) for t in group.topics] == [
        (ghost, [(0, -1, ErrorCode.UNKNOWN_TOPIC_ID)]),
        (topic_id, [(0, 5, ErrorCode.NONE), (1, 9, ErrorCode.NONE)])]
    every = OffsetFetchRequest(groups=[G(group_id="g", topics=None)])
    resp = await kp_call(client, every, OffsetFetchResponse, 10)
    assert [(t.topic_id, sorted(p.committed_offset for p in t.partitions))
            for t in resp.groups[0].topics] == [(topic_id, [5, 9])]


async def test_list_offsets_v11_earliest_pending_upload_is_unknown_without_tiered_storage(
        start_broker):
    request_cls, response_cls = _kp("ListOffsetsRequest"), _kp("ListOffsetsResponse")
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    T = request_cls.ListOffsetsTopic
    P = T.ListOffsetsPartition
    request = request_cls(replica_id=-1, isolation_level=0, timeout_ms=1000,
                          topics=[T(name="t", partitions=[P(partition_index=0, timestamp=-6)])])
    resp = await kp_call(client, request, response_cls, 11)
    p = resp.topics[0].partitions[0]
    assert (p.error_code, p.timestamp, p.offset, p.leader_epoch) == (ErrorCode.NONE, -1, -1, -1)
    # v10 does not know -6: UNSUPPORTED_VERSION for the partition (timestampMinSupportedVersion)
    resp = await kp_call(client, request, response_cls, 10)
    assert resp.topics[0].partitions[0].error_code == ErrorCode.UNSUPPORTED_VERSION


async def test_describe_log_dirs_v5_and_describe_cluster_v2(start_broker):
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    logdirs = await kp_call(client, _kp("DescribeLogDirsRequest")(topics=None),
                            _kp("DescribeLogDirsResponse"), 5)
    (result,) = logdirs.results
    assert result.is_cordoned is False and [t.name for t in result.topics] == ["t"]
    cluster = await kp_call(client, _kp("DescribeClusterRequest")(
        include_cluster_authorized_operations=False, include_fenced_brokers=True),
        _kp("DescribeClusterResponse"), 2)
    assert cluster.error_code == ErrorCode.NONE
    assert [(b.broker_id, b.is_fenced) for b in cluster.brokers] == [
        (bound.broker.cluster.first_node_id, False)]


async def test_list_config_resources_v0_v1(start_broker):
    request_cls = _kp("ListConfigResourcesRequest")
    response_cls = _kp("ListConfigResourcesResponse")
    bound = await start_broker(topics={"t": 1})
    bound.broker.resource_configs.group_overrides["g"] = {"consumer.session.timeout.ms": "45000"}
    client = await WireClient.connect(bound.host, bound.port)
    node = str(bound.broker.cluster.first_node_id)
    every = await kp_call(client, request_cls(resource_types=[]), response_cls, 1)
    assert every.error_code == ErrorCode.NONE
    assert [(r.resource_name, r.resource_type) for r in every.config_resources] == [
        ("g", 32), (node, 8), (node, 4), ("t", 2)]
    topics = await kp_call(client, request_cls(resource_types=[2]), response_cls, 1)
    assert [r.resource_name for r in topics.config_resources] == ["t"]
    wrong = await kp_call(client, request_cls(resource_types=[2, 64]), response_cls, 1)
    assert (wrong.error_code, wrong.config_resources) == (ErrorCode.UNSUPPORTED_VERSION, [])
    v0 = await kp_call(client, request_cls(), response_cls, 0)  # client metrics: none here
    assert (v0.error_code, v0.config_resources) == (ErrorCode.NONE, [])


def _records(value: bytes) -> bytes:
    from kafka.record.memory_records import MemoryRecordsBuilder
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 16)
    builder.append(timestamp=1000, key=b"k", value=value, headers=[])
    builder.close()
    return bytes(builder.buffer())


async def test_produce_v13_by_topic_id(start_broker):
    request_cls, response_cls = _kp("ProduceRequest"), _kp("ProduceResponse")
    bound = await start_broker(topics={"t": 1})
    topic_id = bound.broker.topics.lookup("t").topic_id
    ghost = uuid.uuid4()
    client = await WireClient.connect(bound.host, bound.port)
    T = request_cls.TopicProduceData
    P = T.PartitionProduceData
    request = request_cls(transactional_id=None, acks=1, timeout_ms=1000, topic_data=[
        T(topic_id=topic_id, partition_data=[P(index=0, records=_records(b"a")),
                                             P(index=3, records=_records(b"b"))]),
        T(topic_id=ghost, partition_data=[P(index=0, records=_records(b"c"))])])
    resp = await kp_call(client, request, response_cls, 13)
    assert [(t.topic_id, [(p.index, p.error_code, p.base_offset) for p in t.partition_responses])
            for t in resp.responses] == [
        (topic_id, [(0, ErrorCode.NONE, 0), (3, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)]),
        (ghost, [(0, ErrorCode.UNKNOWN_TOPIC_ID, -1)])]
    assert bound.broker.topics.partition("t", 0).high_watermark == 1
    # the same bytes at v12 name the topic: the name path still answers by name
    request = request_cls(transactional_id=None, acks=1, timeout_ms=1000, topic_data=[
        T(name="t", partition_data=[P(index=0, records=_records(b"d"))])])
    resp = await kp_call(client, request, response_cls, 12)
    assert [(t.name, t.partition_responses[0].base_offset) for t in resp.responses] == [("t", 1)]
