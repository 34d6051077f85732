"""The trace writer takes a Fetch by its request frame and the row's share of its answer
(``frame_rows.answer_reader``: errors and throttle time, never the records), and the encoder names
its topic ids with the names the writer shipped (``TOPIC_NAMES``). These tests check the line is
the one the request path's row gives:

- any Fetch request and response of a version that names topics by id, through marshal (as the
  encoder receives it), with the ids' names shipped: the same row, the same line; an id that is
  not a live topic's, or a catalogue changed since the names were shipped: no such record;
- over sockets, across a topic created and one deleted mid-run (fetched by id before and after
  the writer shipped the names): the same lines as a run where another sink makes the request
  path build rows (but for the times).
"""

from __future__ import annotations

import marshal
import uuid

import attrs
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker.event_rows import REQUEST_FRAME, request_row_maker, row_of
from kafka_emu.broker.frame_rows import answer_reader, learn_topic_names
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.headers import decode_request, encode_request
from kafka_emu.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.strategies import messages
from kafka_emu.testing.wire import WireClient
from kafka_emu.trace.encoder import format_lines, names_message, whole_messages

from test_trace_writer import only_file, read_trace

FETCH = BY_NAME["Fetch"]
VERSIONS = [v for v in FETCH.valid if v >= 12]  # (12: by name; 13 on: by id)


class _Topic:
    def __init__(self, name: str) -> None:
        self.name = name


class _Catalogue:  # what answer_reader reads of the log's TopicCatalogue
    def __init__(self, topics: dict) -> None:
        self._by_id = {tid: _Topic(name) for tid, name in topics.items()}
        self.version = 3

    def lookup_id(self, topic_id):  # (Topics.lookup_id, for the request path's row)
        return self._by_id.get(topic_id)


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), started=st.floats(0, 1e6), took=st.floats(0, 100),
       at=st.integers(0, 2**45), correlation=st.integers(0, 2**31 - 1),
       client=st.none() | st.text(max_size=5))
def test_a_fetch_by_its_frame_makes_the_rows_line(version, data, started, took, at,
                                                  correlation, client):
    drawn = data.draw(messages(FETCH.request, version))
    response = data.draw(messages(FETCH.response, version))
    frame = encode_request(FETCH, version, correlation, client, drawn)[4:]
    _, request, _ = decode_request(FETCH, version, frame)
    ids = {t.topic_id for t in request.topics if t.topic_id.int and not t.topic}
    catalogue = _Catalogue({tid: f"n-{tid.hex[:6]}" for tid in ids})
    seen = [catalogue.version]
    read = answer_reader(FetchRequest, type(response), catalogue, seen)
    # the names as the writer ships them, through the encoder's input
    [(tag, names)], _ = whole_messages(bytearray(names_message(
        {tid.bytes: topic.name for tid, topic in catalogue._by_id.items()})))
    assert format_lines(tag, names, "run-1") == ""  # (learnt: no line)
    answer = read(request, response)
    done = started + took
    record = (REQUEST_FRAME, frame, answer, started, done, at, (7, "h:1", "sw", "1.0"))
    row = request_row_maker(type(request), type(response))(
        request, response, (done - started) * 1000, catalogue, at, 7, "h:1", "Fetch", FETCH.key,
        version, correlation, client, "sw", "1.0")
    shipped = marshal.loads(marshal.dumps([record, record], 4))
    assert [row_of(r) for r in shipped] == [row, row]
    assert format_lines(5, shipped, "run-1") == format_lines(5, [row, row], "run-1")
    if ids:  # the request path makes the row itself: a catalogue changed since, an id not live
        catalogue.version += 1
        assert read(request, response) is None
        del catalogue._by_id[next(iter(ids))]  # (a change the catalogue counts, then shipped)
        seen[0] = catalogue.version
        assert read(request, response) is None


