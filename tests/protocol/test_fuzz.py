"""Hostile bytes: every decoder (every message, version) raises DecodeError and nothing else.

Random bytes, mutations of valid encodings, every truncation of a valid encoding, and
targeted damage located generically (see ``_locate``): an int32 array count of 2^31-1 (must
fail at once, not loop or allocate), negative lengths, null where the version forbids it,
invalid UTF-8, trailing bytes.
"""

from __future__ import annotations

import struct
import time

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_emu.protocol import DecodeError, decode, encode
from kafka_emu.protocol.codec import plan_for
from kafka_emu.protocol.primitives import write_uvarint
from kafka_emu.protocol.schema import BYTES, STRING, Array
from kafka_emu.testing.strategies import messages
from protocol_cases import CASES, EXAMPLES, hyp, parametrize_cases


def _decodes_or_decode_error(cls, version, data: bytes) -> None:
    try:
        msg = decode(cls, version, data)
    except DecodeError:
        return
    # whatever parses must be a well-formed message that survives a round trip
    assert encode(msg, version) == data or decode(cls, version, encode(msg, version)) == msg


@parametrize_cases()
def test_random_bytes(cls, version):
    @hyp(EXAMPLES)
    @given(st.binary(max_size=64))
    def check(data):
        _decodes_or_decode_error(cls, version, data)

    check()


_MUTATION = st.tuples(st.sampled_from(["flip", "set", "insert", "delete", "ff"]),
                      st.integers(0, 10_000), st.integers(0, 255))


@parametrize_cases()
def test_mutated_valid_encodings(cls, version):
    @hyp(EXAMPLES)
    @given(messages(cls, version), st.lists(_MUTATION, min_size=1, max_size=3))
    def check(msg, mutations):
        data = bytearray(encode(msg, version))
        for kind, where, byte in mutations:
            i = where % (len(data) + 1)
            if kind == "insert":
                data[i:i] = bytes([byte])
            elif i < len(data):
                if kind == "flip":
                    data[i] ^= 1 << (byte % 8)
                elif kind == "set":
                    data[i] = byte
                elif kind == "ff":  # lengths and counts of -1 / huge
                    data[i:i + 4] = b"\xff\xff\xff\xff"
                else:
                    del data[i]
        _decodes_or_decode_error(cls, version, bytes(data))

    check()


@parametrize_cases()
def test_every_truncation_fails(cls, version):
    @hyp(5)
    @given(messages(cls, version))
    def check(msg):
        data = encode(msg, version)
        for cut in range(len(data)):
            with pytest.raises(DecodeError):
                decode(cls, version, data[:cut])

    check()


@parametrize_cases()
def test_trailing_bytes_fail(cls, version):
    data = encode(cls(), version)
    with pytest.raises(DecodeError, match="trailing"):
        decode(cls, version, data + b"\x00")
    assert decode(cls, version, data + b"\x00", allow_trailing=True) == cls()


# --- targeted damage, located without knowing any message ----------------------------------

def _top_fields(cls, version, kind):
    """(spec, compact) of the top-level fields on the wire at ``version`` matching ``kind``."""
    plan = plan_for(cls, version, version in cls.__kafka__.flexible)
    return [(spec, compact) for spec, compact, _ in plan.regular if kind(spec.type)]


def _locate(cls, version, name, a, b) -> tuple[bytes, int]:
    """The encoding of the default message with field ``name`` = ``a``, and the offset of the
    first byte that changes when it is ``b`` instead."""
    alias = attrs.fields_dict(cls)[name].alias
    ea = encode(cls(**{alias: a}), version)
    eb = encode(cls(**{alias: b}), version)
    i = next(i for i, (x, y) in enumerate(zip(ea, eb)) if x != y)
    return ea, i


def _cases_with(kind):
    found = []
    for cls, version in CASES:
        for spec, compact in _top_fields(cls, version, kind):
            found.append((cls, version, spec, compact))
    return found


def _ids(cases):
    return [f"{c.__name__}-v{v}-{s.name}" for c, v, s, _ in cases]


ARRAYS = _cases_with(lambda t: isinstance(t, Array))
STRINGS = _cases_with(lambda t: t is STRING)
BLOBS = _cases_with(lambda t: t is BYTES)


def _one_element(spec):
    el = spec.type.element
    return el() if isinstance(el, type) else el.zero


@pytest.mark.parametrize("cls,version,spec,compact", ARRAYS, ids=_ids(ARRAYS))
def test_huge_array_count_fails_fast(cls, version, spec, compact):
    data, i = _locate(cls, version, spec.name, [], [_one_element(spec)])
    if compact:  # unsigned varint count+1
        huge = bytearray()
        write_uvarint(huge, 2**31)
        damaged = data[:i] + bytes(huge) + data[i + 1:]
    else:  # int32 count; the first changed byte is its last
        damaged = data[:i - 3] + struct.pack(">i", 2**31 - 1) + data[i + 1:]
    started = time.perf_counter()
    with pytest.raises(DecodeError):
        decode(cls, version, damaged)
    assert time.perf_counter() - started < 0.25  # no loop, no allocation of 2^31 elements


