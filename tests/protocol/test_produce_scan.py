"""The Produce scanner (protocol/produce_scan.py) against the generated reader: for any
ProduceRequest body at v3-13 -- usual or not (a transactional id, null records, records whose
length takes one to four varint bytes, many topics) -- ``decode_request`` gives a request equal
to the one the generated reader gives, and the same number of trailing bytes; a frame cut anywhere, or
followed by junk, fails or reads exactly as the generic reader does (the same DecodeError
message). The usual shape (v7+, no transactional id, non-null records) is left in its frame."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.codec import read_from
from kafka_emu.protocol.errors import DecodeError
from kafka_emu.protocol.headers import (decode_request, decode_request_header, encode_request,
                                        request_header_version)
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.protocol.produce_scan import UndecodedTopics

PRODUCE = BY_NAME["Produce"]

partitions = st.builds(pr.PartitionProduceData, index=st.integers(-2, 2**31 - 1),
                       records=st.one_of(st.none(), st.binary(max_size=300),
                                         st.just(b"r" * 16400),  # a three-byte length
                                         st.just(b"r" * (1 << 21))))  # a four-byte one


@st.composite
def bodies(draw):
    version = draw(st.integers(3, 13))
    topics = []
    for _ in range(draw(st.integers(0, 3))):
        parts = draw(st.lists(partitions, max_size=4))
        if version >= 13:
            topics.append(pr.TopicProduceData(topic_id=draw(st.uuids()), partition_data=parts))
        else:
            topics.append(pr.TopicProduceData(name=draw(st.one_of(
                st.text(max_size=8), st.text(min_size=100, max_size=140))),
                partition_data=parts))
    body = pr.ProduceRequest(
        transactional_id=draw(st.one_of(st.none(), st.none(), st.text(max_size=5))),
        acks=draw(st.integers(-1, 1)), timeout_ms=draw(st.integers(0, 2**31 - 1)),
        topic_data=topics)
    return version, body


def _generic(version: int, frame: bytes):
    """The generated reader alone: (request, trailing) or the DecodeError's message."""
    try:
        _, reader = decode_request_header(frame, request_header_version(PRODUCE, version))
        request = read_from(pr.ProduceRequest, version, reader)
        return request, reader.end - reader.pos
    except DecodeError as exc:
        return str(exc)


def _scanned(version: int, frame: bytes):
    try:
        _, request, trailing = decode_request(PRODUCE, version, frame)
        return request, trailing
    except DecodeError as exc:
        return str(exc)


@settings(max_examples=300, deadline=None)
@given(bodies(), st.data())
def test_scanner_reads_as_the_generated_reader(case, data):
    version, body = case
    frame = encode_request(PRODUCE, version, 1, "c", body)[4:]
    got, want = _scanned(version, frame), _generic(version, frame)
    assert got == want
    request = got[0]
    # (v9+: every length in one byte, a records length in up to four (a batch below 256 MB); a
    # longer one goes the generic way; v7-8 have fixed-width lengths)
    usual = (version >= 7 and body.transactional_id is None and all(
        p.records is not None and (version < 9 or len(p.records) + 1 < 1 << 28)
        for t in body.topic_data for p in t.partition_data) and all(
        version >= 13 or version < 9 or len(t.name.encode()) + 1 < 128
        for t in body.topic_data))
    assert (type(request.topic_data) is UndecodedTopics) == usual
    # cut short anywhere, or with bytes after it
    cut = data.draw(st.integers(0, len(frame) - 1))
    assert _scanned(version, frame[:cut]) == _generic(version, frame[:cut])
    extra = frame + data.draw(st.binary(min_size=1, max_size=3))
    assert _scanned(version, extra) == _generic(version, extra)


@pytest.mark.parametrize("version", [7, 8, 9, 12, 13])
def test_undecoded_topics_read_as_the_declared_list(version):
    topic = (pr.TopicProduceData(topic_id=__import__("uuid").UUID(int=5), partition_data=[
        pr.PartitionProduceData(index=3, records=b"x" * 200)]) if version >= 13 else
        pr.TopicProduceData(name="t", partition_data=[
            pr.PartitionProduceData(index=3, records=b"x" * 200)]))
    body = pr.ProduceRequest(acks=1, timeout_ms=5, topic_data=[topic])
    frame = encode_request(PRODUCE, version, 1, "c", body)[4:]
    _, request, _ = decode_request(PRODUCE, version, frame)
    undecoded = request.topic_data
    assert type(undecoded) is UndecodedTopics and len(undecoded) == 1
    assert undecoded == [topic] and [topic] == undecoded and list(undecoded) == [topic]
    assert undecoded[0].partition_data[0].records == b"x" * 200
    assert request == body


def _padded(n: int, size: int) -> bytes:
    """``n`` as an unsigned varint of ``size`` bytes (padded with continuation bytes)."""
    out = bytearray()
    for _ in range(size - 1):
        out.append((n & 127) | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


@pytest.mark.parametrize("size", [3, 4, 5])
def test_a_padded_records_length_reads_as_the_generic_reader(size):
    """A records length written in more bytes than it needs (no client does; the varint is
    still valid): three or four bytes are scanned, five go the generic way, and both read the
    same request."""
    records = b"x" * 300  # its compact length, 301, takes two bytes
    body = pr.ProduceRequest(acks=1, timeout_ms=5, topic_data=[pr.TopicProduceData(
        name="t", partition_data=[pr.PartitionProduceData(index=0, records=records)])])
    frame = encode_request(PRODUCE, 9, 1, "c", body)[4:]
    at = frame.index(_padded(301, 2) + records)
    padded = frame[:at] + _padded(301, size) + frame[at + 2:]
    got = _scanned(9, padded)
    assert got == _generic(9, padded) and got[0] == body
    assert (type(got[0].topic_data) is UndecodedTopics) == (size < 5)


@pytest.mark.parametrize("size", [2, 3, 4])
def test_padded_null_records_read_as_the_generic_reader(size):
    """Null records (compact length 0) written in more than one byte: the generic reader's."""
    body = pr.ProduceRequest(acks=1, timeout_ms=5, topic_data=[pr.TopicProduceData(
        name="t", partition_data=[pr.PartitionProduceData(index=0, records=None)])])
    frame = encode_request(PRODUCE, 9, 1, "c", body)[4:]
    at = frame.index(b"\x00\x00\x00\x00\x00\x00") + 4  # index 0, then the null length
    padded = frame[:at] + _padded(0, size) + frame[at + 1:]
    got = _scanned(9, padded)
    assert got == _generic(9, padded) and got[0] == body
    assert type(got[0].topic_data) is not UndecodedTopics
