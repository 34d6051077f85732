"""``uvarint_at`` reads one- and two-byte varints without its loop (the generated readers call it
for every length from 128 up: a Produce partition's records). Checked against an independent
decoder written from the wire rule (7 bits per byte, low group first, high bit = more), over
every position, end and length limit, including varints cut short by ``end``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_emu.protocol.errors import DecodeError
from kafka_emu.protocol.primitives import uvarint_at


def _reference(buf: bytes, pos: int, end: int, max_bytes: int):
    value = 0
    for i in range(max_bytes):
        if pos + i >= end:
            return "truncated"
        byte = buf[pos + i]
        value += (byte & 0x7F) * 128 ** i
        if byte < 0x80:
            return value, pos + i + 1
    return "too long"


def _outcome(buf, pos, end, max_bytes):
    try:
        return uvarint_at(buf, pos, end, max_bytes)
    except DecodeError as exc:
        return "truncated" if "truncated" in str(exc) else "too long"


@settings(max_examples=600, deadline=None)
@given(st.binary(min_size=0, max_size=12), st.data(), st.sampled_from([5, 10]))
def test_uvarint_at_reads_as_the_wire_rule_says(buf, data, max_bytes):
    end = data.draw(st.integers(0, len(buf)))
    pos = data.draw(st.integers(0, max(end, 0)))
    for view in (buf, memoryview(buf)):
        assert _outcome(view, pos, end, max_bytes) == _reference(buf, pos, end, max_bytes)


@pytest.mark.parametrize("data, expected", [
    (b"\x00", (0, 1)), (b"\x7f", (127, 1)),           # one byte, the last of the buffer
    (b"\x7f\x01", (127, 1)), (b"\x80\x01", (128, 2)),  # one byte with one after it; two bytes
    (b"\xff\x7f", (16383, 2)), (b"\x80\x80\x01", (16384, 3)),
])
def test_uvarint_at_edges(data, expected):
    assert uvarint_at(data, 0, len(data)) == expected


def test_a_two_byte_varint_cut_by_end_is_truncated():
    with pytest.raises(DecodeError, match="truncated"):
        uvarint_at(b"\x80\x01", 0, 1)
