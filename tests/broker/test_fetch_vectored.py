"""Fetch responses written from the stored batches (protocol/spliced.py, broker/vectored.py):
the bytes on the wire are exactly those of a response encoded in one buffer, for every Fetch
version, for responses larger than the socket's buffer and with more batches than one
``sendmsg`` takes; Kafka's size limits hold (whole batches, at least one for the first
partition with data); answers pipelined behind a Fetch keep their order."""

import socket

import pytest
import trio

from kafka_emu.log.records import Record, build_batch
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.headers import encode_response, encode_response_parts
from kafka_emu.protocol.messages import fetch as f
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.protocol.spliced import RecordsParts
from kafka_emu.broker.vectored import IOV_MAX, send_vectored
from kafka_emu.testing.wire import WireClient

PRODUCE, FETCH, API_VERSIONS = BY_NAME["Produce"], BY_NAME["Fetch"], BY_NAME["ApiVersions"]
FETCH_VERSIONS = range(4, 18)


def _batch(i: int, size: int) -> bytes:
    return build_batch([Record(value=bytes([i % 251]) * size, key=b"k%d" % i,
                               timestamp_ms=1000 + i)])


def _topic_of(version: int, bound, name: str = "t"):
    topic_id = bound.broker.topics.catalogue.topic(name).topic_id
    return dict(topic=name, topic_id=topic_id) if version >= 13 else dict(topic=name)


async def _produce(client: WireClient, batches_per_partition: dict[int, list[bytes]]) -> None:
    """Every batch, pipelined: all requests first, then all answers."""
    ids = []
    for partition, batches in batches_per_partition.items():
        for blob in batches:
            ids.append(await client.send(PRODUCE, 9, pr.ProduceRequest(
                acks=1, timeout_ms=1000, topic_data=[pr.TopicProduceData(
                    name="t", partition_data=[pr.PartitionProduceData(index=partition,
                                                                      records=blob)])])))
    for correlation_id in ids:
        answer = await client.receive(PRODUCE, 9, correlation_id)
        assert answer.responses[0].partition_responses[0].error_code == 0


def _stored(bound, partition: int) -> bytes:
    batches, _ = bound.broker.topics.partition("t", partition).read(0, 1 << 30)
    return b"".join(batches)


def _fetch(version: int, bound, partitions, *, max_bytes: int = 0x7FFFFFFF,
           partition_max_bytes: int = 1 << 30) -> f.FetchRequest:
    return f.FetchRequest(max_wait_ms=0, min_bytes=0, max_bytes=max_bytes, topics=[f.FetchTopic(
        **_topic_of(version, bound), partitions=[
            f.FetchPartition(partition=p, fetch_offset=0, partition_max_bytes=partition_max_bytes)
            for p in partitions])])


@pytest.mark.parametrize("version", [4, 11, 12, 13, 16, 17])
async def test_a_large_fetch_carries_exactly_the_stored_batches(start_broker, version):
    # 3 partitions x 500 batches of ~4 KB: about 6 MB (more than a socket buffer takes at once)
    # in about 1500 buffers (more than one sendmsg takes)
    bound = await start_broker(topics={"t": 3})
    client = await WireClient.connect(bound.host, bound.port)
    await _produce(client, {p: [_batch(i, 4000) for i in range(500)] for p in range(3)})
    got = await client.request(FETCH, version, _fetch(version, bound, [0, 1, 2]))
    parts = got.responses[0].partitions
    assert [p.partition_index for p in parts] == [0, 1, 2]
    for p in parts:
        assert p.error_code == 0 and p.high_watermark == 500
        assert p.records == _stored(bound, p.partition_index)
    assert 500 * 3 > IOV_MAX
    await client.aclose()


