"""Hostile frames through the real server, at the socket (issue #8): nothing a client sends stops
the server, corrupts another client's state or goes unanswered in the wrong order.

Each example opens a connection and sends a burst of frames: valid requests of every API and
version the broker advertises (generated from the declarations), the same with a few bytes
flipped, inserted or removed (the size prefix usually kept consistent, sometimes not), frames of
random bytes, and raw garbage; one burst in three is valid requests only, since the first frame
the server cannot serve ends a connection. Then it half-closes and reads until the server closes, checking
that every answer is a whole frame whose correlation id is the next of the ones sent (Kafka
answers in order; a frame it cannot serve ends the connection). Meanwhile a control group's
committed offsets must not change, and afterwards the server must still answer and must have
recorded no internal error. A second test sends only decodable requests whose strings all name
what the server knows (its topics, a few group and member names), so that they reach the
handlers' deeper paths instead of "unknown topic" (a negative DescribeTopicPartitions cursor
was found so).

Seeded and bounded: ``make test`` sends a few thousand frames (seed 8). For a longer local run set
``KAFKA_EMU_FUZZ=long`` (ten times as many examples) and optionally ``KAFKA_EMU_FUZZ_SEED``.
The codec-level fuzz (every decoder, hostile bytes) is tests/protocol/test_fuzz.py.
"""

from __future__ import annotations

import os
import socket
import struct

import attrs
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from kafka_emu.broker.handlers import HANDLERS
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.codec import read_from
from kafka_emu.protocol.headers import ResponseHeader, encode_request, response_header_version
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.protocol.messages.create_partitions import CreatePartitionsRequest
from kafka_emu.protocol.messages.create_topics import CreateTopicsRequest
from kafka_emu.protocol.messages.offset_commit import (OffsetCommitRequest,
                                                       OffsetCommitRequestPartition,
                                                       OffsetCommitRequestTopic)
from kafka_emu.protocol.messages.offset_fetch import (OffsetFetchRequest,
                                                      OffsetFetchRequestTopic)
from kafka_emu.protocol.primitives import Reader
from kafka_emu.testing import make_config, run_in_thread
from kafka_emu.testing.strategies import messages

LONG = os.environ.get("KAFKA_EMU_FUZZ", "").lower() == "long"
EXAMPLES = 2500 if LONG else 250
SEED = int(os.environ.get("KAFKA_EMU_FUZZ_SEED", "8"))
MIN_FRAMES = 8 * EXAMPLES  # the budget really is a few thousand frames (asserted at the end)
MIN_APIS_ANSWERED = 12  # and the frames reach the handlers of many APIs, not just the framing
HANG_GUARD_S = 30  # the server must close every fuzz connection within this after our EOF

# Longer than any generated string (strategies.MAX_TEXT), so no generated request can name them.
CONTROL_GROUP = "fuzz-control-group"
CONTROL_TOPIC = "fuzz-control-topic"
CONTROL_OFFSETS = {0: 17, 1: 4, 2: 23}

HANDLED = list(HANDLERS.values())  # every API the broker serves, at every version


def _small(count: int) -> int:
    return count % 4 if count > 3 else count  # keeps 0 and the negative edge cases


def _tame(msg):
    """Keep one example's cost bounded: a generated CreateTopics or CreatePartitions may ask for
    up to 10,000 partitions a request, which is legal but makes every later all-topics Metadata
    slow."""
    if isinstance(msg, CreateTopicsRequest):
        return attrs.evolve(msg, topics=[attrs.evolve(t, num_partitions=_small(t.num_partitions))
                                         for t in msg.topics])
    if isinstance(msg, CreatePartitionsRequest):
        return attrs.evolve(msg, topics=[attrs.evolve(t, count=_small(t.count))
                                         for t in msg.topics])
    return msg


@st.composite
def valid_requests(draw, correlation_id: int, text=None) -> bytes:
    handler = draw(st.sampled_from(HANDLED))
    version = draw(st.sampled_from(list(range(handler.supported.lo, handler.supported.hi + 1))))
    body = _tame(draw(messages(handler.api.request, version, text=text)))
    client_id = draw(st.one_of(st.none(), st.text(max_size=8)))
    return encode_request(handler.api, version, correlation_id, client_id, body)


_MUTATIONS = st.lists(st.tuples(st.sampled_from(["flip", "set", "insert", "delete"]),
                                st.integers(0, 1 << 16), st.integers(0, 255)),
                      min_size=1, max_size=4)


