"""PartitionLog: append, read, offsets, timestamps, DeleteRecords, retention, LogAppendTime."""

from __future__ import annotations

from log_testing import make_batch, patch, raises_code

from kafka_emu.errors import ErrorCode
from kafka_emu.log.batch import TimestampType, crc_is_valid, parse_header
from kafka_emu.log.config import LogConfig
from kafka_emu.log.partition import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    NOT_FOUND,
    PartitionLog,
)
from kafka_emu.log.records import decode_records


def filled(*counts: int, **kwargs: object) -> PartitionLog:
    log = PartitionLog(**kwargs)  # type: ignore[arg-type]
    for i, count in enumerate(counts):
        log.append(make_batch(count, timestamp_ms=1_000 * (i + 1)), now_ms=0)
    return log


def test_append_assigns_dense_offsets_and_advances_the_high_watermark():
    log = PartitionLog()
    assert (log.log_start_offset, log.high_watermark, log.last_stable_offset) == (0, 0, 0)
    first = log.append(make_batch(3), now_ms=0)
    second = log.append(make_batch(2), now_ms=0)
    assert (first.base_offset, first.last_offset) == (0, 2)
    assert (second.base_offset, second.last_offset) == (3, 4)
    assert first.log_append_time_ms == -1 and not first.duplicate
    assert log.high_watermark == log.log_end_offset == log.last_stable_offset == 5


def test_stored_batches_carry_offset_and_leader_epoch_with_a_valid_crc():
    log = filled(3, 2, leader_epoch=7)
    batches, hwm = log.read(0, 10**6)
    assert hwm == 5
    assert [parse_header(b).base_offset for b in batches] == [0, 3]
    assert all(parse_header(b).partition_leader_epoch == 7 for b in batches)
    assert all(crc_is_valid(b) for b in batches)
    assert [r.offset for b in batches for r in decode_records(b)] == [0, 1, 2, 3, 4]


def test_a_failed_append_changes_nothing():
    log = filled(2)
    corrupt = bytearray(make_batch(1))
    corrupt[-1] ^= 0xFF
    with raises_code(ErrorCode.CORRUPT_MESSAGE):
        log.append(bytes(corrupt), now_ms=0)
    assert log.high_watermark == 2 and log.batch_count == 1


def test_read_starts_at_the_batch_holding_the_fetch_offset():
    log = filled(3, 3, 3)
    batches, _ = log.read(4, 10**6)
    assert [parse_header(b).base_offset for b in batches] == [3, 6]
    batches, _ = log.read(8, 10**6)
    assert [parse_header(b).base_offset for b in batches] == [6]


def test_read_respects_max_bytes_in_whole_batches():
    log = filled(1, 1, 1, 1)
    size = len(log.read(0, 10**6)[0][0])
    assert len(log.read(0, 2 * size)[0]) == 2
    assert len(log.read(0, 2 * size + size - 1)[0]) == 2
    assert len(log.read(1, 3 * size)[0]) == 3


def test_read_always_returns_at_least_one_batch_when_min_one():
    log = filled(50)
    for max_bytes in (0, 1, 60):
        batches, hwm = log.read(10, max_bytes)
        assert len(batches) == 1 and hwm == 50
    assert log.read(10, 1, min_one=False) == ([], 50)


def test_read_at_the_high_watermark_is_empty_not_an_error():
    assert filled(3).read(3, 100) == ([], 3)
    assert PartitionLog().read(0, 100) == ([], 0)


def test_read_out_of_range():
    log = filled(3, 3)
    with raises_code(ErrorCode.OFFSET_OUT_OF_RANGE):
        log.read(7, 100)
    with raises_code(ErrorCode.OFFSET_OUT_OF_RANGE):
        log.read(-1, 100)
    log.delete_records(4)
    with raises_code(ErrorCode.OFFSET_OUT_OF_RANGE):
        log.read(3, 100)
    batches, _ = log.read(4, 100)  # the start moved inside a batch: the batch comes back whole
    assert parse_header(batches[0]).base_offset == 3


