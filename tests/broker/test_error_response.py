"""The one error-response builder, for every API and version the broker serves.

Each error response is encoded with our codec and read back by an independent decoder --
kafka-python's generated classes where they know the version, its older Struct classes where
only those do, our own decoder otherwise -- and the error must sit where clients read it: the
top-level error code where the version has one, else every entry answering a request entry.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from kafka_emu.broker.error_response import error_response
from kafka_emu.broker.handlers import HANDLERS, Handler, advertised_versions
from kafka_emu.errors import ErrorCode, KafkaError
from kafka_emu.protocol import BY_NAME, decode, encode
from kafka_emu.protocol.messages import describe_groups as dg
from kafka_emu.protocol.messages import fetch as fe
from kafka_emu.protocol.messages import find_coordinator as fc
from kafka_emu.protocol.messages import metadata as md
from kafka_emu.protocol.messages import offset_commit as oc
from kafka_emu.protocol.messages import offset_fetch as of
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.protocol.registry import APIS
from kafka_emu.protocol.schema import Array, fields_of
from kafka_emu.testing.strategies import messages
from kafka_emu.testing.wire import WireClient

sys.path.insert(0, str(Path(__file__).parent.parent / "protocol"))
from kp_bridge import (differences, kp_class, kp_decode, kp_versions, old_class,  # noqa: E402
                       old_values, to_old)

CODE = ErrorCode.NOT_COORDINATOR
# Kafka answers these per log dir, not per request entry; below v3 the error shows nowhere
TOP_ONLY = {"DescribeLogDirs"}
SERVED = [(APIS[key], v) for key, served in advertised_versions().items() for v in served]


def _top_code(cls, version):
    return any(s.name == "error_code" and version in s.versions for s in fields_of(cls))


def _entry_codes(msg, version):
    """Error codes of every response entry that has one (walking the declaration)."""
    found = []
    for spec in fields_of(type(msg)):
        if version not in spec.versions:
            continue
        if isinstance(spec.type, Array) and isinstance(spec.type.element, type):
            for item in getattr(msg, spec.name):
                if any(s.name == "error_code" for s in fields_of(type(item))):
                    found.append(item.error_code)
                found += _entry_codes(item, version)
    return found


def _decoded_independently(cls, version, data, ours):
    """Decode ``data`` with kafka-python (or our codec where it has no class) and check it reads
    the same values as ``ours``."""
    kcls = kp_class(cls)
    if kcls is not None and version in kp_versions(kcls):
        theirs = kp_decode(kcls, version, data)
        flexible = version in cls.__kafka__.flexible
        problems = differences(ours, theirs, cls, kcls._struct, version, flexible)
        assert not problems, "\n".join(problems)
        return "kafka-python"
    old = old_class(cls, version)
    if old is not None:
        assert old_values(old.decode(data)) == to_old(ours, cls, version)
        return "kafka-python (old)"
    assert decode(cls, version, data) == ours
    return "ours"


def _check(api, version, request):
    response = error_response(api, version, request, CODE, "m")
    if response is None:  # acks=0 Produce: Kafka does not answer either
        assert api.name == "Produce" and request.acks == 0
        return
    data = encode(response, version)
    _decoded_independently(api.response, version, data, response)
    codes = _entry_codes(response, version)
    assert all(code == CODE for code in codes), codes
    if _top_code(api.response, version):
        assert response.error_code == CODE
    else:
        # no top-level code: each request entry gets an entry carrying the error
        assert codes or not _request_keys(request, version) or api.name in TOP_ONLY, (
            f"{api.name} v{version}: the error reaches no entry")


def _request_keys(struct, version):
    """Whether the request names anything: an entry at the bottom of its arrays (a topic
    without partitions names no partition)."""
    for s in fields_of(type(struct)):
        if version not in s.versions or not isinstance(s.type, Array):
            continue
        for item in getattr(struct, s.name) or ():
            if not isinstance(s.type.element, type) or not _has_arrays(item, version) \
                    or _request_keys(item, version):
                return True
    return False


def _has_arrays(struct, version):
    return any(version in s.versions and isinstance(s.type, Array)
               for s in fields_of(type(struct)))


@pytest.mark.parametrize("api,version", SERVED, ids=[f"{a.name}-v{v}" for a, v in SERVED])
def test_error_response_for_every_served_version(api, version):
    _check(api, version, api.request())

    @settings(max_examples=8, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(messages(api.request, version))
    def check(request):
        _check(api, version, request)

    check()


SHARE_APIS = (76, 77, 78, 79, 90, 91, 92)


def test_every_served_version_has_an_independent_decoder_mostly():
    # the versions only our own decoder checks stay few
    # (KIP-848's ConsumerGroupHeartbeat/Describe are absent from kafka-python altogether; librdkafka
    # decodes them in tests/integration/test_consumer_protocol_confluent.py. KIP-932's share APIs
    # are absent too: a hand-built struct codec decodes them in tests/broker/test_share_group_wire.py
    # and tests/integration/test_share_fetch*_wire.py, librdkafka's ShareConsumer in the
    # integration tests and tests/protocol/test_share_golden.py)
    ours_only = [f"{a.name} v{v}" for a, v in SERVED if a.key not in (68, 69, *SHARE_APIS)
                 if (kp_class(a.response) is None or v not in kp_versions(kp_class(a.response)))
                 and old_class(a.response, v) is None]
    assert len(ours_only) <= 3, ours_only


# -- Kafka's per-API shapes ------------------------------------------------------------------

def _produce(acks=-1):
    return pr.ProduceRequest(acks=acks, timeout_ms=1000, topic_data=[pr.TopicProduceData(
        name="t", partition_data=[pr.PartitionProduceData(index=0),
                                  pr.PartitionProduceData(index=2)])])


def test_produce_errors_every_partition_with_unknown_offsets():
    resp = error_response(BY_NAME["Produce"], 9, _produce(), CODE, "why")
    (topic,) = resp.responses
    assert topic.name == "t"
    assert [(p.index, p.error_code, p.base_offset, p.log_start_offset, p.error_message)
            for p in topic.partition_responses] == [(0, CODE, -1, -1, "why"),
                                                    (2, CODE, -1, -1, "why")]
    assert error_response(BY_NAME["Produce"], 9, _produce(acks=0), CODE) is None


def _fetch():
    return fe.FetchRequest(topics=[fe.FetchTopic(topic="t", partitions=[
        fe.FetchPartition(partition=1, fetch_offset=5)])], forgotten_topics_data=[
        fe.ForgottenTopic(topic="old", partitions=[3])])


def test_fetch_below_v13_errors_partitions_and_top_level_v13_top_level_only():
    old = error_response(BY_NAME["Fetch"], 12, _fetch(), CODE)
    assert old.error_code == CODE
    assert [(t.topic, [(p.partition_index, p.error_code, p.high_watermark) for p in t.partitions])
            for t in old.responses] == [("t", [(1, CODE, -1)])]
    new = error_response(BY_NAME["Fetch"], 13, _fetch(), CODE)
    assert new.error_code == CODE and new.responses == []


def test_metadata_errors_each_requested_topic_and_none_for_all_topics():
    req = md.MetadataRequest(topics=[md.MetadataRequestTopic(name="a"),
                                     md.MetadataRequestTopic(name=None)])
    resp = error_response(BY_NAME["Metadata"], 11, req, ErrorCode.INVALID_REQUEST)
    assert [(t.name, t.error_code, t.partitions) for t in resp.topics] == [
        ("a", 42, []), ("", 42, [])]  # v11 names cannot be null: "" as Kafka
    assert error_response(BY_NAME["Metadata"], 12, md.MetadataRequest(topics=None),
                          ErrorCode.INVALID_REQUEST).topics == []
    assert error_response(BY_NAME["Metadata"], 13, req, ErrorCode.INVALID_REQUEST).error_code == 42


def test_offset_fetch_shapes_by_version():
    topics = [of.OffsetFetchRequestTopic(name="t", partition_indexes=[0, 1])]
    v1 = error_response(BY_NAME["OffsetFetch"], 1, of.OffsetFetchRequest(group_id="g",
                                                                          topics=topics), CODE)
    assert [(p.partition_index, p.committed_offset, p.error_code)
            for t in v1.topics for p in t.partitions] == [(0, -1, CODE), (1, -1, CODE)]
    v5 = error_response(BY_NAME["OffsetFetch"], 5, of.OffsetFetchRequest(group_id="g",
                                                                          topics=topics), CODE)
    assert v5.error_code == CODE and v5.topics == []
    groups = [of.OffsetFetchRequestGroup(group_id="g1", topics=None),
              of.OffsetFetchRequestGroup(group_id="g2", topics=[of.OffsetFetchRequestTopics(
                  name="t", partition_indexes=[0])])]
    v8 = error_response(BY_NAME["OffsetFetch"], 8, of.OffsetFetchRequest(groups=groups), CODE)
    assert [(g.group_id, g.error_code, g.topics) for g in v8.groups] == [
        ("g1", CODE, []), ("g2", CODE, [])]


def test_group_apis():
    dgr = error_response(BY_NAME["DescribeGroups"], 5,
                         dg.DescribeGroupsRequest(groups=["a", "b"]), CODE)
    assert [(g.group_id, g.error_code, g.group_state) for g in dgr.groups] == [
        ("a", CODE, ""), ("b", CODE, "")]
    old = error_response(BY_NAME["FindCoordinator"], 3, fc.FindCoordinatorRequest(key="g"), CODE)
    assert (old.error_code, old.node_id, old.port) == (CODE, -1, -1)
    new = error_response(BY_NAME["FindCoordinator"], 4,
                         fc.FindCoordinatorRequest(coordinator_keys=["g", "h"]), CODE)
    assert [(c.key, c.error_code, c.node_id) for c in new.coordinators] == [
        ("g", CODE, -1), ("h", CODE, -1)]
    join = error_response(BY_NAME["JoinGroup"], 7, BY_NAME["JoinGroup"].request(), CODE)
    assert (join.error_code, join.generation_id, join.protocol_name, join.member_id) == (
        CODE, -1, None, "")
    commit = error_response(BY_NAME["OffsetCommit"], 8, oc.OffsetCommitRequest(
        group_id="g", topics=[oc.OffsetCommitRequestTopic(name="t", partitions=[
            oc.OffsetCommitRequestPartition(partition_index=3, committed_offset=1)])]),
        ErrorCode.REBALANCE_IN_PROGRESS)
    assert [(t.name, p.partition_index, p.error_code) for t in commit.topics
            for p in t.partitions] == [("t", 3, ErrorCode.REBALANCE_IN_PROGRESS)]


# -- a handler that raises KafkaError gets the error response (Kafka's handleError) -----------

async def test_a_handler_raising_kafka_error_is_answered_with_the_error_response(start_broker,
                                                                                 monkeypatch):
    api = BY_NAME["Metadata"]
    original = HANDLERS[api.key]

    async def refuse(ctx, request):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "no")

    monkeypatch.setitem(HANDLERS, api.key, Handler(api, str(original.supported), refuse))
    bound = await start_broker()
    client = await WireClient.connect(bound.host, bound.port)
    req = md.MetadataRequest(topics=[md.MetadataRequestTopic(name="x")])
    resp = await client.request(api, 12, req)
    assert [(t.name, t.error_code) for t in resp.topics] == [("x", ErrorCode.INVALID_REQUEST)]
    # the connection stays usable
    monkeypatch.setitem(HANDLERS, api.key, original)
    resp = await client.request(api, 12, md.MetadataRequest(topics=None))
    assert resp.brokers
    assert bound.broker.unexpected == []
