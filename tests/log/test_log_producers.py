"""Idempotent producers: duplicates, gaps, epochs, wrap-around, unknown producers, InitProducerId."""

from __future__ import annotations

from log_testing import idempotent_batch, raises_code

from kafka_emu.errors import ErrorCode
from kafka_emu.log.config import LogConfig
from kafka_emu.log.partition import PartitionLog
from kafka_emu.log.producers import ProducerIdAllocator, ProducerStateTable


def test_in_sequence_batches_append():
    log = PartitionLog()
    assert log.append(idempotent_batch(3, pid=1, epoch=0, seq=0), 0).base_offset == 0
    assert log.append(idempotent_batch(2, pid=1, epoch=0, seq=3), 0).base_offset == 3
    assert log.producers.entry(1).last_seq == 4


def test_a_retry_of_any_of_the_last_five_batches_returns_the_original_offsets():
    log = PartitionLog()
    log.append(idempotent_batch(1, pid=2, epoch=0, seq=0), 0)  # offset 0, soon forgotten
    seq = 1
    for _ in range(5):
        log.append(idempotent_batch(2, pid=2, epoch=0, seq=seq), 0)
        seq += 2
    hwm = log.high_watermark
    retry = log.append(idempotent_batch(2, pid=2, epoch=0, seq=3, timestamp_ms=1_000), 0)
    assert retry.duplicate and (retry.base_offset, retry.last_offset) == (3, 4)
    # Kafka reports the remembered batch timestamp as log_append_time for a retry.
    assert retry.log_append_time_ms == 1_001
    assert log.high_watermark == hwm
    # The sixth-newest batch has left the window: resending it is just out of order.
    with raises_code(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER):
        log.append(idempotent_batch(1, pid=2, epoch=0, seq=0), 0)


def test_a_duplicate_needs_the_exact_sequence_range():
    log = PartitionLog()
    log.append(idempotent_batch(3, pid=1, epoch=0, seq=0), 0)
    with raises_code(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER):
        log.append(idempotent_batch(2, pid=1, epoch=0, seq=0), 0)


def test_a_sequence_gap_is_out_of_order():
    log = PartitionLog()
    log.append(idempotent_batch(2, pid=1, epoch=0, seq=0), 0)
    with raises_code(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER):
        log.append(idempotent_batch(1, pid=1, epoch=0, seq=3), 0)
    assert log.high_watermark == 2


def test_sequences_wrap_from_int32_max_to_zero():
    log = PartitionLog()
    log.append(idempotent_batch(2, pid=1, epoch=0, seq=2**31 - 2), 0)
    assert log.append(idempotent_batch(1, pid=1, epoch=0, seq=0), 0).base_offset == 2
    wrapped = PartitionLog()
    wrapped.append(idempotent_batch(3, pid=1, epoch=0, seq=2**31 - 2), 0)  # ends at seq 0
    assert wrapped.append(idempotent_batch(1, pid=1, epoch=0, seq=1), 0).base_offset == 3


def test_an_older_epoch_is_invalid_producer_epoch():
    log = PartitionLog()
    log.append(idempotent_batch(1, pid=1, epoch=3, seq=0), 0)
    with raises_code(ErrorCode.INVALID_PRODUCER_EPOCH):
        log.append(idempotent_batch(1, pid=1, epoch=2, seq=1), 0)


def test_a_new_epoch_must_start_at_sequence_zero():
    log = PartitionLog()
    log.append(idempotent_batch(2, pid=1, epoch=0, seq=0), 0)
    with raises_code(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER):
        log.append(idempotent_batch(1, pid=1, epoch=1, seq=2), 0)
    assert log.append(idempotent_batch(1, pid=1, epoch=1, seq=0), 0).base_offset == 2
    # The epoch bump forgot the old epoch's batches: resending one is fenced, not a duplicate.
    with raises_code(ErrorCode.INVALID_PRODUCER_EPOCH):
        log.append(idempotent_batch(2, pid=1, epoch=0, seq=0), 0)


def test_an_unknown_producer_may_start_at_any_sequence_as_since_kafka_2_5():
    log = PartitionLog()
    assert log.append(idempotent_batch(1, pid=8, epoch=4, seq=1234), 0).base_offset == 0
    assert log.append(idempotent_batch(1, pid=8, epoch=4, seq=1235), 0).base_offset == 1


def test_producer_state_survives_delete_records_and_retention():
    log = PartitionLog(config=LogConfig(retention_bytes=1))
    log.append(idempotent_batch(1, pid=1, epoch=0, seq=0), 0)
    log.append(idempotent_batch(1, pid=1, epoch=0, seq=1), 0)
    log.delete_old_batches(0)
    log.delete_records(-1)
    with raises_code(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER):
        log.append(idempotent_batch(1, pid=1, epoch=0, seq=5), 0)
    assert log.append(idempotent_batch(1, pid=1, epoch=0, seq=1), 0).duplicate


def test_producers_are_tracked_per_partition():
    a, b = PartitionLog(), PartitionLog()
    a.append(idempotent_batch(1, pid=1, epoch=0, seq=0), 0)
    a.append(idempotent_batch(1, pid=1, epoch=0, seq=1), 0)
    assert b.append(idempotent_batch(1, pid=1, epoch=0, seq=0), 0).base_offset == 0


def test_non_idempotent_batches_skip_producer_state():
    log = PartitionLog()
    log.append(idempotent_batch(1, pid=-1, epoch=-1, seq=-1), 0)
    log.append(idempotent_batch(1, pid=-1, epoch=-1, seq=-1), 0)
    assert log.high_watermark == 2 and len(log.producers) == 0


def test_remove_expired_uses_the_last_batch_timestamp():
    table = ProducerStateTable()
    log = PartitionLog(producers=table)
    log.append(idempotent_batch(1, pid=1, epoch=0, seq=0, timestamp_ms=1_000), 0)
    log.append(idempotent_batch(1, pid=2, epoch=0, seq=0, timestamp_ms=5_000), 0)
    assert table.remove_expired(now_ms=11_000, expiration_ms=10_000) == 1
    assert table.entry(1) is None and table.entry(2) is not None


def test_init_producer_id_hands_out_fresh_ids_with_epoch_zero():
    allocator = ProducerIdAllocator()
    assert allocator.init_producer_id() == (0, 0)
    assert allocator.init_producer_id() == (1, 0)
    # v3+ may name an existing id/epoch; without a transactional id Kafka still hands out a new id.
    assert allocator.init_producer_id(producer_id=1, producer_epoch=0) == (2, 0)
