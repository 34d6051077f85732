"""Large frames over a real socket (issue #40): a Produce frame far larger than one read, sent
in pieces with pauses (so the server reads its rest straight into the frame's own buffer,
FrameBuffer.room), is answered without error (a byte out of place would fail the batch's CRC)
and stored whole (the high watermark); a frame cut by the peer's reset mid-way, or announcing
more than socket.request.max.bytes, ends only its own connection. Frames are size-prefixed by
hand when read back; correlation ids are read with struct."""

from __future__ import annotations

import socket
import struct
import time

from kafka_emu.log.records import Record, build_batch
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.codec import read_from
from kafka_emu.protocol.headers import ResponseHeader, encode_request, response_header_version
from kafka_emu.protocol.messages.fetch import FetchPartition, FetchTopic
from kafka_emu.protocol.messages.produce import PartitionProduceData, TopicProduceData
from kafka_emu.protocol.primitives import Reader
from kafka_emu.testing import make_config, run_in_thread

PRODUCE, FETCH = BY_NAME["Produce"], BY_NAME["Fetch"]
TOPIC = "big"


def _produce_frame(records: int, correlation_id: int) -> bytes:
    batch = build_batch([Record(key=None, value=b"%06d" % i + b"v" * 94,
                                timestamp_ms=1_700_000_000_000 + i) for i in range(records)])
    return encode_request(PRODUCE, 9, correlation_id, "large-frame", PRODUCE.request(
        transactional_id=None, acks=1, timeout_ms=30_000, topic_data=[TopicProduceData(
            name=TOPIC, partition_data=[PartitionProduceData(index=0, records=batch)])]))


def _read_frame(sock: socket.socket) -> bytes:
    def exact(n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            got = sock.recv(n - len(buf))
            if not got:
                raise ConnectionError("closed")
            buf += got
        return bytes(buf)
    (size,) = struct.unpack(">i", exact(4))
    return exact(size)


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _decode(api, version: int, frame: bytes):
    r = Reader(frame)
    header = read_from(ResponseHeader, response_header_version(api, version), r)
    return header.correlation_id, read_from(api.response, version, r)


def _produced_ok(frame: bytes, correlation_id: int) -> None:
    got, answer = _decode(PRODUCE, 9, frame)
    assert got == correlation_id
    assert [p.error_code for t in answer.responses for p in t.partition_responses] == [0]


def _high_watermark(host: str, port: int) -> int:
    body = FETCH.request(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=50_000_000,
                         isolation_level=0, topics=[FetchTopic(topic=TOPIC, partitions=[
                             FetchPartition(partition=0, fetch_offset=0,
                                            partition_max_bytes=50_000_000)])])
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(encode_request(FETCH, 4, 7, "large-frame", body))
        _, answer = _decode(FETCH, 4, _read_frame(sock))
    return answer.responses[0].partitions[0].high_watermark


def test_large_frame_in_pieces_is_answered_and_stored_whole():
    with run_in_thread(make_config(topics={TOPIC: 1})) as emu:
        frame = _produce_frame(3000, 41)  # ~330 KB: several 64 KiB reads
        assert len(frame) > 5 * 65536
        with socket.create_connection((emu.host, emu.port), timeout=30) as sock:
            # the prefix and a little, then pieces of uneven sizes with pauses
            cuts = [10, 70_000, 1_000, 150_000]
            pos = 0
            for cut in cuts:
                sock.sendall(frame[pos:pos + cut])
                pos += cut
                time.sleep(0.05)
            sock.sendall(frame[pos:])
            _produced_ok(_read_frame(sock), 41)
            # a small request right behind it on the same connection is served too
            sock.sendall(_produce_frame(1, 42))
            _produced_ok(_read_frame(sock), 42)
        assert _high_watermark(emu.host, emu.port) == 3001


def test_reset_mid_large_frame_and_oversized_announcement_end_only_that_connection():
    with run_in_thread(make_config({"socket.request.max.bytes": 400_000},
                                   topics={TOPIC: 1})) as emu:
        frame = _produce_frame(3000, 43)
        assert 5 * 65536 < len(frame) - 4 <= 400_000
        cut = socket.create_connection((emu.host, emu.port), timeout=30)
        cut.sendall(frame[:200_000])
        time.sleep(0.1)
        cut.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        cut.close()  # RST with the frame half sent
        with socket.create_connection((emu.host, emu.port), timeout=30) as big:
            big.sendall(struct.pack(">i", 400_001) + b"\0" * 1000)
            assert _closed(big)
        with socket.create_connection((emu.host, emu.port), timeout=30) as sock:
            sock.sendall(frame)
            _produced_ok(_read_frame(sock), 43)
        assert _high_watermark(emu.host, emu.port) == 3000
