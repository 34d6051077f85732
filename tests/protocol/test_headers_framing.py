"""Request/response headers (reference 1.3) and size-prefixed framing."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_emu.protocol import APIS, DecodeError, FrameBuffer, FrameTooLarge, decode, encode
from kafka_emu.protocol.codec import read_from
from kafka_emu.protocol import EncodeError
from kafka_emu.protocol.headers import (RequestHeader, ResponseHeader, decode_request,
                                        decode_request_header, encode_request, encode_response,
                                        peek_api,
                                        request_header_version, response_header_version)
from kafka_emu.testing.strategies import messages
from protocol_cases import hyp

API_CASES = [(api, v) for api in APIS.values() for v in api.valid]
API_IDS = [f"{api.name}-v{v}" for api, v in API_CASES]


def test_request_header_v1_layout():
    h = RequestHeader(request_api_key=11, request_api_version=5, correlation_id=7,
                      client_id="cli")
    assert encode(h, 1) == struct.pack(">hhih", 11, 5, 7, 3) + b"cli"
    assert decode(RequestHeader, 1, encode(h, 1)) == h


def test_request_header_v2_client_id_stays_classic_then_tags():
    h = RequestHeader(request_api_key=18, request_api_version=3, correlation_id=1,
                      client_id="rdkafka")
    # int16 length, not a compact varint, even though header v2 is flexible; then the
    # (empty) tagged-field section
    assert encode(h, 2) == struct.pack(">hhih", 18, 3, 1, 7) + b"rdkafka" + b"\x00"
    assert decode(RequestHeader, 2, encode(h, 2)) == h


@pytest.mark.parametrize("version", [1, 2])
def test_request_header_null_client_id(version):
    h = RequestHeader(request_api_key=3, request_api_version=1, correlation_id=2,
                      client_id=None)
    data = encode(h, version)
    assert data[8:10] == b"\xff\xff"
    assert decode(RequestHeader, version, data).client_id is None


def test_request_header_v2_skips_unknown_tags():
    data = struct.pack(">hhih", 12, 4, 9, 1) + b"x" + b"\x01\x05\x02ab"
    assert decode(RequestHeader, 2, data).correlation_id == 9


def test_request_header_v0_is_not_declared():
    with pytest.raises(DecodeError):
        decode(RequestHeader, 0, struct.pack(">hhi", 0, 0, 0))


@hyp(100)
@given(st.data())
def test_headers_agree_with_kafka_python(data):
    from kafka.protocol.api_header import RequestHeader as TheirRequestHeader
    from kafka.protocol.api_header import ResponseHeader as TheirResponseHeader
    version = data.draw(st.sampled_from([1, 2]))
    h = data.draw(messages(RequestHeader, version))
    theirs = TheirRequestHeader(request_api_key=h.request_api_key,
                                request_api_version=h.request_api_version,
                                correlation_id=h.correlation_id, client_id=h.client_id)
    assert theirs.encode(flexible=version == 2) == encode(h, version)
    r = data.draw(messages(ResponseHeader, data.draw(st.sampled_from([0, 1]))))
    for version in (0, 1):
        assert TheirResponseHeader(correlation_id=r.correlation_id).encode(
            flexible=version == 1) == encode(r, version)


def test_response_header_v0_and_v1():
    h = ResponseHeader(correlation_id=42)
    assert encode(h, 0) == struct.pack(">i", 42)
    assert encode(h, 1) == struct.pack(">i", 42) + b"\x00"
    assert decode(ResponseHeader, 1, encode(h, 1)) == h


@pytest.mark.parametrize("api,version", API_CASES, ids=API_IDS)
def test_header_versions_follow_flexibility(api, version):
    flexible = version in api.flexible
    assert request_header_version(api, version) == (2 if flexible else 1)
    if api.name == "ApiVersions":  # KIP-511: always v0 so any client can read it
        assert response_header_version(api, version) == 0
    else:
        assert response_header_version(api, version) == (1 if flexible else 0)


@pytest.mark.parametrize("api,version", API_CASES, ids=API_IDS)
def test_request_frame_round_trip(api, version):
    body = api.request()
    frame = encode_request(api, version, 1234, "client-1", body)
    size, = struct.unpack(">i", frame[:4])
    assert size == len(frame) - 4
    assert peek_api(frame[4:]) == (api.key, version, 1234)
    header, reader = decode_request_header(frame[4:], request_header_version(api, version))
    assert header.client_id == "client-1"
    assert read_from(api.request, version, reader) == body
    assert reader.pos == reader.end


@pytest.mark.parametrize("api,version", API_CASES, ids=API_IDS)
def test_decode_request_is_header_then_body(api, version):
    """The broker's one-call decoder gives what the two-step one gives, trailing bytes counted;
    a truncated frame raises the two-step decoder's DecodeError, word for word."""
    frame = encode_request(api, version, 7, "c", api.request())[4:]
    header, reader = decode_request_header(frame, request_header_version(api, version))
    assert decode_request(api, version, frame) == (header, read_from(api.request, version,
                                                                     reader), 0)
    assert decode_request(api, version, frame + b"xyz")[2] == 3
    for cut in {len(frame) - 1, 9, 3}:
        short = frame[:cut]
        try:
            header, reader = decode_request_header(short, request_header_version(api, version))
            read_from(api.request, version, reader)
            expected = None
        except DecodeError as exc:
            expected = str(exc)
        if expected is None:  # the cut fell where the body may end (an empty body)
            assert decode_request(api, version, short)[2] == 0
            continue
        with pytest.raises(DecodeError) as caught:
            decode_request(api, version, short)
        assert str(caught.value) == expected