def test_a_fetch_answered_without_error_reads_as_one_shared_tuple():
    """The usual answer (no error anywhere, no throttle) is one tuple, the same every time and
    equal to the one the errors walk builds; any error or a throttle builds its own."""
    from kafka_emu.broker.request_walk import compiled_errors
    from kafka_emu.protocol.messages.fetch import (FetchableTopicResponse, FetchResponse,
                                                   PartitionData)
    tid = uuid.UUID(int=41)
    catalogue = _Catalogue({tid: "t"})
    read = answer_reader(FetchRequest, FetchResponse, catalogue, [catalogue.version])
    request = _fetch(tid, 0, 1)

    def response(top=0, partition=0, throttle=0):
        return FetchResponse(
            throttle_time_ms=throttle, error_code=top, session_id=0, node_endpoints=[],
            responses=[FetchableTopicResponse(topic="", topic_id=tid, partitions=[
                PartitionData(partition_index=p, error_code=partition if p else 0,
                              high_watermark=1, records=None) for p in (0, 1)])])
    walk = compiled_errors(FetchResponse)
    for kwargs in ({}, {"top": 7}, {"partition": 3}, {"throttle": 9}):
        r = response(**kwargs)
        answer = read(request, r)
        assert answer == (*walk(r), r.throttle_time_ms or 0)
        assert (answer is read(request, response())) is (not kwargs)
    assert read(request, response()) == (0, (), 0)


def test_an_answer_the_handler_vouched_for_reads_as_no_errors_without_the_walk():
    """The reader trusts the Fetch handler's VOUCHED answer by identity (it is not walked: an
    answer vouched for with an error in it -- which the handler never builds -- shows it), but
    not while the encoder's names are behind the catalogue's."""
    from kafka_emu.protocol.messages.fetch import (FetchableTopicResponse, FetchResponse,
                                                   PartitionData)
    tid = uuid.UUID(int=42)
    catalogue = _Catalogue({tid: "t"})
    seen, vouched = [catalogue.version], [None]
    read = answer_reader(FetchRequest, FetchResponse, catalogue, seen, vouched)
    request = _fetch(tid, 0)

    def failed():
        return FetchResponse(
            throttle_time_ms=0, error_code=0, session_id=0, node_endpoints=[],
            responses=[FetchableTopicResponse(topic="", topic_id=tid, partitions=[
                PartitionData(partition_index=0, error_code=3, high_watermark=1, records=None)])])
    walked = read(request, failed())
    assert walked[1] == (("", 0, 3),)
    vouched[0] = answer = failed()
    assert read(request, answer) == (0, (), 0)  # (taken on trust: not walked)
    assert read(request, failed()) == walked  # an equal answer, not the one vouched for
    catalogue.version += 1  # a topic created or deleted since the names were shipped
    assert read(request, answer) is None
    seen[0] = catalogue.version
    assert read(request, answer) == (0, (), 0)


async def test_the_fetch_handler_vouches_only_for_an_answer_without_errors_naming_live_topics():
    from kafka_emu.broker.handlers.fetch import VOUCHED
    config = make_config({"emu.timeline.max.events": 0}, topics={"t": 2})
    async with open_emulator(config) as emu:
        broker = emu._bound.broker
        client = await WireClient.connect(emu.host, emu.port, "vouched")
        t = broker.topics.lookup("t").topic_id

        async def fetch(topic_id, *partitions, wait_ms=0):
            before = VOUCHED[0]
            request = attrs.evolve(_fetch(topic_id, *partitions), max_wait_ms=wait_ms)
            answer = await client.request(FETCH, 16, request)
            vouched = VOUCHED[0]
            if vouched is not before:  # (what the handler built, as the client got it)
                assert [[p.error_code for p in r.partitions] for r in vouched.responses] == [
                    [p.error_code for p in r.partitions] for r in answer.responses]
            return vouched is not before
        assert await fetch(t, 0, 1)
        assert not await fetch(t, 0, 5)  # a partition error
        assert not await fetch(uuid.UUID(int=5))  # no such topic, no partition asked for
        assert not await fetch(uuid.UUID(int=5), 0)
        assert await fetch(t, 1, wait_ms=20)  # caught up: max_wait_ms ran out, read again
        assert not await fetch(t, 9, wait_ms=20)
        await client.aclose()


def test_learnt_names_follow_a_reused_id():
    tid = uuid.UUID(int=77)
    learn_topic_names({tid.bytes: "first"})
    learn_topic_names({tid: "second"})
    from kafka_emu.broker.frame_rows import SHIPPED_TOPICS
    assert SHIPPED_TOPICS.lookup_id(tid).name == "second"
    learn_topic_names({tid: "third"})  # (what lookup_id answers is not kept past a change)
    assert SHIPPED_TOPICS.lookup_id(tid).name == "third"


