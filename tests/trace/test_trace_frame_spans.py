"""The encoder finds a request by its bytes less those of the fields its row never reads
(broker/frame_spans.py, frame_rows._SLICERS): a consumer's commits and fetches of moving offsets
are decoded once, not once each. These tests check that the lines stay those of the row maker,
character for character, whatever moves between requests:

- for every API and version recorded by its frames, and Fetch by its frame and answer: runs of
  requests made from one drawn request with its free fields moved (offsets, epochs, byte
  limits), with any int field moved (partitions, generations: values the line shows), or drawn
  anew, on several connections, through marshal -- the lines of the row maker's rows; and where
  only free fields moved, one decode for the whole run;
- a test that fails when the key leaves out bytes the line shows (both guards removed), and the
  guard that catches a wrong list of the row's fields;
- where the spans are (OffsetCommit's offset and epoch bytes), frames written otherwise get
  none, and a frame whose metadata moves is not searched for spans every time.
"""

from __future__ import annotations

import marshal
import uuid

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker import frame_rows, frame_spans
from kafka_emu.broker.event_rows import NO_TOPIC_IDS, REQUEST_FRAME, request_row_maker
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.headers import decode_request, encode_request, encode_response
from kafka_emu.protocol.messages import offset_commit as oc
from kafka_emu.protocol.schema import INT16, INT32, INT64, Array, fields_of
from kafka_emu.testing.strategies import messages
from kafka_emu.trace.encoder import format_lines

from test_trace_fetch_frame import _Catalogue
from test_trace_frames import FLAT, _carried
from test_trace_frames_arrays import WITH_ARRAYS

COMMIT, FETCH = BY_NAME["OffsetCommit"], BY_NAME["Fetch"]
BY_FRAMES = FLAT + WITH_ARRAYS
_RANGES = {INT16: 2**15, INT32: 2**31, INT64: 2**63}
# how each request of a run is made from the drawn one: its free fields moved, every int field
# moved (the row's among them), or another request drawn
_HOW = st.sampled_from(["free", "free", "any", "new"])
_IDENTITY = st.tuples(st.integers(0, 2), st.sampled_from(["h:1", "h:2"]),
                      st.none() | st.text(max_size=3))


def _moved(obj, version, draw, names):
    """``obj`` with int fields (of ``names``, or every one where None) set to drawn values."""
    changes = {}
    for f in fields_of(type(obj)):
        if version not in f.versions or (f.tag is not None and version in f.tagged):
            continue
        value = getattr(obj, f.name)
        if f.type in _RANGES and (names is None or f.name in names):
            bound = _RANGES[f.type]
            changes[f.name] = draw(st.integers(-bound, bound - 1))
        elif isinstance(f.type, Array) and isinstance(f.type.element, type) and value:
            changes[f.name] = [_moved(v, version, draw, names) for v in value]
        elif attrs.has(type(value)):
            changes[f.name] = _moved(value, version, draw, names)
    return attrs.evolve(obj, **changes)


def _free_names(cls, version, found=None):
    """The names of the fields frame_spans flips, at any depth."""
    found = set() if found is None else found
    for name, width in frame_spans._plan(cls, version):
        if width is not None:
            found.add(name)
        else:
            f = next(f for f in fields_of(cls) if f.name == name)
            _free_names(f.type.element if isinstance(f.type, Array) else f.type, version, found)
    return found