@pytest.mark.parametrize("cls,version,spec,compact", ARRAYS, ids=_ids(ARRAYS))
def test_negative_or_null_array_count(cls, version, spec, compact):
    data, i = _locate(cls, version, spec.name, [], [_one_element(spec)])
    nullable = version in spec.nullable
    if compact:
        damaged = data[:i] + b"\x00" + data[i + 1:]  # null
        if nullable:
            assert getattr(decode(cls, version, damaged), spec.name) is None
        else:
            with pytest.raises(DecodeError, match="null"):
                decode(cls, version, damaged)
        return
    start = i - 3
    for n in (-2, -(2**31)):
        with pytest.raises(DecodeError, match="negative"):
            decode(cls, version, data[:start] + struct.pack(">i", n) + data[start + 4:])
    damaged = data[:start] + struct.pack(">i", -1) + data[start + 4:]
    if nullable:
        assert getattr(decode(cls, version, damaged), spec.name) is None
    else:
        with pytest.raises(DecodeError, match="null"):
            decode(cls, version, damaged)


@pytest.mark.parametrize("cls,version,spec,compact", STRINGS, ids=_ids(STRINGS))
def test_string_lengths_and_utf8(cls, version, spec, compact):
    data, i = _locate(cls, version, spec.name, "", "ab")
    nullable = version in spec.nullable
    start, width = (i, 1) if compact else (i - 1, 2)
    if not compact:
        with pytest.raises(DecodeError, match="negative"):
            decode(cls, version, data[:start] + struct.pack(">h", -2) + data[start + 2:])
    null = b"\x00" if compact else b"\xff\xff"
    damaged = data[:start] + null + data[start + width:]
    if nullable:
        assert getattr(decode(cls, version, damaged), spec.name) is None
    else:
        with pytest.raises(DecodeError, match="null"):
            decode(cls, version, damaged)
    # invalid UTF-8: a lone continuation byte, an overlong form, an encoded surrogate
    two, _ = _locate(cls, version, spec.name, "ab", "")
    body = start + width
    assert two[body:body + 2] == b"ab"
    # is decoded with replacement characters, as Kafka's readers do (they never fail on it)
    for bad in (b"\x80a", b"\xc0\xaf", b"\xed\xa0"):
        value = getattr(decode(cls, version, two[:body] + bad + two[body + 2:]), spec.name)
        assert value == bad.decode("utf-8", "replace") and "\ufffd" in value
    # a length running past the end
    long = bytearray()
    if compact:
        write_uvarint(long, 1000)
    else:
        long += struct.pack(">h", 1000)
    with pytest.raises(DecodeError):
        decode(cls, version, data[:start] + bytes(long) + data[start + width:])


@pytest.mark.parametrize("cls,version,spec,compact", BLOBS, ids=_ids(BLOBS))
def test_bytes_lengths(cls, version, spec, compact):
    data, i = _locate(cls, version, spec.name, b"", b"x")
    nullable = version in spec.nullable
    start, width = (i, 1) if compact else (i - 3, 4)
    if not compact:
        with pytest.raises(DecodeError, match="negative"):
            decode(cls, version, data[:start] + struct.pack(">i", -7) + data[start + 4:])
        with pytest.raises(DecodeError):
            decode(cls, version, data[:start] + struct.pack(">i", 2**31 - 1) + data[start + 4:])
    null = b"\x00" if compact else b"\xff\xff\xff\xff"
    damaged = data[:start] + null + data[start + width:]
    if nullable:
        assert getattr(decode(cls, version, damaged), spec.name) is None
    else:
        with pytest.raises(DecodeError, match="null"):
            decode(cls, version, damaged)


def test_targeted_cases_were_found():
    # the generic locators must keep finding fields as the registry grows
    assert len(ARRAYS) > 50 and len(STRINGS) > 50 and len(BLOBS) > 5


def test_tagged_field_damage():
    # Any flexible message: tags out of order or repeated (accepted: Kafka's generated readers
    # do not check order), an overrunning size, and an unknown tag (skipped, as Kafka does).
    cls, version = next((c, v) for c, v in CASES if v in c.__kafka__.flexible)
    data = encode(cls(), version)
    assert data.endswith(b"\x00")
    base = data[:-1]
    assert decode(cls, version, base + b"\x01\x63\x02zz") == cls()  # unknown tag 99: skipped
    assert decode(cls, version, base + b"\x02\x63\x00\x62\x00") == cls()
    assert decode(cls, version, base + b"\x02\x63\x00\x63\x00") == cls()
    with pytest.raises(DecodeError, match="overruns"):
        decode(cls, version, base + b"\x01\x63\x09zz")
    with pytest.raises(DecodeError, match="varint"):
        decode(cls, version, base + b"\xff\xff\xff\xff\xff\xff")


def test_known_tags_out_of_order_and_repeated_are_read_as_kafka_reads_them():
    from kafka_emu.protocol.messages.fetch import FetchRequest
    base = encode(FetchRequest(), 12)
    assert base.endswith(b"\x00")
    def cluster(text: bytes) -> bytes:  # tag 0
        return b"\x00" + bytes([len(text) + 1, len(text) + 1]) + text

    unknown = b"\x63\x01z"  # tag 99, one byte
    # tag 99 before tag 0: still read; tag 0 twice: the last value wins
    data = base[:-1] + b"\x03" + unknown + cluster(b"first") + cluster(b"last")
    assert decode(FetchRequest, 12, data).cluster_id == "last"
