"""Issue 40, item 3: while the trace is the only sink, a one-partition commit's OffsetsCommitted
travels with the record of its request's frames (``COMMIT_FRAME``, broker/event_rows.py) instead
of as the coordinator's row, and the encoder makes the row from the frame (frame_rows.commit_row).
These tests check that its line is the one the coordinator's row gave, character for character:

- in process, for every version recorded so, any one-partition commit, through marshal, with
  offsets and epochs moving between commits (a frame found by the entry of another, whose offset
  is not its own) and frames the codec would not write so (their offset not located);
- over sockets, with a manual clock: the trace's lines when the trace alone listens (frame
  records) are those of a run where another sink makes the coordinator build its rows, every
  field but the connection's and the latency, for commits of every version, repeated and moving
  offsets, an error, and a commit whose frames are past the record limit;
- with a real client (confluent-kafka, in a classic group and in a consumer group), each commit's
  offsets_committed line is followed by its request's line, with the offset the client committed.
"""

from __future__ import annotations

import marshal

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker.dispatch import FRAME_RECORD_LIMIT
from kafka_emu.broker.event_rows import (COMMIT_FRAME, NO_TOPIC_IDS, REQUEST_FRAME,
                                         committed_row, request_row_maker, row_of)
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.codec import read_from
from kafka_emu.protocol.headers import (ResponseHeader, decode_request, encode_request,
                                        encode_response, response_header_version)
from kafka_emu.protocol.messages import offset_commit as oc
from kafka_emu.protocol.primitives import Reader
from kafka_emu.testing import make_config, run_in_thread
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.wire import WireClient
from kafka_emu.trace.encoder import format_lines

from test_trace_writer import only_file, read_trace, spy_on_the_writer

COMMIT = BY_NAME["OffsetCommit"]
# (v0-1 are gone since Kafka 4.0; v10 names topics by id: recorded as rows)
VERSIONS = [v for v in COMMIT.valid if 2 <= v < 10]
_ANSWER = oc.OffsetCommitResponse(topics=[oc.OffsetCommitResponseTopic(name="t", partitions=[
    oc.OffsetCommitResponsePartition(partition_index=0, error_code=0)])])
_IDENTITY = (3, "h:1", None, None)
_text = st.text(max_size=6)
_int32 = st.integers(-2**31, 2**31 - 1)


def _request(group, member, generation, instance, topic, partition, offset, epoch, metadata):
    return oc.OffsetCommitRequest(
        group_id=group, generation_id_or_member_epoch=generation, member_id=member,
        group_instance_id=instance, topics=[oc.OffsetCommitRequestTopic(name=topic, partitions=[
            oc.OffsetCommitRequestPartition(partition_index=partition, committed_offset=offset,
                                            committed_leader_epoch=epoch,
                                            committed_metadata=metadata)])])


def _pair(version, request, correlation, at, trailing=b""):
    """A commit as the request path records it: its OffsetsCommitted by the record, the record."""
    frame = encode_request(COMMIT, version, correlation, "c", request)[4:] + trailing
    record = (REQUEST_FRAME, frame, encode_response(COMMIT, version, correlation, _ANSWER),
              1.0, 1.5, 17, _IDENTITY)
    return [(COMMIT_FRAME, record, at), record]


def _rows(version, request, correlation, at):
    """The same two as the coordinator's row and the request path's row."""
    reader = Reader(encode_response(COMMIT, version, correlation, _ANSWER), 4)
    read_from(ResponseHeader, response_header_version(COMMIT, version), reader)
    response = read_from(COMMIT.response, version, reader)  # (as its version carries it)
    return [committed_row(request, at), request_row_maker(type(request), type(response))(
        request, response, 500.0, NO_TOPIC_IDS, 17, 3, "h:1", "OffsetCommit", COMMIT.key,
        version, correlation, "c", None, None)]


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), group=_text, member=_text, generation=_int32,
       instance=st.none() | _text, topic=st.text(min_size=1, max_size=6),
       partition=st.integers(0, 2**31 - 1), metadata=st.none() | _text,
       moves=st.lists(st.tuples(st.integers(-2**63, 2**63 - 1), _int32), min_size=1,
                      max_size=5),
       at=st.integers(0, 2**45), trailing=st.booleans())
def test_a_commit_by_its_frames_makes_the_coordinators_line(version, data, group, member,
                                                            generation, instance, topic,
                                                            partition, metadata, moves, at,
                                                            trailing):
    items, rows = [], []
    instance = instance if version >= 7 else None  # (absent from the versions before)
    for n, (offset, epoch) in enumerate(moves):
        epoch = epoch if version >= 6 else -1
        request = _request(group, member, generation, instance, topic, partition, offset, epoch,
                           metadata)
        # (a trailing byte: a frame the codec would not write so, its offset not located)
        items += _pair(version, request, n, at + n, b"\0" if trailing else b"")
        _, q, _ = decode_request(COMMIT, version, encode_request(COMMIT, version, n, "c",
                                                                 request)[4:])
        rows += _rows(version, q, n, at + n)
    shipped = marshal.loads(marshal.dumps(items, 4))
    assert shipped[0][1] is shipped[1]  # the record written once, then a reference
    assert [row_of(item) for item in shipped] == rows
    assert format_lines(5, shipped, "r") == format_lines(5, rows, "r")
    # and again, every entry decoded before (the offsets of its first frame, not these)
    assert format_lines(5, marshal.loads(marshal.dumps(items[::-1], 4)), "r") == format_lines(
        5, rows[::-1], "r")


