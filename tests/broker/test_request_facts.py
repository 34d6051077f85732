"""A parked request keeps only what its RequestHandled row reads (request_facts.py): the row made
from those facts is the row the decoded request itself gives, for every request class that keeps
facts, at every version."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker.event_rows import request_row_maker
from kafka_emu.broker.request_facts import RequestFacts, parked_request
from kafka_emu.protocol import APIS, BY_NAME
from kafka_emu.testing.strategies import messages

CASES = [(api, version) for api in APIS.values() for version in api.valid
         if type(parked_request(api.request())) is RequestFacts]


class _Topic:
    name = "resolved"


class _Topics:
    @staticmethod
    def lookup_id(topic_id):
        return _Topic()


def _row(request, response):
    make = request_row_maker(type(request), type(response))
    return make(request, response, 2.5, _Topics, 1234, 7, "h:1", "Api", 1, 2, 3, "client",
                "software", "1.0")


def test_the_parked_group_requests_keep_facts_and_requests_that_name_partitions_do_not():
    kept = {api.name for api, _ in CASES}
    assert {"JoinGroup", "SyncGroup"} <= kept
    for name in ("OffsetCommit", "Fetch", "FindCoordinator", "ListOffsets"):
        assert name not in kept
        request = BY_NAME[name].request()
        assert parked_request(request) is request


@pytest.mark.parametrize(("api", "version"), CASES, ids=[f"{a.name}-v{v}" for a, v in CASES])
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_row_from_the_facts_is_the_row_from_the_request(api, version, data):
    request = data.draw(messages(api.request, version))
    response = data.draw(messages(api.response, version))
    facts = parked_request(request)
    assert type(facts) is RequestFacts
    assert _row(facts, response) == _row(request, response)