def test_special_list_offsets():
    log = filled(3, 3, leader_epoch=2)
    log.delete_records(2)
    assert log.offset_for_timestamp(EARLIEST_TIMESTAMP) == (-1, 2, 2)
    assert log.offset_for_timestamp(EARLIEST_LOCAL_TIMESTAMP) == (-1, 2, 2)
    assert log.offset_for_timestamp(LATEST_TIMESTAMP) == (-1, 6, 2)
    assert log.offset_for_timestamp(LATEST_TIERED_TIMESTAMP) == (-1, -1, -1)


def test_offset_for_timestamp_finds_the_first_record_at_or_after():
    log = PartitionLog()
    log.append(make_batch(3, timestamps=[100, 300, 200]), now_ms=0)  # offsets 0-2
    log.append(make_batch(2, timestamps=[150, 400]), now_ms=0)  # offsets 3-4
    assert log.offset_for_timestamp(0) == (100, 0, 0)
    assert log.offset_for_timestamp(100) == (100, 0, 0)
    assert log.offset_for_timestamp(101) == (300, 1, 0)
    assert log.offset_for_timestamp(301) == (400, 4, 0)
    assert log.offset_for_timestamp(401) == NOT_FOUND
    assert PartitionLog().offset_for_timestamp(5) == NOT_FOUND


def test_offset_for_timestamp_skips_records_below_the_log_start():
    log = PartitionLog()
    log.append(make_batch(3, timestamps=[100, 300, 200]), now_ms=0)
    log.delete_records(2)
    assert log.offset_for_timestamp(0) == (200, 2, 0)
    assert log.offset_for_timestamp(250) == NOT_FOUND


def test_max_timestamp_is_the_first_record_with_the_largest_timestamp():
    log = PartitionLog()
    assert log.offset_for_timestamp(MAX_TIMESTAMP) == NOT_FOUND
    log.append(make_batch(3, timestamps=[100, 900, 200]), now_ms=0)
    log.append(make_batch(2, timestamps=[900, 50]), now_ms=0)
    assert log.offset_for_timestamp(MAX_TIMESTAMP) == (900, 1, 0)


def test_timestamp_index_forgets_dropped_batches():
    log = PartitionLog()
    log.append(make_batch(1, timestamps=[5_000]), now_ms=0)  # out-of-order future stamp
    log.append(make_batch(1, timestamps=[100]), now_ms=0)
    log.append(make_batch(1, timestamps=[200]), now_ms=0)
    assert log.offset_for_timestamp(150) == (5_000, 0, 0)
    log.delete_records(1)
    assert log.offset_for_timestamp(150) == (200, 2, 0)
    assert log.offset_for_timestamp(MAX_TIMESTAMP) == (200, 2, 0)
    log.append(make_batch(1, timestamps=[150]), now_ms=0)
    assert log.offset_for_timestamp(120) == (200, 2, 0)
    assert log.offset_for_timestamp(MAX_TIMESTAMP) == (200, 2, 0)


def test_delete_records():
    log = filled(3, 3, 3)
    assert log.delete_records(4) == 4
    assert log.log_start_offset == 4 and log.batch_count == 2
    assert log.delete_records(2) == 4  # never moves back
    assert log.delete_records(-1) == 9  # -1: up to the high watermark
    assert log.batch_count == 0 and log.size_bytes == 0
    assert log.read(9, 100) == ([], 9)
    log.append(make_batch(1), now_ms=0)
    assert log.read(9, 100)[0] and log.high_watermark == 10


def test_delete_records_out_of_range_and_policy():
    log = filled(3)
    with raises_code(ErrorCode.OFFSET_OUT_OF_RANGE):
        log.delete_records(4)
    with raises_code(ErrorCode.OFFSET_OUT_OF_RANGE):
        log.delete_records(-2)
    compacted = PartitionLog(config=LogConfig(cleanup_policy=frozenset({"compact"})))
    with raises_code(ErrorCode.POLICY_VIOLATION):
        compacted.delete_records(0)


