"""A Produce's bytes on their way to the log (issue 40 item 1): a frame that spans many reads
comes out of FrameBuffer as one bytes object, its RECORDS decode as a view of that frame (no copy),
and the log stores a copy of its own, so no stored batch keeps the request's frame alive."""

from __future__ import annotations

import struct
import sys

import pytest

from kafka_emu.log.partition import PartitionLog
from kafka_emu.log.records import Record, build_batch
from kafka_emu.protocol import BY_NAME, FrameBuffer
from kafka_emu.protocol.headers import decode_request, encode_request
from kafka_emu.protocol.messages.produce import (PartitionProduceData, ProduceRequest,
                                                 TopicProduceData)

API = BY_NAME["Produce"]


def _batch(count: int) -> bytes:
    return build_batch([Record(key=None, value=b"v" * 100, timestamp_ms=1_000 + i)
                        for i in range(count)])


def _produce_frame(version: int, batch: bytes) -> bytes:
    request = ProduceRequest(acks=1, timeout_ms=1000, topic_data=[TopicProduceData(
        name="t", partition_data=[PartitionProduceData(index=0, records=batch)])])
    return encode_request(API, version, 5, "c", request)


@pytest.mark.parametrize("version", [3, 8, 9, 11])  # classic and flexible RECORDS
def test_records_are_a_view_of_the_frame_and_the_log_keeps_a_copy(version):
    batch = _batch(50)
    frame = _produce_frame(version, batch)[4:]
    _, request, left = decode_request(API, version, frame)
    assert left == 0
    records = request.topic_data[0].partition_data[0].records
    assert isinstance(records, memoryview) and records.obj is frame
    assert records == batch
    log = PartitionLog()
    assert log.append(records, 0).base_offset == 0
    stored, _ = log.read(0, 1 << 20)
    assert type(stored[0]) is bytes and stored[0][16:] == batch[16:]
    refs = sys.getrefcount(frame)
    del request, records
    assert sys.getrefcount(frame) < refs  # the views were the only other holders


def test_null_records_stay_none():
    request = ProduceRequest(acks=1, timeout_ms=1000, topic_data=[TopicProduceData(
        name="t", partition_data=[PartitionProduceData(index=0, records=None)])])
    for version in (3, 9):
        frame = encode_request(API, version, 5, "c", request)[4:]
        assert decode_request(API, version, frame)[1].topic_data[0].partition_data[0] \
            .records is None


def test_a_frame_over_many_reads_is_joined_once_into_bytes():
    batch = _batch(3000)  # ~330 KB: the size of a lingering producer's request
    stream = _produce_frame(9, batch) + struct.pack(">i", 3) + b"abc"
    frames = FrameBuffer()
    out = []
    for i in range(0, len(stream), 65536):  # as the connection reads: 64 KiB at most
        out += frames.split(stream[i:i + 65536])
        if len(out) == 0:  # mid-frame: the prefix and the bytes so far count as buffered
            assert frames.buffered == min(i + 65536, len(stream))
    assert [type(f) for f in out] == [bytes, bytes]
    assert out[0] == stream[4:-7] and out[1] == b"abc"
    assert frames.buffered == 0
    records = decode_request(API, 9, out[0])[1].topic_data[0].partition_data[0].records
    assert records == batch


def test_a_prefix_cut_by_a_read_then_a_frame_over_reads():
    payload = bytes(range(256)) * 10
    stream = struct.pack(">i", len(payload)) + payload
    frames = FrameBuffer()
    assert list(frames.feed(stream[:2])) == [] and frames.buffered == 2  # half a prefix
    assert list(frames.feed(stream[2:4])) == [] and frames.buffered == 4
    assert list(frames.feed(stream[4:1000])) == [] and frames.buffered == 1000
    assert list(frames.feed(stream[1000:] + stream[:3])) == [payload]
    assert frames.buffered == 3