async def test_size_limits_stay_kafkas_whole_batches_and_one_for_the_first(start_broker):
    bound = await start_broker(topics={"t": 3})
    client = await WireClient.connect(bound.host, bound.port)
    await _produce(client, {0: [_batch(i, 1000) for i in range(4)],
                            1: [_batch(i, 1000) for i in range(4)],
                            2: [_batch(i, 1000) for i in range(4)]})
    size = len(_batch(0, 1000))
    one = _stored(bound, 0)[:size]
    # max_bytes below one batch: the first partition still gets one whole batch, the rest none
    got = await client.request(FETCH, 12, _fetch(12, bound, [0, 1, 2], max_bytes=10))
    assert [p.records for p in got.responses[0].partitions] == [one, b"", b""]
    # partition_max_bytes of 2.5 batches: two whole batches from each partition
    got = await client.request(FETCH, 12, _fetch(12, bound, [0, 1, 2],
                                                 partition_max_bytes=size * 5 // 2))
    assert [len(p.records) for p in got.responses[0].partitions] == [2 * size] * 3
    # max_bytes of 3 batches: two from the first partition, one from the second, none after
    got = await client.request(FETCH, 12, _fetch(12, bound, [0, 1, 2], max_bytes=3 * size,
                                                 partition_max_bytes=size * 5 // 2))
    assert [len(p.records) for p in got.responses[0].partitions] == [2 * size, size, 0]
    await client.aclose()


async def test_answers_pipelined_behind_a_fetch_keep_their_order(start_broker):
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    await _produce(client, {0: [_batch(i, 3000) for i in range(50)]})
    ids = []
    for _ in range(3):  # all in one write, answered in one write
        ids.append(await client.send(API_VERSIONS, 3, ApiVersionsRequest(
            client_software_name="t", client_software_version="1")))
        ids.append(await client.send(FETCH, 12, _fetch(12, bound, [0])))
    for i, correlation_id in enumerate(ids):
        if i % 2:
            got = await client.receive(FETCH, 12, correlation_id)
            assert got.responses[0].partitions[0].records == _stored(bound, 0)
        else:
            assert (await client.receive(API_VERSIONS, 3, correlation_id)).error_code == 0
    await client.aclose()


@pytest.mark.parametrize("version", FETCH_VERSIONS)
def test_spliced_encoding_is_byte_for_byte_the_joined_one(version):
    stored = [[_batch(i, 10 * i + 1) for i in range(n)] for n in (0, 1, 3)]

    def response(records_of):
        return f.FetchResponse(session_id=0, responses=[f.FetchableTopicResponse(
            topic="t" if version < 13 else "", partitions=[
                f.PartitionData(partition_index=i, error_code=0, high_watermark=len(b),
                                records=records_of(b))
                for i, b in enumerate(stored)])])

    joined = bytes(encode_response(FETCH, version, 42, response(b"".join)))
    parts = encode_response_parts(FETCH, version, 42, response(
        lambda b: RecordsParts(b) if b else b""))
    assert b"".join(parts) == joined
    # a plain buffer gets the same bytes too (tests and golden frames encode that way)
    assert bytes(encode_response(FETCH, version, 42, response(RecordsParts))) == joined
    assert response(RecordsParts) == response(b"".join)


async def test_send_vectored_writes_everything_in_order_through_partial_sends():
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    # many buffers (several sendmsg calls), empty ones, views, and one far above the buffer
    buffers = [b"x" * (i % 7) for i in range(3 * IOV_MAX)]
    buffers += [memoryview(bytearray(b"0123456789" * 50_000))[3:], b"", b"end"]
    expected = b"".join(buffers)
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(a))
    received = bytearray()
    b.setblocking(False)
    reader = trio.socket.from_stdlib_socket(b)

    async def read_all():
        while len(received) < len(expected):
            received.extend(await reader.recv(1 << 16))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read_all)
        await send_vectored(stream.socket, buffers)
    assert bytes(received) == expected
    await stream.aclose()
    reader.close()


async def test_send_vectored_first_try_on_the_raw_socket_carries_on_after_a_partial_send():
    # few buffers (the first try goes to the stdlib socket itself), far more than the socket's
    # buffer takes at once: the rest goes through the waiting loop, from the right byte
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    buffers = [b"head", memoryview(bytearray(b"0123456789" * 50_000))[1:], b"", b"x" * 3, b"end"]
    expected = b"".join(buffers)
    sent: list[int] = []

    class Counted(socket.socket):  # counts the first try (trio's own sendmsg is the base's)
        def sendmsg(self, buffers):
            sent.append(super().sendmsg(buffers))
            return sent[-1]

    sock = trio.socket.from_stdlib_socket(a)
    a = sock._sock = Counted(fileno=a.detach())
    a.setblocking(False)
    received = bytearray()
    b.setblocking(False)
    reader = trio.socket.from_stdlib_socket(b)

    async def read_all():
        while len(received) < len(expected):
            received.extend(await reader.recv(1 << 16))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read_all)
        await send_vectored(sock, buffers)
    assert len(sent) == 1 and 0 < sent[0] < len(expected)  # partly sent by the first try
    assert bytes(received) == expected
    sock.close()
    reader.close()