def test_size_is_tracked():
    log = filled(1, 2, 3)
    assert log.size_bytes == sum(len(b) for b in log.read(0, 10**9)[0])
    log.delete_records(1)
    assert log.size_bytes == sum(len(b) for b in log.read(1, 10**9)[0])


def test_retention_bytes_waits_for_the_check_and_keeps_at_least_the_limit():
    size = len(make_batch(1, timestamp_ms=1_000))
    log = PartitionLog(config=LogConfig(retention_bytes=3 * size + 1))
    for _ in range(10):
        log.append(make_batch(1), now_ms=0)
    assert log.batch_count == 10  # nothing goes between retention runs
    # Kafka deletes the oldest segments only while what remains still reaches retention.bytes
    assert log.delete_old_batches(now_ms=0) == 6
    assert log.batch_count == 4 and log.log_start_offset == 6 and log.high_watermark == 10
    assert log.size_bytes == 4 * size
    with raises_code(ErrorCode.OFFSET_OUT_OF_RANGE):
        log.read(5, 100)
    assert parse_header(log.read(6, 10**6)[0][0]).base_offset == 6
    assert log.offset_for_timestamp(EARLIEST_TIMESTAMP).offset == 6
    assert log.delete_old_batches(now_ms=0) == 0


def test_retention_bytes_keeps_a_batch_that_alone_exceeds_it_unless_it_is_zero():
    log = PartitionLog(config=LogConfig(retention_bytes=10))
    log.append(make_batch(5), now_ms=0)
    log.append(make_batch(5), now_ms=0)
    assert log.delete_old_batches(0) == 1
    assert log.batch_count == 1 and log.log_start_offset == 5
    log.config = LogConfig(retention_bytes=0)  # every segment breaches, the active one too
    assert log.delete_old_batches(0) == 1
    assert log.batch_count == 0 and log.log_start_offset == log.high_watermark == 10
    assert log.read(10, 100) == ([], 10)
    assert log.append(make_batch(1), now_ms=0).base_offset == 10


def test_retention_ms_deletes_batches_whose_newest_record_is_older_oldest_first():
    log = PartitionLog(config=LogConfig(retention_ms=1_000))
    for ts in (100, 500, 300, 2_000):
        log.append(make_batch(1, timestamp_ms=ts), now_ms=0)
    assert log.delete_old_batches(now_ms=1_100) == 0  # 1100 - 100 is not more than 1000
    assert log.delete_old_batches(now_ms=1_101) == 1 and log.log_start_offset == 1
    # 500 is not expired at 1400, so the expired batch behind it (300) stays: oldest first
    assert log.delete_old_batches(now_ms=1_400) == 0 and log.batch_count == 3
    assert log.delete_old_batches(now_ms=1_501) == 2 and log.log_start_offset == 3
    assert log.offset_for_timestamp(0) == (2_000, 3, 0)
    # the newest batch goes too once it breaches: the log is empty, its start at its end
    assert log.delete_old_batches(now_ms=3_001) == 1
    assert log.batch_count == 0 and log.log_start_offset == log.high_watermark == 4
    assert log.offset_for_timestamp(0) == NOT_FOUND


def test_retention_ms_then_bytes_in_one_run_and_minus_one_is_forever():
    size = len(make_batch(1, timestamp_ms=0))
    log = PartitionLog(config=LogConfig(retention_ms=-1, retention_bytes=-1))
    for ts in range(6):
        log.append(make_batch(1, timestamp_ms=ts), now_ms=0)
    assert log.delete_old_batches(now_ms=10**12) == 0
    log.config = LogConfig(retention_ms=100, retention_bytes=2 * size)
    assert log.delete_old_batches(now_ms=102) == 4  # 0 and 1 by time, 2 and 3 by size
    assert log.log_start_offset == 4 and log.batch_count == 2


def test_retention_respects_a_log_start_already_moved_by_delete_records():
    log = PartitionLog(config=LogConfig(retention_ms=10))
    for ts in (0, 10, 100):
        log.append(make_batch(2, timestamp_ms=ts), now_ms=0)
    log.delete_records(3)  # into the middle of the second batch
    assert log.delete_old_batches(now_ms=50) == 1  # that one, expired
    assert log.log_start_offset == 4
    log.delete_records(5)
    assert log.delete_old_batches(now_ms=111) == 0  # 111 - 101 is not more than 10
    assert log.log_start_offset == 5  # not back to the batch's base


