"""The trace writer takes Heartbeats and the like by their frames (``REQUEST_FRAME``,
broker/observe.py and broker/frame_rows.py): the request path hands over the request's frame
and the response's instead of making the row, and the encoder process decodes them. These tests
check that the line is the one the row would have given, character for character:

- for every API and version recorded so, any request and response, through marshal (as the
  encoder receives it): the same row as the request path's row maker, the same line;
- over sockets: with the trace the only sink the writer gets frame records, and its lines are
  those of a run where another sink makes the request path build rows (but for the times).
"""

from __future__ import annotations

import marshal

import attrs
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker.clock import ms_from
from kafka_emu.broker.event_rows import REQUEST_FRAME, _by_reference, request_row_maker, row_of
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import APIS, BY_NAME
from kafka_emu.protocol.headers import decode_request, encode_request, encode_response
from kafka_emu.protocol.schema import fields_of
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.strategies import messages
from kafka_emu.testing.wire import WireClient
from kafka_emu.trace.encoder import format_lines

from test_trace_writer import only_file, read_trace, spy_on_the_writer

HEARTBEAT = BY_NAME["Heartbeat"]
CASES = [(version, client) for version in HEARTBEAT.valid for client in ("frames", None, "")]
FLAT = [(api, version) for api in APIS.values() for version in api.valid
        if _by_reference(api.request, api.response)]


def _carried(response, version):
    """``response`` less values its version does not carry (a handler sets none of those; a
    fault rule does, and a request it acts on is recorded as a row)."""
    return attrs.evolve(response, **{f.name: f.default for f in fields_of(type(response))
                                     if version not in f.versions and version not in f.tagged})


def _through_marshal(item):
    return marshal.loads(marshal.dumps(item, 4))


@pytest.mark.parametrize(("api", "version"), FLAT, ids=[f"{a.name}-v{v}" for a, v in FLAT])
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), started=st.floats(0, 1e6), took=st.floats(0, 100),
       at=st.integers(0, 2**45) | st.tuples(st.integers(0, 2**45), st.floats(-1e6, 1e6),
                                            st.floats(0, 1e6)),
       correlation=st.integers(-2**31, 2**31 - 1), client=st.none() | st.text(max_size=5),
       software=st.none() | st.text(max_size=5))
def test_a_request_by_its_frames_makes_the_rows_line(api, version, data, started, took, at,
                                                     correlation, client, software):
    drawn = data.draw(messages(api.request, version))
    response = _carried(data.draw(messages(api.response, version)), version)
    # what the request path would keep: the frame as read (no size), the answer as written
    frame = encode_request(api, version, correlation, client, drawn)[4:]
    answer = encode_response(api, version, correlation, response)
    _, request, _ = decode_request(api, version, frame)  # the request the path would hold
    done = started + took
    record = (REQUEST_FRAME, frame, answer, started, done, at, (7, "h:1", software, "1.0"))
    at_ms = at if type(at) is int else ms_from(at, done)  # (the clock's constants: ms_later)
    row = request_row_maker(type(request), type(response))(
        request, response, (done - started) * 1000, None, at_ms, 7, "h:1", api.name, api.key,
        version, correlation, client, software, "1.0")
    assert row_of(record) == row
    shipped = _through_marshal([record, record])  # (the second from the decoded table)
    assert [row_of(r) for r in shipped] == [row, row]
    # the same request and answer under another correlation id: found in the table, its own id
    other = (correlation + 1) % 2**31
    again = (REQUEST_FRAME, encode_request(api, version, other, client, drawn)[4:],
             encode_response(api, version, other, response), *record[3:])
    assert row_of(again) == row[:7] + (other,) + row[8:]
    assert format_lines(5, shipped, "run-1") == format_lines(5, [row, row], "run-1")


async def _heartbeats(tmp_path, extra_sink: bool) -> list[dict]:
    config = make_config({"emu.timeline.max.events": 0})
    async with open_emulator(config, trace_dir=tmp_path) as emu:
        seen = spy_on_the_writer(emu, extra_sink)
        client = await WireClient.connect(emu.host, emu.port, "frames")
        frames = b"".join(encode_request(HEARTBEAT, version, 100 + i, client_id, HeartbeatRequest(
            group_id="g", generation_id=i, member_id=f"m{i}",
            group_instance_id="i" if version >= 3 else None))
            for i, (version, client_id) in enumerate(CASES))
        await client.send_raw(frames)  # one write: batches of several
        for i, (version, _) in enumerate(CASES):
            assert (await client.receive(HEARTBEAT, version, 100 + i)).error_code == (
                ErrorCode.UNKNOWN_MEMBER_ID)
        await client.aclose()
        await trio.sleep(0.05)
    tags = set(seen)
    assert (REQUEST_FRAME in tags) is not extra_sink
    records = read_trace(only_file(tmp_path))
    assert records[-1]["kind"] == "run_end" and records[-1]["dropped"] == 0
    return [r for r in records if r["kind"] == "request_handled" and r["api"] == "Heartbeat"]


async def test_heartbeats_by_frames_are_written_as_rows_are(tmp_path):
    by_frames = await _heartbeats(tmp_path / "frames", extra_sink=False)
    by_rows = await _heartbeats(tmp_path / "rows", extra_sink=True)
    assert len(by_frames) == len(by_rows) == len(CASES)

    def same(record):  # less what differs from run to run
        return {k: v for k, v in record.items()
                if k not in ("run", "seq", "at_ms", "latency_ms", "peer", "connection_id")}
    assert [same(r) for r in by_frames] == [same(r) for r in by_rows]
    assert {r["client_id"] for r in by_frames} == {"frames", None, ""}
    assert all(r["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID for r in by_frames)
    assert all(type(r["latency_ms"]) is float and r["latency_ms"] >= 0 for r in by_frames)


async def test_a_record_by_frame_names_the_software_its_connection_announced_last(tmp_path):
    """A record by frame carries its connection's identity as one tuple, made once
    (ConnectionInfo.trace_identity): an ApiVersions that announces the client's software (again)
    makes it anew, so each line names the software announced before its request."""
    from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
    api_versions = BY_NAME["ApiVersions"]
    config = make_config({"emu.timeline.max.events": 0})
    async with open_emulator(config, trace_dir=tmp_path) as emu:
        seen = spy_on_the_writer(emu)
        client = await WireClient.connect(emu.host, emu.port, "software")
        announced = [None, ("first", "1.0"), ("second", "2.0"), ("second", "2.1")]
        for i, software in enumerate(announced):
            if software is not None:
                answer = await client.request(api_versions, 3, ApiVersionsRequest(
                    client_software_name=software[0], client_software_version=software[1]))
                assert answer.error_code == ErrorCode.NONE
            for _ in range(2):
                assert (await client.request(HEARTBEAT, 4, HeartbeatRequest(
                    group_id="g", generation_id=i, member_id="m"))).error_code == (
                    ErrorCode.UNKNOWN_MEMBER_ID)
        await client.aclose()
        emu._bound.broker.observation.drain()
    assert seen.count(REQUEST_FRAME) >= 8  # (the Heartbeats went by their frames)
    records = read_trace(only_file(tmp_path))
    assert records[-1]["kind"] == "run_end" and records[-1]["dropped"] == 0
    beats = [r for r in records if r["kind"] == "request_handled" and r["api"] == "Heartbeat"]
    assert [(r["client_software_name"], r["client_software_version"]) for r in beats] == [
        (None, None)] * 2 + [software for software in announced[1:] for _ in range(2)]
    assert len({(r["connection_id"], r["peer"]) for r in beats}) == 1