def _run(api, version, data, hows, identities, client, fetch=False):
    """(lines through the encoder, lines of the row maker's rows, decodes) of a run."""
    base = data.draw(messages(api.request, version))
    response = _carried(data.draw(messages(api.response, version)), version)
    free = _free_names(api.request, version)
    frame_rows.forget_decoded()
    records, rows, catalogue = [], [], None
    for i, (how, (connection, peer, software)) in enumerate(zip(hows, identities)):
        drawn = (data.draw(messages(api.request, version)) if how == "new" else
                 _moved(base, version, data.draw, None if how == "any" else free))
        frame = encode_request(api, version, 100 + i, client, drawn)[4:]
        _, request, _ = decode_request(api, version, frame)
        started, done, at = 10.0 + i, 10.5 + i, 1_700_000_000_000 + i
        if fetch:
            ids = {t.topic_id for t in request.topics if t.topic_id.int and not t.topic}
            catalogue = _Catalogue({tid: f"n-{tid.hex[:6]}" for tid in ids})
            frame_rows.learn_topic_names({tid.bytes: f"n-{tid.hex[:6]}" for tid in ids})
            answer = frame_rows.answer_reader(type(request), type(response), catalogue,
                                              [catalogue.version])(request, response)
        else:
            answer = encode_response(api, version, 100 + i, response)
        records.append((REQUEST_FRAME, frame, answer, started, done, at,
                        (connection, peer, software, "1.0")))
        rows.append(request_row_maker(type(request), type(response))(
            request, response, (done - started) * 1000, catalogue or NO_TOPIC_IDS, at,
            connection, peer, api.name, api.key, version, 100 + i, client, software, "1.0"))
    decodes = []
    decode = frame_rows._decode
    frame_rows._decode = lambda *args: decodes.append(1) or decode(*args)
    try:
        lines = format_lines(3, marshal.loads(marshal.dumps(records, 4)), "run-1")
    finally:
        frame_rows._decode = decode
    return lines, format_lines(3, rows, "run-1"), len(decodes)


@pytest.mark.parametrize(("api", "version"), BY_FRAMES,
                         ids=[f"{a.name}-v{v}" for a, v in BY_FRAMES])
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), hows=st.lists(_HOW, min_size=2, max_size=8),
       identities=st.lists(_IDENTITY, min_size=8, max_size=8),
       client=st.none() | st.text(max_size=4))
def test_moving_values_give_the_rows_lines(api, version, data, hows, identities, client):
    lines, expected, _ = _run(api, version, data, hows, identities, client)
    assert lines == expected


@pytest.mark.parametrize("version", list(FETCH.valid))
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), hows=st.lists(_HOW, min_size=2, max_size=8),
       identities=st.lists(_IDENTITY, min_size=8, max_size=8),
       client=st.none() | st.text(max_size=4))
def test_moving_fetches_give_the_rows_lines(version, data, hows, identities, client):
    lines, expected, _ = _run(FETCH, version, data, hows, identities, client, fetch=True)
    assert lines == expected


@pytest.mark.parametrize(("api", "version"), [(COMMIT, v) for v in (2, 6, 8, 9)]
                         + [(FETCH, v) for v in (4, 11, 12, 13, 16, 17)])
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), identities=st.lists(_IDENTITY, min_size=6, max_size=6))
def test_requests_differing_in_free_fields_are_decoded_once(api, version, data, identities):
    """A consumer's commits and fetches: offsets, epochs and limits moving, one decode."""
    lines, expected, decodes = _run(api, version, data, ["free"] * 6, identities, "c",
                                    fetch=api is FETCH)
    assert lines == expected
    assert decodes == 1


def _commit(partition: int, offset: int, epoch: int = 0, metadata: str = "",
            version: int = 8, correlation: int = 1) -> bytes:
    return encode_request(COMMIT, version, correlation, "c", oc.OffsetCommitRequest(
        group_id="g", generation_id_or_member_epoch=4, member_id="m", topics=[
            oc.OffsetCommitRequestTopic(name="t", partitions=[
                oc.OffsetCommitRequestPartition(partition_index=partition,
                                                committed_offset=offset,
                                                committed_leader_epoch=epoch,
                                                committed_metadata=metadata)])]))[4:]


_ANSWER = encode_response(COMMIT, 8, 1, oc.OffsetCommitResponse(topics=[
    oc.OffsetCommitResponseTopic(name="t", partitions=[
        oc.OffsetCommitResponsePartition(partition_index=0, error_code=0)])]))


