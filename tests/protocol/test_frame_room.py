"""FrameBuffer.room / filled: a large frame's rest read straight into its own buffer (what the
connection does with ``recv_into``) yields the same frames as feeding chunks, interleaved with
chunks fed the usual way; ``buffered`` counts bytes read, not bytes allocated."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_emu.protocol.framing import FrameBuffer, FrameTooLarge


def _stream(payloads: list[bytes]) -> bytes:
    return b"".join(struct.pack(">i", len(p)) + p for p in payloads)


@settings(max_examples=150, deadline=None)
@given(sizes=st.lists(st.integers(0, 3000), min_size=1, max_size=6),
       cuts=st.lists(st.integers(1, 2500), min_size=1, max_size=40),
       ways=st.lists(st.booleans(), min_size=1, max_size=40),
       least=st.integers(1, 1200))
def test_room_and_feed_interleaved_give_the_frames(sizes, cuts, ways, least):
    payloads = [bytes((i * 7 + j) % 251 for j in range(n)) for i, n in enumerate(sizes)]
    data = _stream(payloads)
    fb = FrameBuffer(10_000)
    got: list[bytes] = []
    pos = step = 0
    while pos < len(data):
        cut = cuts[step % len(cuts)]
        into = ways[step % len(ways)]
        step += 1
        room = fb.room(least) if into else None
        if room is not None:
            assert fb.buffered > 0
            n = min(cut, len(room), len(data) - pos)
            room[:n] = data[pos:pos + n]
            room.release()
            before = fb.buffered
            frame = fb.filled(n)
            pos += n
            if frame is None:
                assert fb.buffered == before + n
            else:
                assert fb.buffered == 0
                got.append(bytes(frame))
            continue
        chunk = data[pos:pos + cut]
        pos += len(chunk)
        got.extend(bytes(f) for f in fb.split(chunk))
    assert got == payloads
    assert fb.buffered == 0


def test_room_only_for_a_frame_whose_rest_is_large_enough():
    fb = FrameBuffer(1 << 20)
    assert fb.room(1) is None  # nothing partly read
    assert fb.split(struct.pack(">i", 100) + b"x" * 10) == []
    assert fb.room(91) is None  # 90 to come
    room = fb.room(90)
    assert room is not None and len(room) == 90
    assert fb.buffered == 4 + 10  # read so far, not the buffer's size
    room[:] = b"y" * 90
    room.release()
    assert fb.filled(90) == bytearray(b"x" * 10 + b"y" * 90)


def test_announced_size_over_the_maximum_fails_before_any_room():
    fb = FrameBuffer(1000)
    with pytest.raises(FrameTooLarge):
        fb.split(struct.pack(">i", 1001) + b"z" * 100)
    assert fb.room(1) is None



@pytest.mark.parametrize("api_key, kept", [(0, True), (14, False), (1, False)])
def test_a_frame_read_into_its_own_buffer(api_key, kept):
    """The frame ``room`` gives a buffer to comes out as that buffer (OwnedBytes: the log may
    keep batches as views of it, kafka_emu/owned_bytes.py) for a Produce (api key 0), as bytes
    for any other API (SyncGroup 14, Fetch 1): decoded from a bytearray, its BYTES fields would
    be bytearrays, unhashable. Frames cut from a chunk are bytes either way."""
    from kafka_emu.owned_bytes import OwnedBytes

    payload = struct.pack(">hh", api_key, 0) + bytes(range(256)) * 600
    data = _stream([payload, b"small"])
    for fed in (False, True):  # the rest read into the buffer, or a chunk fed the usual way
        fb = FrameBuffer(1 << 20)
        assert fb.split(data[:1000]) == []
        room = fb.room(1000)
        assert room is not None
        n = len(data) - 1000 - 9  # the rest of the large frame, not the small one after it
        if fed:
            room.release()
            frames = fb.split(data[1000:])
            frame, rest = frames[0], frames[1:]
        else:
            room[:n] = data[1000:1000 + n]
            room.release()
            frame, rest = fb.filled(n), fb.split(data[1000 + n:])
        assert frame == payload and type(frame) is (OwnedBytes if kept else bytes)
        assert [type(f) for f in rest] == [bytes] and rest == [b"small"]