def test_retention_does_not_apply_to_compact_only_topics():
    log = PartitionLog(config=LogConfig(retention_bytes=0, retention_ms=0,
                                        cleanup_policy=frozenset({"compact"})))
    log.append(make_batch(1), now_ms=0)
    log.append(make_batch(1), now_ms=0)
    assert log.delete_old_batches(10**12) == 0 and log.batch_count == 2


def test_long_retention_run_compacts_storage_and_stays_consistent():
    size = len(make_batch(1))
    log = PartitionLog(config=LogConfig(retention_bytes=5 * size))
    for i in range(1_000):
        log.append(make_batch(1, timestamp_ms=i), now_ms=0)
        log.delete_old_batches(now_ms=i)
    assert len(log._batches) < 200  # the dead prefix was cut off
    assert log.batch_count == 5 and log.log_start_offset == 995
    assert [parse_header(b).base_offset for b in log.read(995, 10**6)[0]] == list(range(995, 1000))
    assert log.offset_for_timestamp(0) == (995, 995, 0)


def test_log_append_time_topics_stamp_the_append_time():
    log = PartitionLog(config=LogConfig(timestamp_type=TimestampType.LOG_APPEND_TIME))
    result = log.append(make_batch(3, timestamp_ms=5), now_ms=77_000)
    assert result.log_append_time_ms == 77_000
    stored = log.read(0, 10**6)[0][0]
    assert crc_is_valid(stored)
    assert [r.timestamp_ms for r in decode_records(stored)] == [77_000] * 3
    assert log.offset_for_timestamp(76_000) == (77_000, 0, 0)
    assert log.offset_for_timestamp(MAX_TIMESTAMP) == (77_000, 0, 0)


def test_producer_set_log_append_time_is_invalid_timestamp_on_log_append_time_topics():
    log = PartitionLog(config=LogConfig(timestamp_type=TimestampType.LOG_APPEND_TIME))
    with raises_code(ErrorCode.INVALID_TIMESTAMP):
        log.append(make_batch(1, timestamp_type=TimestampType.LOG_APPEND_TIME), now_ms=0)


def test_transactional_batch_opens_a_transaction_that_holds_back_the_lso():
    # (was: transactional batches refused; the log now keeps transactions, see test_log_txn.py)
    log = PartitionLog()
    batch = make_batch(1, producer_id=1, producer_epoch=0, base_sequence=0, transactional=True)
    log.append(batch, now_ms=0)
    assert (log.high_watermark, log.last_stable_offset) == (1, 0)


def test_max_message_bytes_from_config():
    log = PartitionLog(config=LogConfig(max_message_bytes=100))
    with raises_code(ErrorCode.MESSAGE_TOO_LARGE):
        log.append(make_batch(1, value_size=200), now_ms=0)


def test_end_offset_for_epoch():
    log = filled(3, leader_epoch=4)
    log.delete_records(1)
    assert log.end_offset_for_epoch(4) == (4, 3)
    assert log.end_offset_for_epoch(2) == (2, 1)
    assert log.end_offset_for_epoch(5) == (-1, -1)
    assert log.end_offset_for_epoch(-1) == (-1, -1)


def test_timestamp_lookup_survives_a_batch_whose_records_do_not_parse():
    # Header says 3 records (consistent, CRC fresh) but the body holds one: Kafka would refuse
    # it on produce by walking the records; we do not walk them, so lookups fall back to batches.
    liar = patch(patch(make_batch(1, timestamp_ms=500), 23, "i", 2), 57, "i", 3)
    log = PartitionLog()
    log.append(liar, now_ms=0)
    assert log.offset_for_timestamp(100) == (500, 0, 0)
    assert log.offset_for_timestamp(MAX_TIMESTAMP) == (500, 2, 0)

