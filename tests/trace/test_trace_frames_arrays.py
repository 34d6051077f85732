"""Issue 40, item 3: the trace writer takes an OffsetCommit (and the other requests whose row
the frames give: arrays of partitions, no topic ids, no records) by its frames, as it took
Heartbeats; before, such a request had its RequestHandled row made on the request path, which
cost a traced commit about a third more server CPU than a traced Heartbeat.

- for every API and version now recorded so: the row made from the two frames (through marshal,
  as the encoder receives them) is the request path's row, and so is the line;
- over sockets: one-partition commits, and one of many partitions (past the frames' size limit,
  recorded as a row), traced alone, give the lines a run with another sink (rows) gives; and
  the writer gets rows only (the coordinator's OffsetsCommitted as a row, not an object).
"""

from __future__ import annotations

import marshal

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker.connection import FRAME_RECORD_LIMIT
from kafka_emu.broker.event_rows import (NO_TOPIC_IDS, REQUEST_FRAME, _by_frame, _by_reference,
                                         request_row_maker, row_of)
from kafka_emu.coordinator.events import OffsetsCommitted
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import APIS, BY_NAME
from kafka_emu.protocol.headers import decode_request, encode_request, encode_response
from kafka_emu.protocol.messages.offset_commit import (OffsetCommitRequestPartition,
                                                       OffsetCommitRequestTopic)
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.strategies import messages
from kafka_emu.testing.wire import WireClient
from kafka_emu.trace.encoder import format_lines

from test_trace_writer import only_file, read_trace, spy_on_the_writer

COMMIT = BY_NAME["OffsetCommit"]
WITH_ARRAYS = [(api, version) for api in APIS.values() for version in api.valid
               if _by_frame(api.request, api.response, version)
               and not _by_reference(api.request, api.response)]


def test_what_is_recorded_by_its_frames():
    names = {api.name for api, _ in WITH_ARRAYS}
    assert {"OffsetCommit", "OffsetFetch", "LeaveGroup", "ListOffsets"} <= names
    # by topic id (the server resolves the names) or carrying records: rows, as before
    assert not names & {"Fetch", "Produce", "ConsumerGroupHeartbeat"}
    by_frames = {(api.name, version) for api, version in WITH_ARRAYS}
    # per version: OffsetCommit / OffsetFetch name topics by id from v10, Metadata from v10
    assert ("OffsetCommit", 9) in by_frames and ("OffsetCommit", 10) not in by_frames
    assert ("OffsetFetch", 9) in by_frames and ("OffsetFetch", 10) not in by_frames
    assert not {("Metadata", v) for v in range(10, 14)} & by_frames


@pytest.mark.parametrize(("api", "version"), WITH_ARRAYS,
                         ids=[f"{a.name}-v{v}" for a, v in WITH_ARRAYS])
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), started=st.floats(0, 1e6), took=st.floats(0, 100),
       at=st.integers(0, 2**45), correlation=st.integers(0, 2**31 - 1),
       client=st.none() | st.text(max_size=5))
def test_a_request_with_arrays_by_its_frames_makes_the_rows_line(api, version, data, started,
                                                                 took, at, correlation, client):
    drawn = data.draw(messages(api.request, version))
    response = data.draw(messages(api.response, version))
    frame = encode_request(api, version, correlation, client, drawn)[4:]
    answer = encode_response(api, version, correlation, response)
    _, request, _ = decode_request(api, version, frame)
    done = started + took
    record = (REQUEST_FRAME, frame, answer, started, done, at, (7, "h:1", "sw", "1.0"))
    row = request_row_maker(type(request), type(response))(
        request, response, (done - started) * 1000, NO_TOPIC_IDS, at, 7, "h:1", api.name, api.key,
        version, correlation, client, "sw", "1.0")
    shipped = marshal.loads(marshal.dumps([record, record], 4))
    assert [row_of(r) for r in shipped] == [row, row]
    assert format_lines(5, shipped, "run-1") == format_lines(5, [row, row], "run-1")


async def _commits(tmp_path, extra_sink: bool) -> tuple[list[dict], set]:
    config = make_config({"emu.timeline.max.events": 0}, topics={"t": 1, "wide": 400})
    async with open_emulator(config, trace_dir=tmp_path) as emu:
        seen = spy_on_the_writer(emu, extra_sink)
        client = await WireClient.connect(emu.host, emu.port, "frames")
        # simple commits (no generation: as an admin's), one partition, then 400: a frame
        # past the limit
        for version, offset in [(8, 5), (8, 6), (2, 7), (9, 8)]:
            answer = await client.request(COMMIT, version, COMMIT.request(
                group_id="g", generation_id_or_member_epoch=-1, member_id="",
                topics=[OffsetCommitRequestTopic(name="t", partitions=[
                    OffsetCommitRequestPartition(partition_index=0, committed_offset=offset,
                                                 committed_metadata="m")]),
                        OffsetCommitRequestTopic(name="nope", partitions=[
                            OffsetCommitRequestPartition(partition_index=0, committed_offset=1,
                                                         committed_metadata=None)])]))
            assert [p.error_code for t in answer.topics for p in t.partitions] == [
                0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
        wide = COMMIT.request(group_id="g", generation_id_or_member_epoch=-1, member_id="",
                              topics=[OffsetCommitRequestTopic(name="wide", partitions=[
                                  OffsetCommitRequestPartition(partition_index=i,
                                                               committed_offset=i,
                                                               committed_metadata="")
                                  for i in range(400)])])
        assert len(encode_request(COMMIT, 8, 1, "frames", wide)) > FRAME_RECORD_LIMIT
        answer = await client.request(COMMIT, 8, wide)
        assert {p.error_code for t in answer.topics for p in t.partitions} == {0}
        await client.aclose()
        await trio.sleep(0.05)
    records = read_trace(only_file(tmp_path))
    assert records[-1]["kind"] == "run_end" and records[-1]["dropped"] == 0
    return [r for r in records if r["kind"] == "request_handled"
            and r["api"] == "OffsetCommit"], set(seen)


async def test_commits_by_frames_are_written_as_rows_are(tmp_path):
    by_frames, tags = await _commits(tmp_path / "frames", extra_sink=False)
    by_rows, row_tags = await _commits(tmp_path / "rows", extra_sink=True)
    assert REQUEST_FRAME in tags and REQUEST_FRAME not in row_tags
    # the coordinator's OffsetsCommitted comes as a row too (every commit has one): a batch of
    # rows only is queued as it is, where an event object in it sends the writer through each
    # event, making the object's row
    assert "OffsetsCommitted" in tags and OffsetsCommitted not in tags
    assert "RequestHandled" in tags  # (the wide commit, as a row)
    assert len(by_frames) == len(by_rows) == 5

    def same(record):  # less what differs from run to run
        return {k: v for k, v in record.items()
                if k not in ("run", "seq", "at_ms", "latency_ms", "peer", "connection_id")}
    assert [same(r) for r in by_frames] == [same(r) for r in by_rows]
    assert by_frames[0]["partition_errors"] and len(by_frames[-1]["partitions"]) == 400
