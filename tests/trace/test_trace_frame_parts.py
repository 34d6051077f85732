"""A request recorded by its frames whose frames the encoder has decoded before gets its row from
the parts kept with them (broker/frame_rows.py, ``_parts``): the row the row maker makes, for
every API and version recorded so, whatever the later request's times, connection, peer,
correlation id and software; and topic names learnt since drop the kept parts."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker import frame_rows
from kafka_emu.broker.clock import ms_from
from kafka_emu.broker.event_rows import REQUEST_FRAME, request_row_maker, row_of
from kafka_emu.protocol.headers import decode_request, encode_request, encode_response
from kafka_emu.testing.strategies import messages

from test_trace_frames import FLAT, _carried

_AT = st.integers(0, 2**45) | st.tuples(st.integers(0, 2**45), st.floats(-1e6, 1e6),
                                        st.floats(0, 1e6))
_CALL = st.tuples(st.floats(0, 1e6), st.floats(0, 100), _AT, st.integers(0, 2**31 - 1),
                  st.text(max_size=4), st.none() | st.text(max_size=5), st.integers(0, 100))


@pytest.mark.parametrize(("api", "version"), FLAT, ids=[f"{a.name}-v{v}" for a, v in FLAT])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), calls=st.lists(_CALL, min_size=2, max_size=4),
       client=st.none() | st.text(max_size=5))
def test_kept_parts_make_the_makers_row(api, version, data, calls, client):
    request = data.draw(messages(api.request, version))
    response = _carried(data.draw(messages(api.response, version)), version)
    frame_rows.forget_decoded()  # (and the shapes' spans: frame_spans.py)
    for started, took, at, connection, peer, software, correlation in calls:
        frame = encode_request(api, version, correlation, client, request)[4:]
        answer = encode_response(api, version, correlation, response)
        _, decoded, _ = decode_request(api, version, frame)
        done = started + took
        record = (REQUEST_FRAME, frame, answer, started, done, at,
                  (connection, peer, software, "1.0"))
        at_ms = at if type(at) is int else ms_from(at, done)
        row = request_row_maker(type(decoded), type(response))(
            decoded, response, (done - started) * 1000, None, at_ms, connection, peer, api.name,
            api.key, version, correlation, client, software, "1.0")
        assert row_of(record) == row
    # (made once, then rebuilt: the parts were kept and used)
    assert [bool(d[5]) for d in frame_rows._DECODED.values()] == [True]


def test_learnt_topic_names_drop_the_kept_parts():
    frame_rows._DECODED["k"] = [None, "", None, None, None, ((), ())]
    frame_rows.learn_topic_names({})
    assert frame_rows._DECODED == {}
