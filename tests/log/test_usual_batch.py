"""The Produce fast path (``usual_produce_batch``) against the full validation it short-cuts.

``PartitionLog.append`` first asks ``usual_produce_batch`` whether a records blob is the usual
valid batch; only when it is not does ``validate_produce_records`` run, in Kafka's order, to name
the error. So the two must agree: whatever the fast path accepts, the full validation accepts
with the same header, and whatever the full validation refuses, the fast path refuses too.
Header fields and the framing are mutated one at a time and several at once.
"""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_emu.errors import KafkaError
from kafka_emu.log.batch import (parse_header, usual_produce_batch, validate_produce_records,
                                 with_fresh_crc)
from kafka_emu.log.partition import PartitionLog
from kafka_emu.log.records import Record, build_batch

MAX = 1_000

# (byte offset, struct format) of each header field
FIELDS = [(0, ">q"), (8, ">i"), (12, ">i"), (16, ">b"), (17, ">I"), (21, ">h"), (23, ">i"),
          (27, ">q"), (35, ">q"), (43, ">q"), (51, ">h"), (53, ">i"), (57, ">i")]
SMALL = st.sampled_from([-2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 0x10, 0x20, 0x27, 0x28, 61, 2**31 - 1])


def _valid(records: int = 3, producer_id: int = -1) -> bytes:
    return build_batch([Record(key=b"k", value=b"v" * 20, timestamp_ms=1000 + i)
                        for i in range(records)],
                       producer_id=producer_id, producer_epoch=0 if producer_id >= 0 else -1,
                       base_sequence=0 if producer_id >= 0 else -1)


def _full(blob):
    try:
        return validate_produce_records(blob, max_message_bytes=MAX)[0]
    except KafkaError as exc:
        return exc.code


@st.composite
def blobs(draw):
    blob = bytearray(_valid(draw(st.integers(1, 4)), draw(st.sampled_from([-1, 7]))))
    for _ in range(draw(st.integers(0, 3))):
        offset, fmt = draw(st.sampled_from(FIELDS))
        value = draw(SMALL)
        size = struct.calcsize(fmt)
        lo, hi = -(2 ** (8 * size - 1)), 2 ** (8 * size - 1) - 1
        if fmt == ">I":
            lo, hi = 0, 2**32 - 1
        struct.pack_into(fmt, blob, offset, min(max(value, lo), hi))
    if draw(st.integers(0, 3)):
        blob = bytearray(with_fresh_crc(blob))  # header changes that keep the CRC right
    # mostly whole: the header mutations are the point, framing damage the exception
    cut = draw(st.sampled_from([None] * 10 + [0, 1, 12, 17, 60, 61, -1, "extra", "twice", "pad"]))
    if cut == "extra":
        blob += b"\x00" * 5  # trailing bytes too short for a batch
    elif cut == "twice":
        blob = blob + blob
    elif cut == "pad":
        blob += b"\x00" * MAX  # over max.message.bytes once the length says so
    elif cut is not None:
        blob = blob[:cut]
    return bytes(blob)


@settings(max_examples=400, deadline=None)
@given(blobs())
def test_the_fast_path_accepts_only_what_the_full_validation_accepts(blob):
    fast = usual_produce_batch(blob, MAX)
    full = _full(blob)
    if fast is not None:
        assert full == fast  # the same header, no error
    if isinstance(full, int):  # an error code: the fast path must have declined
        assert fast is None


def test_the_usual_batch_takes_the_fast_path_and_a_view_reads_the_same():
    blob = _valid()
    assert usual_produce_batch(blob, MAX) == parse_header(blob)
    assert usual_produce_batch(memoryview(blob), MAX) == parse_header(blob)
    assert usual_produce_batch(None, MAX) is None
    assert usual_produce_batch(blob, len(blob) - 1) is None  # over max.message.bytes


@settings(max_examples=150, deadline=None)
@given(blobs())
def test_append_answers_as_the_full_validation(blob):
    """An append refuses with the full validation's error, or appends what it accepts."""
    log = PartitionLog()
    log.config = log.config.with_overrides({"max.message.bytes": str(MAX)})
    full = _full(blob)
    try:
        result = log.append(blob, 5)
    except KafkaError as exc:
        assert isinstance(full, int) or exc.code not in (2, 87, 10), exc  # later checks only
        if isinstance(full, int):
            assert exc.code == full
        return
    assert not isinstance(full, int)
    assert (result.base_offset, result.last_offset) == (0, full.last_offset_delta)
    assert log.high_watermark == full.last_offset_delta + 1


def _mutated(offset: int, fmt: str, value: int, fresh_crc: bool = True) -> bytes:
    blob = bytearray(_valid(3, producer_id=7))
    struct.pack_into(fmt, blob, offset, value)
    return with_fresh_crc(blob) if fresh_crc else bytes(blob)


def test_each_check_of_the_full_validation_sends_the_fast_path_away():
    """One case per check, each otherwise valid (CRC recomputed): the fast path declines and
    the full validation names the error."""
    cases = {
        "base offset": _mutated(0, ">q", 5),
        "length": _mutated(8, ">i", 10_000),
        "magic": _mutated(16, ">b", 1),
        "crc": _mutated(17, ">I", 1, fresh_crc=False),
        "codec": _mutated(21, ">h", 5),
        "control": _mutated(21, ">h", 0x20),
        "offset range": _mutated(23, ">i", 5),
        "count": _mutated(57, ">i", 0),
        "sequence": _mutated(53, ">i", -1),
        "too large": _valid(40),
    }
    for name, blob in cases.items():
        assert usual_produce_batch(blob, MAX) is None, name
        assert isinstance(_full(blob), int), name