def test_encode_response_errors_are_the_codecs():
    api = next(a for a in APIS.values() if a.name == "Heartbeat")
    with pytest.raises(EncodeError, match="error_code"):
        encode_response(api, 4, 1, api.response(error_code=1 << 20))
    with pytest.raises(EncodeError, match="no version 99"):
        encode_response(api, 99, 1, api.response())
    # a failed write leaves no trace in the next frame
    body = encode(api.response(), 4)
    assert encode_response(api, 4, 1, api.response()) == bytearray(
        struct.pack(">ii", 5 + len(body), 1) + b"\x00" + body)


@pytest.mark.parametrize("api,version", API_CASES, ids=API_IDS)
def test_response_frame_layout(api, version):
    body = api.response()
    frame = encode_response(api, version, 99, body)
    assert struct.unpack(">ii", frame[:8]) == (len(frame) - 4, 99)
    rest = frame[8:]
    if response_header_version(api, version) == 1:
        assert rest[:1] == b"\x00"
        rest = rest[1:]
    assert rest == encode(body, version)


def test_api_versions_response_header_is_v0_even_when_flexible():
    api = next(a for a in APIS.values() if a.name == "ApiVersions")
    flexible = [v for v in api.valid if v in api.flexible]
    assert flexible
    for version in flexible:
        frame = encode_response(api, version, 5, api.response())
        assert frame[8:] == encode(api.response(), version)  # no tag byte after the id


def test_peek_api_rejects_short_frames():
    with pytest.raises(DecodeError):
        peek_api(b"\x00\x12\x00")


# --- framing --------------------------------------------------------------------------------

def _framed(payloads):
    return b"".join(struct.pack(">i", len(p)) + p for p in payloads)


_TAKES = {"feed": lambda buf, chunk: list(buf.feed(chunk)), "split": FrameBuffer.split}


@pytest.mark.parametrize("take", _TAKES.values(), ids=list(_TAKES))
@hyp(200)
@given(st.lists(st.binary(max_size=40), max_size=8), st.data())
def test_frames_come_out_whole_whatever_the_chunking(take, payloads, data):
    stream = _framed(payloads)
    # cut anywhere, and often at frame boundaries (split's one-whole-frame case)
    ends = [len(_framed(payloads[:i])) for i in range(len(payloads) + 1)]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)) | st.sampled_from(ends),
                                     max_size=12)))
    chunks = [stream[a:b] for a, b in zip([0] + cuts, cuts + [len(stream)])]
    buf = FrameBuffer()
    out = []
    for chunk in chunks:
        out += take(buf, chunk)
    assert out == payloads
    assert buf.buffered == 0


def test_frame_buffer_one_byte_at_a_time_and_partial_tail():
    buf = FrameBuffer()
    out = []
    stream = _framed([b"abc", b"", b"defg"]) + b"\x00\x00"
    for b in stream:
        out += list(buf.feed(bytes([b])))
    assert out == [b"abc", b"", b"defg"]
    assert buf.buffered == 2


def test_frame_buffer_rejects_negative_size():
    with pytest.raises(DecodeError, match="negative"):
        list(FrameBuffer().feed(struct.pack(">i", -1) + b"xx"))


def test_frame_buffer_rejects_oversize_before_buffering_it():
    buf = FrameBuffer(max_frame=100)
    assert list(buf.feed(_framed([b"x" * 100]))) == [b"x" * 100]
    with pytest.raises(FrameTooLarge):
        list(buf.feed(struct.pack(">i", 101)))
    with pytest.raises(FrameTooLarge):
        list(FrameBuffer().feed(struct.pack(">i", 2**31 - 1)))
    with pytest.raises(FrameTooLarge):  # a whole frame in one chunk (split's shortcut)
        FrameBuffer(max_frame=100).split(_framed([b"x" * 101]))
    with pytest.raises(DecodeError, match="negative"):
        FrameBuffer().split(struct.pack(">i", -4))
    # several whole frames in one chunk (split's pipelined case): refused past the first too
    with pytest.raises(FrameTooLarge):
        FrameBuffer(max_frame=100).split(_framed([b"ok", b"x" * 101]))
    with pytest.raises(DecodeError, match="negative"):
        FrameBuffer().split(_framed([b"ok"]) + struct.pack(">i", -4) + b"xxxx")


def test_frame_too_large_is_a_decode_error():
    assert issubclass(FrameTooLarge, DecodeError)