def _lines(frames: list[bytes]) -> str:
    records = [(REQUEST_FRAME, f, _ANSWER, 1.0, 1.5, 17, (1, "h:1", None, None)) for f in frames]
    return format_lines(0, marshal.loads(marshal.dumps(records, 4)), "r")


def _rows_lines(frames: list[bytes]) -> str:
    rows = []
    response = decode_response_commit()
    for f in frames:
        _, q, _ = decode_request(COMMIT, 8, f)
        rows.append(request_row_maker(type(q), type(response))(
            q, response, 500.0, NO_TOPIC_IDS, 17, 1, "h:1", "OffsetCommit", 8, 8,
            int.from_bytes(f[4:8], "big"), "c", None, None))
    return format_lines(0, rows, "r")


def decode_response_commit():
    from kafka_emu.protocol.codec import read_from
    from kafka_emu.protocol.headers import ResponseHeader, response_header_version
    from kafka_emu.protocol.primitives import Reader
    reader = Reader(bytes(_ANSWER), 4)
    read_from(ResponseHeader, response_header_version(COMMIT, 8), reader)
    return read_from(COMMIT.response, 8, reader)


def test_the_spans_of_a_commit_are_its_offset_and_epoch():
    frame = _commit(0, 5, 1)
    _, request, _ = decode_request(COMMIT, 8, frame)
    spans = frame_spans.free_spans(COMMIT, 8, frame, "c", request, lambda q: True)
    (start, end), = spans  # committed_offset then committed_leader_epoch: one range
    assert end - start == 12
    assert frame[start:end] == (5).to_bytes(8, "big") + (1).to_bytes(4, "big")
    assert frame[:start] + frame[end:] == (lambda f: f[:start] + f[end:])(_commit(0, 9, 7))
    # a frame the codec would not write so (a trailing byte): no spans, keyed whole
    assert frame_spans.free_spans(COMMIT, 8, frame + b"\0", "c", request, lambda q: True) == ()
    # a row that reads a flipped field: no spans
    assert frame_spans.free_spans(COMMIT, 8, frame, "c", request, lambda q: False) == ()


def test_a_key_without_the_bytes_a_line_shows_would_be_caught(monkeypatch):
    """Partition 0 then 1 (same length, same everything else), then moving offsets: the lines
    are the rows'. With partition_index taken for a free field and the row guard removed, the
    second commit would find the first's entry -- and the comparison catches it."""
    frames = [_commit(0, 5), _commit(1, 5, correlation=2), _commit(1, 6, 3, correlation=3),
              _commit(0, 7, 2, correlation=4)]
    frame_rows.forget_decoded()
    assert _lines(frames) == _rows_lines(frames)
    # partition 0's by its pieces; partition 1's whole, then (it came again, another offset)
    # by its pieces; the last commit found partition 0's
    assert sorted(type(k[0]) is int for k in frame_rows._DECODED) == [False, False, True]
    # a wrong list of the row's fields alone: the row guard refuses partition_index, no spans
    monkeypatch.setattr(frame_spans, "ROW_READS", frame_spans.ROW_READS - {"partition_index"})
    monkeypatch.setattr(frame_spans, "_PLANS", {})
    frame_rows.forget_decoded()
    assert _lines(frames) == _rows_lines(frames)
    assert frame_rows._SLICERS == {}
    # and without the guard too: the key leaves out what the line shows, and the lines differ
    monkeypatch.setattr(frame_rows, "_same_row", lambda *args: lambda q: True)
    frame_rows.forget_decoded()
    assert _lines(frames) != _rows_lines(frames)
    frame_rows.forget_decoded()


