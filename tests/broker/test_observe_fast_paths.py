"""The observer helpers' per-class readers answer exactly as reading every field by name does
(issue 14: observation made cheaper must not change what the events say)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker.event_rows import _identity_by_name, request_identity
from kafka_emu.protocol import APIS
from kafka_emu.protocol.headers import peek_api
from kafka_emu.protocol.errors import DecodeError
from kafka_emu.testing.strategies import messages

CASES = [(api, version) for api in APIS.values() for version in api.valid]


@pytest.mark.parametrize(("api", "version"), CASES,
                         ids=[f"{api.name}-v{v}" for api, v in CASES])
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_request_identity_matches_reading_by_name(api, version, data):
    request = data.draw(messages(api.request, version))
    assert request_identity(request) == _identity_by_name(request)


def test_request_identity_of_objects_that_are_not_declarations():
    class Loose:
        group_id = "g"
        generation_id_or_member_epoch = 7
    assert request_identity(Loose()) == ("g", None, None, 7)


@given(key=st.integers(-2**15, 2**15 - 1), version=st.integers(-2**15, 2**15 - 1),
       correlation_id=st.integers(-2**31, 2**31 - 1), rest=st.binary(max_size=8))
def test_peek_api_reads_key_version_and_correlation(key, version, correlation_id, rest):
    frame = struct.pack(">hhi", key, version, correlation_id) + rest
    assert peek_api(frame) == (key, version, correlation_id)


def test_peek_api_refuses_a_short_frame():
    with pytest.raises(DecodeError):
        peek_api(b"\x00\x12\x00")