# -- over sockets --------------------------------------------------------------------------------

async def _commits(tmp_path, extra_sink: bool) -> tuple[list[dict], set]:
    config = make_config({"emu.timeline.max.events": 0, "emu.clock": "manual"},
                         topics={"t": 2})
    async with open_emulator(config, trace_dir=tmp_path) as emu:
        seen = spy_on_the_writer(emu, extra_sink)
        client = await WireClient.connect(emu.host, emu.port, "frames")
        # simple commits (no generation: as an admin's) of one partition: every version, the
        # same offset twice, moving offsets, two groups
        cases = [(v, "g", 0, 5, "m") for v in VERSIONS]
        cases += [(8, "g", 0, 5, "m"), (8, "g", 0, 6, "m"), (8, "g", 1, 7, None),
                  (9, "h", 0, 2**40, ""), (8, "g", 0, 8, "m")]
        for version, group, partition, offset, metadata in cases:
            answer = await client.request(COMMIT, version, _request(
                group, "", -1, None, "t", partition, offset, -1, metadata))
            assert [p.error_code for t in answer.topics for p in t.partitions] == [0]
        # an unknown partition: an error answer, nothing committed
        answer = await client.request(COMMIT, 8, _request("g", "", -1, None, "t", 9, 1, -1, ""))
        assert answer.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        # metadata making the frame larger than a record by frames takes: rows after all
        big = _request("g", "", -1, None, "t", 0, 9, -1, "x" * FRAME_RECORD_LIMIT)
        assert len(encode_request(COMMIT, 8, 1, "frames", big)) > FRAME_RECORD_LIMIT
        answer = await client.request(COMMIT, 8, big)
        assert answer.topics[0].partitions[0].error_code == 0
        await client.aclose()
        await trio.sleep(0.05)
    records = read_trace(only_file(tmp_path))
    assert records[-1]["kind"] == "run_end" and records[-1]["dropped"] == 0
    return records, set(seen)


async def test_commits_by_frames_give_the_coordinators_lines(tmp_path):
    by_frames, tags = await _commits(tmp_path / "frames", extra_sink=False)
    by_rows, row_tags = await _commits(tmp_path / "rows", extra_sink=True)
    assert COMMIT_FRAME in tags and COMMIT_FRAME not in row_tags
    assert "OffsetsCommitted" in tags  # (the big commit's, made by the request path)
    assert "OffsetsCommitted" in row_tags

    def same(records):  # less what differs from run to run (a manual clock: at_ms from start)
        start = records[0]["at_ms"]
        return [{k: v - start if k == "at_ms" else v for k, v in record.items()
                 if k not in ("run", "latency_ms", "peer", "local", "connection_id")}
                for record in records[1:-1]]
    assert same(by_frames) == same(by_rows)
    commits = [r for r in by_frames if r["kind"] == "offsets_committed"]
    assert [c["offsets"][0]["offset"] for c in commits] == (
        [5] * len(VERSIONS) + [5, 6, 7, 2**40, 8, 9])
    for c in commits:  # each followed by its request's line
        after = by_frames[by_frames.index(c) + 1]
        assert (after["kind"], after["api"], after["seq"]) == (
            "request_handled", "OffsetCommit", c["seq"] + 1)


# -- a real client ---------------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_confluent_consumers_commits_are_traced_with_its_offsets(tmp_path, protocol):
    """Either group protocol: a classic group's commits and a consumer group's (KIP-848), whose
    generation is the member's epoch."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    # (no timeline: the trace the only sink, so commits go by their frames)
    config = make_config({"emu.timeline.max.events": 0,
                          "group.consumer.heartbeat.interval.ms": 500}, topics={"t": 1})
    with run_in_thread(config, trace_dir=tmp_path) as emu:
        producer = Producer({"bootstrap.servers": emu.bootstrap_servers})
        for i in range(5):
            producer.produce("t", value=b"%d" % i)
        assert producer.flush(30) == 0
        consumer = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": "cg",
                             "group.protocol": protocol, "auto.offset.reset": "earliest",
                             "enable.auto.commit": False})
        consumer.subscribe(["t"])
        committed = []
        try:
            while len(committed) < 5:
                message = consumer.poll(1.0)
                if message is None or message.error():
                    continue
                consumer.commit(message=message, asynchronous=False)
                committed.append(message.offset() + 1)
            assert consumer.committed([TopicPartition("t", 0)], 10)[0].offset == 5
        finally:
            consumer.close()
    records = read_trace(only_file(tmp_path))
    commits = [r for r in records if r["kind"] == "offsets_committed" and r["group_id"] == "cg"]
    assert [c["offsets"] for c in commits] == [
        [{"topic": "t", "partition": 0, "offset": offset}] for offset in committed]
    for c in commits:
        after = records[records.index(c) + 1]
        assert after["kind"] == "request_handled" and after["api"] == "OffsetCommit"
        assert (after["seq"], after["group_id"], after["member_id"]) == (
            c["seq"] + 1, c["group_id"], c["member_id"])
        assert after["member_id"] and c["generation_id"] >= 1
