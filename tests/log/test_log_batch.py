"""Batch header parsing, Produce validation (Kafka 4 order and codes), offset rewrite, builder."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st
from log_testing import make_batch, patch, raises_code

from kafka_emu.errors import ErrorCode
from kafka_emu.log.batch import (
    CRC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TimestampType,
    crc_is_valid,
    increment_sequence,
    parse_header,
    split_batches,
    validate_produce_records,
    with_base_offset,
    with_log_append_time,
)
from kafka_emu.log.records import Record, build_batch, decode_records, record_timestamps

records_strategy = st.lists(
    st.builds(
        Record,
        key=st.none() | st.binary(max_size=20),
        value=st.none() | st.binary(max_size=200),
        headers=st.lists(
            st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=8)), max_size=3
        ).map(tuple),
        timestamp_ms=st.integers(min_value=0, max_value=2**41),
    ),
    min_size=1,
    max_size=20,
)


@given(records_strategy, st.integers(-1, 2**40), st.integers(0, 2**31 - 1))
def test_builder_round_trips_through_header_and_records(records, pid, seq):
    epoch = 3 if pid >= 0 else -1
    seq = seq if pid >= 0 else -1
    batch = build_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq)
    header = parse_header(batch)
    assert header.size == len(batch)
    assert header.magic == 2 and crc_is_valid(batch)
    assert header.record_count == len(records) == header.last_offset_delta + 1
    assert header.base_timestamp == records[0].timestamp_ms
    assert header.max_timestamp == max(r.timestamp_ms for r in records)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (pid, epoch, seq)
    decoded = decode_records(batch)
    assert [(d.key, d.value, d.timestamp_ms) for d in decoded] == [
        (r.key, r.value, r.timestamp_ms) for r in records
    ]
    assert [d.headers for d in decoded] == [tuple(r.headers) for r in records]
    assert [d.offset for d in decoded] == list(range(len(records)))
    assert list(record_timestamps(batch)) == [(d.offset, d.timestamp_ms) for d in decoded]
    assert validate_produce_records(batch)[0] == header


def test_header_flags():
    header = parse_header(make_batch(2, timestamp_type=TimestampType.LOG_APPEND_TIME))
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert not header.is_transactional and not header.is_control and header.compression == 0
    header = parse_header(make_batch(1, transactional=True, control=True, producer_id=1))
    assert header.is_transactional and header.is_control and header.has_producer_id


@given(st.integers(0, len(make_batch(3)) - 1 - 21), st.integers(0, 7))
def test_a_flipped_bit_under_the_crc_is_corrupt_message(index, bit):
    batch = bytearray(make_batch(3))
    batch[21 + index] ^= 1 << bit
    with raises_code(ErrorCode.CORRUPT_MESSAGE):
        validate_produce_records(bytes(batch))


def test_a_flipped_crc_bit_is_corrupt_message():
    batch = bytearray(make_batch(1))
    batch[CRC_OFFSET] ^= 0x01
    with raises_code(ErrorCode.CORRUPT_MESSAGE):
        validate_produce_records(bytes(batch))


def test_truncated_only_batch_is_invalid_record_as_kafka_finds_no_batch():
    batch = make_batch(3)
    for cut in (1, 11, 12, 16, 17, 60, len(batch) - 1):
        with raises_code(ErrorCode.INVALID_RECORD):
            validate_produce_records(batch[:cut])


def test_empty_and_null_records_are_invalid_record():
    for records in (b"", None):
        with raises_code(ErrorCode.INVALID_RECORD):
            validate_produce_records(records)


def test_trailing_partial_batch_is_dropped_like_kafkas_trim_invalid_bytes():
    batch = make_batch(2)
    header, view = validate_produce_records(batch + batch[:30])
    assert bytes(view) == batch
    assert [bytes(v) for v in split_batches(batch + batch[:30])] == [batch]


def test_length_below_v0_minimum_is_corrupt_message():
    with raises_code(ErrorCode.CORRUPT_MESSAGE):
        validate_produce_records(patch(make_batch(1), 8, "i", 13, fresh_crc=False))


def test_impossible_magic_is_corrupt_message():
    for magic in (3, -1):
        with raises_code(ErrorCode.CORRUPT_MESSAGE):
            validate_produce_records(patch(make_batch(1), 16, "b", magic, fresh_crc=False))


def test_magic_0_and_1_message_sets_are_invalid_record_on_produce_v3_plus():
    for magic in (0, 1):
        with raises_code(ErrorCode.INVALID_RECORD) as info:
            validate_produce_records(patch(make_batch(1), 16, "b", magic, fresh_crc=False))
        assert "magic version 2" in str(info.value)


def test_two_batches_are_invalid_record():
    with raises_code(ErrorCode.INVALID_RECORD) as info:
        validate_produce_records(make_batch(1) + make_batch(1))
    assert "exactly one record batch" in str(info.value)


def test_nonzero_base_offset_from_a_client_is_invalid_record():
    with raises_code(ErrorCode.INVALID_RECORD):
        validate_produce_records(make_batch(1, base_offset=7))


def test_batch_over_max_message_bytes_is_message_too_large():
    batch = make_batch(1, value_size=500)
    validate_produce_records(batch, max_message_bytes=len(batch))
    with raises_code(ErrorCode.MESSAGE_TOO_LARGE):
        validate_produce_records(batch, max_message_bytes=len(batch) - 1)


def test_batch_shorter_than_its_header_is_corrupt_message():
    short = patch(make_batch(1)[:40], 8, "i", 28, fresh_crc=False)
    with raises_code(ErrorCode.CORRUPT_MESSAGE):
        validate_produce_records(short)


def test_record_count_checks_are_invalid_record():
    batch = make_batch(3)
    for offset, fmt, value in (
        (57, "i", 0),  # recordCount 0
        (57, "i", -1),
        (57, "i", 4),  # count disagrees with lastOffsetDelta
        (23, "i", 5),
        (23, "i", -1),  # empty offset range
    ):
        with raises_code(ErrorCode.INVALID_RECORD):
            validate_produce_records(patch(batch, offset, fmt, value))


def test_control_batch_from_a_client_is_invalid_record():
    with raises_code(ErrorCode.INVALID_RECORD):
        validate_produce_records(make_batch(1, control=True))


def test_producer_id_without_sequence_is_invalid_record():
    with raises_code(ErrorCode.INVALID_RECORD):
        validate_produce_records(make_batch(1, producer_id=5, producer_epoch=0, base_sequence=-1))


def test_unknown_codec_is_unknown_server_error_as_in_kafka():
    with raises_code(ErrorCode.UNKNOWN_SERVER_ERROR):
        validate_produce_records(patch(make_batch(1), 21, "h", 5))


@given(st.integers(0, 2**62), st.integers(-1, 2**31 - 1))
def test_base_offset_rewrite_keeps_the_crc_valid(base_offset, epoch):
    batch = make_batch(4)
    stored = with_base_offset(memoryview(batch), base_offset, epoch)
    assert crc_is_valid(stored)
    header = parse_header(stored)
    assert (header.base_offset, header.partition_leader_epoch) == (base_offset, epoch)
    assert stored[16:] == batch[16:]
    assert [d.offset for d in decode_records(stored)] == [base_offset + i for i in range(4)]


def test_log_append_time_stamp_recomputes_the_crc():
    batch = make_batch(3, timestamp_ms=5)
    stored = with_log_append_time(batch, 100, 0, 99_999)
    assert crc_is_valid(stored)
    header = parse_header(stored)
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert header.max_timestamp == 99_999 and header.base_offset == 100
    assert [ts for _, ts in record_timestamps(stored)] == [99_999] * 3


def test_sequence_increment_wraps_at_int32_max():
    assert increment_sequence(5, 3) == 8
    assert increment_sequence(2**31 - 1, 1) == 0
    assert increment_sequence(2**31 - 2, 4) == 2
    header = parse_header(make_batch(3, producer_id=1, producer_epoch=0, base_sequence=2**31 - 2))
    assert header.last_sequence == 0  # 2**31-2, 2**31-1, 0


def test_header_is_61_bytes():
    assert RECORD_BATCH_OVERHEAD == struct.calcsize(">qiibIhiqqqhii") == 61


def test_errors_come_in_kafkas_order_magic_before_a_corrupt_second_batch():
    legacy = patch(make_batch(1), 16, "b", 1, fresh_crc=False)
    corrupt_second = patch(make_batch(1), 8, "i", 3, fresh_crc=False)
    with raises_code(ErrorCode.INVALID_RECORD):
        validate_produce_records(legacy + corrupt_second)
    with raises_code(ErrorCode.CORRUPT_MESSAGE):
        validate_produce_records(make_batch(1) + corrupt_second)