def _mutate(frame: bytes, mutations, keep_size: bool) -> bytes:
    data = bytearray(frame[4:] if keep_size else frame)
    for kind, where, byte in mutations:
        i = where % (len(data) + 1)
        if kind == "insert":
            data[i:i] = bytes([byte])
        elif i < len(data):
            if kind == "flip":
                data[i] ^= 1 << (byte % 8)
            elif kind == "set":
                data[i] = byte
            else:
                del data[i]
    return struct.pack(">i", len(data)) + bytes(data) if keep_size else bytes(data)


@st.composite
def frames(draw, correlation_id: int, clean: bool) -> bytes:
    """One piece of the stream: a request, a damaged one, a frame of random bytes or garbage
    (only requests in a clean burst, so that whole bursts reach the handlers)."""
    kind = "valid" if clean else draw(st.sampled_from(
        ["valid", "valid", "mutated", "mutated", "mutated", "resized", "random", "garbage"]))
    if kind == "random":
        body = draw(st.binary(min_size=0, max_size=64))
        return struct.pack(">i", len(body)) + body
    if kind == "garbage":
        return draw(st.binary(min_size=1, max_size=32))
    frame = draw(valid_requests(correlation_id))
    if kind == "valid":
        return frame
    return _mutate(frame, draw(_MUTATIONS), keep_size=(kind == "mutated"))


def _read_all(sock: socket.socket) -> bytes:
    data = bytearray()
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            return bytes(data)
        data += chunk


def _correlation_ids(data: bytes) -> list[int]:
    """The correlation ids of the whole response frames in ``data`` (all frames must be whole)."""
    ids, pos = [], 0
    while pos < len(data):
        assert len(data) - pos >= 8, f"a partial response frame: {data[pos:]!r}"
        size, cid = struct.unpack_from(">ii", data, pos)
        assert 4 <= size <= len(data) - pos - 4, f"a response frame of {size} bytes is cut short"
        ids.append(cid)
        pos += 4 + size
    return ids


def _frame_ids(stream: bytes) -> list[tuple[int, int]]:
    """(correlation id, api key) of the frames as a Kafka broker splits ``stream``."""
    ids, pos = [], 0
    while pos + 4 <= len(stream):
        size = struct.unpack_from(">i", stream, pos)[0]
        if size < 0 or pos + 4 + size > len(stream):
            break
        if size >= 8:
            api_key, _, cid = struct.unpack_from(">hhi", stream, pos + 4)
            ids.append((cid, api_key))
        pos += 4 + size
    return ids


def _match_in_order(answers: list[int], frames: list[tuple[int, int]]) -> list[int] | None:
    """The api keys of the frames the answers belong to, if the answers' correlation ids are a
    subsequence of the frames' (answered in order, each to a frame that was sent); else None."""
    rest = iter(frames)
    keys = []
    for cid in answers:
        for frame_cid, api_key in rest:
            if frame_cid == cid:
                keys.append(api_key)
                break
        else:
            return None
    return keys


def _exchange(host: str, port: int, stream: bytes) -> list[int] | None:
    """Send ``stream`` on a fresh connection, half-close, read until the server closes; the api
    keys of the frames answered, checked to be in request order, each to a frame that was sent
    (the answers' correlation ids are a subsequence of the frames' as the server splits the
    stream: a frame it cannot serve ends the connection, acks=0 Produce is never answered).
    None if the server reset the connection with our bytes unread: no order to check."""
    with socket.create_connection((host, port), timeout=HANG_GUARD_S) as s:
        try:
            s.sendall(stream)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may close as soon as it reads a frame it cannot serve
        try:
            answers = _correlation_ids(_read_all(s))
        except ConnectionResetError:
            return None
    keys = _match_in_order(answers, _frame_ids(stream))
    assert keys is not None, (answers, _frame_ids(stream))
    return keys


