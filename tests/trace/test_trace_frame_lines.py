"""The encoder formats a request recorded by its frames from texts kept per decoded frames and
connection (trace/frame_lines.py): for every API and version recorded so, a run of such records
-- through marshal, as the encoder receives them, the same frames with other times, correlation
ids, connections and software -- gives the lines of the row maker's rows, character for
character."""

from __future__ import annotations

import marshal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker import frame_rows
from kafka_emu.broker.clock import ms_from
from kafka_emu.broker.event_rows import NO_TOPIC_IDS, REQUEST_FRAME, request_row_maker
from kafka_emu.protocol.headers import decode_request, encode_request, encode_response
from kafka_emu.testing.strategies import messages
from kafka_emu.trace.encoder import format_lines
from kafka_emu.trace.frame_lines import _texts

from test_trace_frames import FLAT, _carried
from test_trace_frames_arrays import WITH_ARRAYS

BY_FRAMES = FLAT + WITH_ARRAYS
_AT = st.integers(0, 2**45) | st.tuples(st.integers(0, 2**45), st.floats(-1e6, 1e6),
                                        st.floats(0, 1e6))
# (started, took, at, connection, peer, software, correlation): a few connections, so that
# texts are both made and reused
_CALL = st.tuples(st.floats(0, 1e6), st.floats(0, 100), _AT, st.integers(0, 2),
                  st.sampled_from(["h:1", "h:2", 'q"\u00e9:3']), st.none() | st.text(max_size=5),
                  st.integers(0, 2**31 - 1))


@pytest.mark.parametrize(("api", "version"), BY_FRAMES,
                         ids=[f"{a.name}-v{v}" for a, v in BY_FRAMES])
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), calls=st.lists(_CALL, min_size=2, max_size=6),
       client=st.none() | st.text(max_size=5))
def test_lines_from_kept_texts_are_the_rows_lines(api, version, data, calls, client):
    request = data.draw(messages(api.request, version))
    response = _carried(data.draw(messages(api.response, version)), version)
    frame_rows.forget_decoded()  # (and the shapes' spans: frame_spans.py)
    records, rows = [], []
    for started, took, at, connection, peer, software, correlation in calls:
        frame = encode_request(api, version, correlation, client, request)[4:]
        answer = encode_response(api, version, correlation, response)
        _, decoded, _ = decode_request(api, version, frame)
        done = started + took
        records.append((REQUEST_FRAME, frame, answer, started, done, at,
                        (connection, peer, software, "1.0")))
        rows.append(request_row_maker(type(decoded), type(response))(
            decoded, response, (done - started) * 1000, NO_TOPIC_IDS,
            at if type(at) is int else ms_from(at, done), connection, peer, api.name, api.key,
            version, correlation, client, software, "1.0"))
    shipped = marshal.loads(marshal.dumps(records, 4))
    assert format_lines(3, shipped, "run-1") == format_lines(3, rows, "run-1")
    # (texts were cut for every connection the frames came on again, and used after that)
    (kept,) = [d[6] for d in frame_rows._DECODED.values()]
    again = {r[6] for i, r in enumerate(shipped) if r[6] in {s[6] for s in shipped[:i]}}
    assert type(kept) is dict  # (with two calls or more: a dict, the texts of those again)
    assert {identity for identity, texts in kept.items() if texts} == again


def test_a_line_that_would_not_rebuild_keeps_no_texts():
    row = ("RequestHandled", 17, 1, "h:1", "Heartbeat", 12, 4, 9, "c", None, None, "g", "m",
           None, 1, 2.5, 0, (), 0, (), None, None)
    line = ('{"kind":"request_handled","run":"r","seq":1,"at_ms":17,"connection_id":1,'
            '"correlation_id":9,"client_id":"c","latency_ms":2.5,"error_code":0}\n')
    assert _texts(line, row, '"r"', 1) == (',"connection_id":1', ',"client_id":"c"',
                                           ',"error_code":0')
    # values found as the start of longer ones (the texts after them would not be the next
    # fields), an at_ms not an int
    for longer in ('"latency_ms":2.50', '"correlation_id":91', '"at_ms":175'):
        assert _texts(line.replace(longer[:-1], longer), row, '"r"', 1) is False
    assert _texts(line, row[:1] + (17.0,) + row[2:], '"r"', 1) is False