def _fetch(topic_id: uuid.UUID, *partitions: int) -> FetchRequest:
    return FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                        session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                        topics=[FetchTopic(topic_id=topic_id, partitions=[
                            FetchPartition(partition=p, fetch_offset=0,
                                           partition_max_bytes=1 << 20)
                            for p in partitions])])


async def _fetches(tmp_path, extra_sink: bool) -> tuple[list[dict], list]:
    config = make_config({"emu.timeline.max.events": 0}, topics={"t": 2})
    async with open_emulator(config, trace_dir=tmp_path) as emu:
        broker = emu._bound.broker
        observation = broker.observation
        catalogue = broker.topics.catalogue
        ids = iter(uuid.UUID(int=1000 + i) for i in range(10))
        catalogue.uuid_factory = lambda: next(ids)  # (the same ids in both runs)
        seen: list = []
        writer = observation._sinks[-1][0].__self__  # (the trace writer, the only sink)
        writer_many = observation._sinks[-1][2]

        def spy(events):  # what the request path recorded, as the seam hands it over
            seen.extend(e[0] if type(e) is tuple else type(e).__name__ for e in events)
            writer_many(events)
        observation._sinks[-1] = (observation._sinks[-1][0], True, spy,
                                  *observation._sinks[-1][3:])
        observation._rebuild()
        if extra_sink:
            observation.subscribe(lambda event: None, rows=True)

        def shipped():  # what a flush does first: deliver, pack, ship the names
            observation.drain()
            writer._pack()
        client = await WireClient.connect(emu.host, emu.port, "fetches")
        t = broker.topics.lookup("t").topic_id

        async def fetch(topic_id, *partitions, version=16):
            answer = await client.request(FETCH, version, _fetch(topic_id, *partitions))
            observation.drain()
            return answer
        await fetch(t, 0, 1, 5)  # (nothing shipped yet: a row)
        shipped()
        answer = await fetch(t, 0, 1, 5)  # by its frame from here
        assert [p.error_code for p in answer.responses[0].partitions] == [
            0, 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
        await fetch(uuid.UUID(int=5))  # no such topic
        broker.topics.create("u", 1)
        u = broker.topics.lookup("u").topic_id
        await fetch(u, 0)  # the catalogue changed since: a row
        shipped()
        await fetch(u, 0)
        catalogue.delete_topic("u")
        answer = await fetch(u, 0)  # gone (a row: changed again)
        assert answer.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID
        shipped()
        await fetch(u, 0)  # shipped, but no live topic's: a row
        await fetch(t, 1, version=12)  # by name
        await client.aclose()
        await trio.sleep(0.05)
    records = read_trace(only_file(tmp_path))
    assert records[-1]["kind"] == "run_end" and records[-1]["dropped"] == 0
    tags = [tag for tag in seen if tag in (REQUEST_FRAME, "RequestHandled")]
    return [r for r in records if r["kind"] == "request_handled" and r["api"] == "Fetch"], tags


async def test_fetches_by_frames_are_written_as_rows_are(tmp_path):
    by_frames, tags = await _fetches(tmp_path / "frames", extra_sink=False)
    by_rows, row_tags = await _fetches(tmp_path / "rows", extra_sink=True)
    row, frame = "RequestHandled", REQUEST_FRAME
    # an id that is no live topic's, or named while the catalogue changed since the names were
    # shipped: a row
    assert tags[-8:] == [row, frame, row, row, frame, row, row, frame]
    assert frame not in row_tags
    assert len(by_frames) == len(by_rows) == 8

    def same(record):  # less what differs from run to run
        return {k: v for k, v in record.items()
                if k not in ("run", "seq", "at_ms", "latency_ms", "peer", "connection_id")}
    assert [same(r) for r in by_frames] == [same(r) for r in by_rows]
    assert by_frames[1]["partitions"] == [{"topic": "t", "partition": p} for p in (0, 1, 5)]
    # (the answer names its topics by id from v13, which the errors walk does not resolve)
    assert [(e["topic"], e["partition"]) for e in by_frames[1]["partition_errors"]] == [("", 5)]
    assert by_frames[4]["partitions"] == [{"topic": "u", "partition": 0}]
    assert by_frames[6]["partitions"] == [{"topic": str(uuid.UUID(int=1000)), "partition": 0}]