def _request(host: str, port: int, api, version: int, body, timeout: float = 30):
    """One request on a fresh connection, answered (a blocking client: the server runs in its
    own thread)."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(encode_request(api, version, 1, "fuzz-control", body))
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = s.recv(1 << 16)
            assert chunk, "the server closed the connection instead of answering"
            data += chunk
    reader = Reader(data[4:])
    header = read_from(ResponseHeader, response_header_version(api, version), reader)
    assert header.correlation_id == 1
    return read_from(api.response, version, reader)


def _control_offsets(host: str, port: int) -> dict[int, int]:
    resp = _request(host, port, BY_NAME["OffsetFetch"], 7, OffsetFetchRequest(
        group_id=CONTROL_GROUP, topics=[OffsetFetchRequestTopic(
            name=CONTROL_TOPIC, partition_indexes=sorted(CONTROL_OFFSETS))]))
    return {p.partition_index: p.committed_offset for t in resp.topics for p in t.partitions}


def _commit_control(host: str, port: int) -> None:
    request = OffsetCommitRequest(
        group_id=CONTROL_GROUP, generation_id_or_member_epoch=-1, member_id="",
        topics=[OffsetCommitRequestTopic(name=CONTROL_TOPIC, partitions=[
            OffsetCommitRequestPartition(partition_index=p, committed_offset=o)
            for p, o in CONTROL_OFFSETS.items()])])
    resp = _request(host, port, BY_NAME["OffsetCommit"], 8, request)
    assert {p.error_code for t in resp.topics for p in t.partitions} == {0}


def test_fuzzed_frames_at_the_socket_leave_the_server_serving_and_others_untouched():
    config = make_config(topics={CONTROL_TOPIC: len(CONTROL_OFFSETS)})
    sent = {"frames": 0, "connections": 0, "answers": 0}
    apis_answered: set[int] = set()
    with run_in_thread(config) as emu:
        host, port = emu.host, emu.port
        _commit_control(host, port)

        @seed(SEED)
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.data())
        def burst(data):
            n = data.draw(st.integers(1, 19), label="frames")
            clean = data.draw(st.integers(0, 2), label="clean") == 0
            burst_frames = [data.draw(frames(1000 + i, clean)) for i in range(n)]
            keys = _exchange(host, port, b"".join(burst_frames))
            sent["frames"] += n
            sent["connections"] += 1
            if keys is not None:
                sent["answers"] += len(keys)
                apis_answered.update(keys)
            if sent["connections"] % 10 == 0:
                assert _control_offsets(host, port) == CONTROL_OFFSETS

        burst()
        assert sent["frames"] >= MIN_FRAMES, sent
        assert len(apis_answered) >= MIN_APIS_ANSWERED, (sorted(apis_answered), sent)
        print(f"socket fuzz: {sent}, answered APIs {sorted(apis_answered)}")
        assert _request(host, port, BY_NAME["ApiVersions"], 3, ApiVersionsRequest(
            client_software_name="fuzz", client_software_version="1")).error_code == 0
        assert _control_offsets(host, port) == CONTROL_OFFSETS
        assert emu.unexpected_errors() == []


# Names the server knows, and a few it treats specially: requests drawn with only these strings
# get past "unknown topic" and "unknown group" into the handlers' deeper paths, and build up
# groups, members and offsets across the examples (the broker keeps its state between them).
KNOWN_TOPICS = {"t": 3, "u": 1}
KNOWN_NAMES = st.sampled_from(sorted(KNOWN_TOPICS) + [
    "g", "c", "m", "i", "", "consumer", "range", "__consumer_offsets", "retention.ms"])


@pytest.mark.parametrize("brokers", [1, 3])
def test_requests_naming_what_the_server_knows_leave_it_serving(brokers):
    """Decodable requests of every API and version, their strings drawn from the names the
    server knows and their numbers from the edges (-1, 0, 1, the type's limits, anything): each
    burst is answered in order, the control group's offsets stay, and no request hits an
    internal error (checked after every burst, and reported with that burst's APIs: the state
    the earlier bursts built may be needed to repeat it). The fuzz above rarely names an
    existing topic or group; this one always does, with twice its examples (cheaper ones).
    With three brokers each burst goes to one of them, coordinator or not, leader or not."""
    config = make_config(topics={CONTROL_TOPIC: len(CONTROL_OFFSETS), **KNOWN_TOPICS},
                         brokers=brokers)
    sent = {"frames": 0, "answers": 0}
    with run_in_thread(config) as emu:
        host = emu.host
        ports = [int(address.rsplit(":", 1)[1]) for address in emu.bootstrap_servers.split(",")]
        control_port = ports[emu.coordinator_of(CONTROL_GROUP) - 1]  # node ids are 1, 2, ...
        _commit_control(host, control_port)

        @seed(SEED)
        @settings(max_examples=2 * EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.data())
        def burst(data):
            errors_before = len(emu.unexpected_errors())
            port = data.draw(st.sampled_from(ports), label="broker's port")
            n = data.draw(st.integers(1, 8), label="requests")
            stream = b"".join(data.draw(valid_requests(1000 + i, KNOWN_NAMES)) for i in range(n))
            keys = _exchange(host, port, stream)
            if keys is not None:
                sent["answers"] += len(keys)
            sent["frames"] += n
            new_errors = emu.unexpected_errors()[errors_before:]
            assert not new_errors, (new_errors, [key for _, key in _frame_ids(stream)])

        burst()
        print(f"known-name fuzz, {brokers} broker(s): {sent}")
        assert sent["answers"] >= EXAMPLES, sent  # most requests are served, not refused
        assert _control_offsets(host, control_port) == CONTROL_OFFSETS
