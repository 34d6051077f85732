"""Issue 40, item 3: the walks that find a request's partitions and a response's per-partition
errors (broker/request_walk.py) compiled per class, so that a traced Fetch does not pay about 60
Python calls for its row. The compiled walk must say exactly what the walk by names says, for
every API and version, on any value the declarations allow, with topic ids resolved or not; and
give way to that walk on an object that is not what its class declares."""

from __future__ import annotations

import types
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker.request_walk import (_struct_arrays, compiled_errors, compiled_partitions,
                                           request_partitions, response_errors)
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import APIS, BY_NAME
from kafka_emu.protocol.messages.fetch import (FetchableTopicResponse, FetchPartition,
                                               FetchRequest, FetchResponse, FetchTopic,
                                               ForgottenTopic, PartitionData)
from kafka_emu.testing.strategies import messages

REQUESTS = [(api, v) for api in APIS.values() for v in api.valid if _struct_arrays(api.request)]
RESPONSES = [(api, v) for api in APIS.values() for v in api.valid
             if _struct_arrays(api.response)]
KNOWN = uuid.UUID(int=0x10)


def _lookup(topic_id):
    # a name for some ids, none for others (then the walk writes the id itself)
    return types.SimpleNamespace(name="resolved") if topic_id.int % 2 == 0 else None


@pytest.mark.parametrize(("api", "version"), REQUESTS,
                         ids=[f"{a.name}-v{v}" for a, v in REQUESTS])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_compiled_partitions_are_the_walks(api, version, data):
    request = data.draw(messages(api.request, version))
    assert compiled_partitions(api.request)(request, _lookup) == request_partitions(request,
                                                                                    _lookup)


@pytest.mark.parametrize(("api", "version"), RESPONSES,
                         ids=[f"{a.name}-v{v}" for a, v in RESPONSES])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_compiled_errors_are_the_walks(api, version, data):
    response = data.draw(messages(api.response, version))
    assert compiled_errors(api.response)(response) == response_errors(response)


def _fetch(topic: str, topic_id: uuid.UUID) -> FetchRequest:
    return FetchRequest(max_wait_ms=0, min_bytes=1, isolation_level=0, session_id=0,
                        rack_id="", topics=[FetchTopic(topic=topic, topic_id=topic_id, partitions=[
                            FetchPartition(partition=p, fetch_offset=0, partition_max_bytes=1)
                            for p in (0, 3)])],
                        forgotten_topics_data=[ForgottenTopic(topic="gone", partitions=[1])])


def test_a_fetch_by_name_by_id_and_forgotten_topics():
    walk = compiled_partitions(FetchRequest)
    assert walk(_fetch("t", uuid.UUID(int=0)), _lookup) == (("t", 0), ("t", 3))
    assert walk(_fetch("", KNOWN), _lookup) == (("resolved", 0), ("resolved", 3))
    unknown = uuid.UUID(int=0x11)
    assert walk(_fetch("", unknown), _lookup) == ((str(unknown), 0), (str(unknown), 3))
    # the zero id and no name: no topic at all
    assert walk(_fetch("", uuid.UUID(int=0)), _lookup) == (("", 0), ("", 3))


def test_fetch_errors_by_partition():
    response = FetchResponse(responses=[FetchableTopicResponse(topic="t", partitions=[
        PartitionData(partition_index=0, error_code=0, high_watermark=0, records=None),
        PartitionData(partition_index=2, error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                      high_watermark=0, records=None)])])
    top, errors = compiled_errors(FetchResponse)(response)
    assert (top, errors) == response_errors(response) == (0, (("t", 2, 6),))
    assert type(errors[0][2]) is int  # by value, never an ErrorCode member


def test_an_object_not_as_declared_takes_the_walk_by_names():
    # a partition without the declared field name (a handler's own object): the walk by names
    # reads what it has; the compiled one gives way to it rather than failing
    odd = types.SimpleNamespace(partition_index=5)
    request = FetchRequest(max_wait_ms=0, min_bytes=1, isolation_level=0, session_id=0,
                           rack_id="", topics=[FetchTopic(topic="t", partitions=[odd])],
                           forgotten_topics_data=[])
    assert compiled_partitions(FetchRequest)(request, _lookup) == (("t", 5),)
    odd_response = FetchResponse(responses=[FetchableTopicResponse(topic="t", partitions=[
        types.SimpleNamespace(partition=1, error_code=3)])])
    assert compiled_errors(FetchResponse)(odd_response) == response_errors(odd_response) == (
        0, (("t", 1, 3),))


def test_every_api_with_arrays_compiles():
    for api in APIS.values():
        if _struct_arrays(api.request):
            assert callable(compiled_partitions(api.request))
        if _struct_arrays(api.response):
            assert callable(compiled_errors(api.response))
    assert compiled_partitions(BY_NAME["Fetch"].request) is compiled_partitions(FetchRequest)
