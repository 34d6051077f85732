"""Cross-check against an independent implementation: kafka-python's record batch code."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from log_testing import raises_code

from kafka_emu.errors import ErrorCode
from kafka_emu.log.batch import Compression, crc_is_valid, parse_header, validate_produce_records
from kafka_emu.log.partition import PartitionLog
from kafka_emu.log.records import Record, build_batch, decode_records

CODECS = [
    DefaultRecordBatchBuilder.CODEC_NONE,
    DefaultRecordBatchBuilder.CODEC_GZIP,
    DefaultRecordBatchBuilder.CODEC_LZ4,
    DefaultRecordBatchBuilder.CODEC_SNAPPY,
    DefaultRecordBatchBuilder.CODEC_ZSTD,
]


def kafka_python_batch(
    records: list[Record], codec: int = 0, *, pid: int = -1, epoch: int = -1, seq: int = -1
) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        batch_size=10**7,
    )
    for i, record in enumerate(records):
        headers = [(k if isinstance(k, str) else k.decode(), v) for k, v in record.headers]
        builder.append(i, record.timestamp_ms, record.key, record.value, headers)
    return bytes(builder.build())


records_strategy = st.lists(
    st.builds(
        Record,
        key=st.none() | st.binary(max_size=16),
        value=st.none() | st.binary(max_size=300),
        headers=st.lists(
            st.tuples(st.text(max_size=6), st.none() | st.binary(max_size=6)), max_size=2
        ).map(tuple),
        timestamp_ms=st.integers(min_value=0, max_value=2**41),
    ),
    min_size=1,
    max_size=15,
)


@settings(max_examples=60)
@given(records_strategy)
def test_kafka_python_reads_what_we_build(records):
    ours = build_batch(records, producer_id=9, producer_epoch=1, base_sequence=40)
    theirs = DefaultRecordBatch(ours)
    assert theirs.validate_crc()
    assert (theirs.producer_id, theirs.producer_epoch, theirs.base_sequence) == (9, 1, 40)
    assert theirs.records_count == len(records) and theirs.last_offset_delta == len(records) - 1
    assert theirs.max_timestamp == max(r.timestamp_ms for r in records)
    decoded = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in theirs]
    assert decoded == [
        (i, r.timestamp_ms, r.key, r.value, [(k, v) for k, v in r.headers])
        for i, r in enumerate(records)
    ]


@settings(max_examples=60)
@given(records_strategy)
def test_our_uncompressed_batches_are_byte_identical_to_kafka_pythons(records):
    # kafka-python writes partitionLeaderEpoch 0 where Java writes -1; the broker overwrites it.
    assert build_batch(records, partition_leader_epoch=0) == kafka_python_batch(records)


@pytest.mark.parametrize("codec", CODECS)
def test_we_parse_kafka_python_batches_by_header_including_compressed(codec):
    records = [Record(key=b"k", value=b"v" * 400, timestamp_ms=1_000 + i) for i in range(50)]
    theirs = kafka_python_batch(records, codec, pid=3, epoch=0, seq=0)
    header, view = validate_produce_records(theirs)
    assert header.compression == codec
    assert header.record_count == 50 and header.last_offset_delta == 49
    assert (header.base_timestamp, header.max_timestamp) == (1_000, 1_049)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (3, 0, 0)
    if codec == Compression.NONE:
        assert [d.value for d in decode_records(view)] == [r.value for r in records]


@pytest.mark.parametrize("codec", CODECS)
def test_stored_batches_still_decode_in_kafka_python(codec):
    records = [Record(key=b"k%d" % i, value=b"x" * 300, timestamp_ms=500 + i) for i in range(20)]
    log = PartitionLog()
    log.append(kafka_python_batch([Record(value=b"first")]), now_ms=0)
    log.append(kafka_python_batch(records, codec), now_ms=0)
    stored = log.read(1, 10**6)[0][0]
    assert crc_is_valid(stored)
    theirs = DefaultRecordBatch(stored)
    assert theirs.validate_crc()
    assert [r.offset for r in theirs] == list(range(1, 21))
    assert parse_header(stored).base_offset == 1


def test_offsets_for_timestamps_on_a_compressed_batch_are_batch_granular():
    log = PartitionLog()
    log.append(kafka_python_batch([Record(value=b"a", timestamp_ms=10)]), now_ms=0)
    records = [Record(value=b"v" * 100, timestamp_ms=100 + i) for i in range(10)]
    log.append(kafka_python_batch(records, DefaultRecordBatchBuilder.CODEC_GZIP), now_ms=0)
    # Kafka would answer offset 6 (timestamp 105); without decompressing we answer the batch.
    found = log.offset_for_timestamp(105)
    assert found.offset == 1 and found.timestamp == 109
    assert log.offset_for_timestamp(-3).offset == 10


def test_legacy_message_sets_are_invalid_record():
    for magic in (0, 1):
        builder = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=10**6)
        builder.append(0, timestamp=1_000 if magic else None, key=b"k", value=b"v")
        with raises_code(ErrorCode.INVALID_RECORD):
            validate_produce_records(bytes(builder.build()))