def test_frames_whose_metadata_moves_are_searched_for_spans_every_so_often(monkeypatch):
    """Every commit a frame not seen before (a moving metadata string): spans are looked for on
    the first miss of the shape and every _SPANS_EVERY-th after, not on every one; a member of
    the same shape whose offsets alone move is found within that many."""
    searched = []
    search = frame_rows.free_spans
    monkeypatch.setattr(frame_rows, "free_spans", lambda *a: searched.append(1) or search(*a))
    frame_rows.forget_decoded()
    every = frame_rows._SPANS_EVERY
    moving = [_commit(0, i, metadata=f"{i:06d}", correlation=i) for i in range(every + 1)]
    assert _lines(moving) == _rows_lines(moving)
    assert len(searched) == 2  # (the first miss, the every-th)
    # another member's commits of the same shape (partition 1), offsets moving: decoded until
    # a search finds them, then found
    frame_rows.forget_decoded()
    searched.clear()
    mixed = [f for i in range(every + 2) for f in (
        _commit(0, i, metadata=f"{i:06d}", correlation=2 * i),
        _commit(1, 100 + i, metadata="xxxxxx", correlation=2 * i + 1))]
    assert _lines(mixed) == _rows_lines(mixed)
    # (partition 1's frames: kept whole the first time, by their pieces from the second on)
    kept = {k: d[3].topics[0].partitions[0].partition_index for k, d in frame_rows._DECODED.items()}
    assert [p for k, p in kept.items() if type(k[0]) is not int].count(1) == 1
    assert [p for k, p in kept.items() if type(k[0]) is int].count(1) == 1
    frame_rows.forget_decoded()


def test_a_second_shape_takes_the_slicer_over():
    """Two layouts of one length (a group and member id of other lengths adding up the same):
    each gets its spans in turn, and the lines stay the rows'."""
    def commit(group, member, offset, correlation):
        return encode_request(COMMIT, 8, correlation, "c", oc.OffsetCommitRequest(
            group_id=group, generation_id_or_member_epoch=4, member_id=member, topics=[
                oc.OffsetCommitRequestTopic(name="t", partitions=[
                    oc.OffsetCommitRequestPartition(partition_index=0, committed_offset=offset,
                                                    committed_leader_epoch=0,
                                                    committed_metadata="")])]))[4:]
    frames = [commit("gg", "m", 1, 1), commit("g", "mm", 2, 2), commit("gg", "m", 3, 3),
              commit("g", "mm", 4, 4)]
    assert len({len(f) for f in frames}) == 1
    frame_rows.forget_decoded()
    records = [(REQUEST_FRAME, f, _ANSWER, 1.0, 1.5, 17, (1, "h:1", None, None)) for f in frames]
    lines = format_lines(0, marshal.loads(marshal.dumps(records, 4)), "r")
    assert [line.count('"group_id":"gg"') for line in lines.splitlines()] == [1, 0, 1, 0]
    assert [line.count('"member_id":"mm"') for line in lines.splitlines()] == [0, 1, 0, 1]
    frame_rows.forget_decoded()


def test_fetch_spans_leave_out_offsets_epochs_and_limits_not_partitions():
    from kafka_emu.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
    tid = uuid.UUID(int=5)
    request = FetchRequest(max_wait_ms=500, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                           session_id=3, session_epoch=9, rack_id="", forgotten_topics_data=[],
                           topics=[FetchTopic(topic_id=tid, partitions=[
                               FetchPartition(partition=2, fetch_offset=77,
                                              current_leader_epoch=1, last_fetched_epoch=1,
                                              log_start_offset=0, partition_max_bytes=1 << 20)])])
    frame = encode_request(FETCH, 16, 1, "c", request)[4:]
    spans = frame_spans.free_spans(FETCH, 16, frame, "c", request, lambda q: True)
    kept = b"".join(frame_spans.slicer(spans)(frame))
    assert tid.bytes in kept and (2).to_bytes(4, "big") + (1).to_bytes(4, "big") not in kept
    assert sum(end - start for start, end in spans) == 4 * 3 + 4 * 2 + (4 + 8 + 4 + 8 + 4)
    for start, end in spans:  # (the partition index is not among them)
        assert not start <= frame.index(tid.bytes) + 16 < end
