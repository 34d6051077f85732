"""Records inside an uncompressed magic-2 batch: a small builder and a reader.

Theory of operation
-------------------
The data path never needs this module: appends and fetches move whole batches (see batch.py).
It exists for three smaller jobs:

* ``build_batch`` makes a valid uncompressed batch (varint records, correct CRC-32C) for tests and
  for anything the broker writes itself.
* ``decode_records`` reads one back (tests, debugging).
* ``record_timestamps`` walks an uncompressed batch yielding only (offset, timestamp), skipping keys,
  values and headers by their lengths, so ListOffsets can answer at record precision as Kafka does.
  Compressed batches are never opened here; callers fall back to batch granularity.
* ``keyless_records`` walks an uncompressed batch the same way for the records with a null key,
  which a compacted topic refuses (``KeylessRecords``, Kafka's ``LogValidator.validateKey``).

Record layout (v2; "varint" is zig-zag LEB128 as in protobuf)::

    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
    keyLength varint (-1 = null) | key | valueLength varint (-1 = null) | value
    headerCount varint | (keyLength varint | key utf-8 | valueLength varint | value)*
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

import attrs

from kafka_emu.log.batch import (
    COMPRESSION_MASK,
    CONTROL_MASK,
    MAGIC_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    BatchHeader,
    Compression,
    TimestampType,
    parse_header,
)
from kafka_emu.errors import ErrorCode, KafkaError
from kafka_emu.log.crc import crc32c

_HEADER_NO_CRC = struct.Struct(">qiib")  # baseOffset, batchLength, leaderEpoch, magic
_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. recordCount
_UINT32 = struct.Struct(">I")

Header = tuple[str | bytes, bytes | None]


@attrs.frozen(kw_only=True)
class Record:
    """One record to put in a batch. ``headers`` keys may be str (encoded as UTF-8) or bytes."""

    value: bytes | None = None
    key: bytes | None = None
    headers: Sequence[Header] = ()
    timestamp_ms: int = 0


class DecodedRecord(NamedTuple):
    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


def build_batch(
    records: Iterable[Record],
    *,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
    control: bool = False,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
) -> bytes:
    """An uncompressed magic-2 batch holding ``records`` with offset deltas 0, 1, 2, ...

    baseTimestamp is the first record's timestamp and maxTimestamp the largest, as Java's
    MemoryRecordsBuilder writes them. An empty ``records`` builds a (Kafka-invalid) empty batch.
    """
    records = list(records)
    base_ts = records[0].timestamp_ms if records else 0
    max_ts = max((r.timestamp_ms for r in records), default=-1)
    body = bytearray()
    for delta, record in enumerate(records):
        _append_record(body, delta, record.timestamp_ms - base_ts, record)
    attributes = Compression.NONE
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if transactional:
        attributes |= TRANSACTIONAL_MASK
    if control:
        attributes |= CONTROL_MASK
    after_crc = _AFTER_CRC.pack(
        attributes,
        len(records) - 1,
        base_ts,
        max_ts,
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    )
    crc = crc32c.crc32c(after_crc + body)
    batch_length = RECORD_BATCH_OVERHEAD - 12 + len(body)
    return b"".join(
        (
            _HEADER_NO_CRC.pack(base_offset, batch_length, partition_leader_epoch, MAGIC_V2),
            _UINT32.pack(crc),
            after_crc,
            body,
        )
    )


def _append_record(out: bytearray, offset_delta: int, timestamp_delta: int, record: Record) -> None:
    body = bytearray(b"\x00")  # record attributes: unused, always 0
    write_varint(body, timestamp_delta)
    write_varint(body, offset_delta)
    _write_nullable_bytes(body, record.key)
    _write_nullable_bytes(body, record.value)
    write_varint(body, len(record.headers))
    for key, value in record.headers:
        _write_nullable_bytes(body, key.encode() if isinstance(key, str) else key)
        _write_nullable_bytes(body, value)
    write_varint(out, len(body))
    out += body


def _write_nullable_bytes(out: bytearray, data: bytes | None) -> None:
    if data is None:
        write_varint(out, -1)
    else:
        write_varint(out, len(data))
        out += data


def write_varint(out: bytearray, value: int) -> None:
    """Zig-zag LEB128, good for Kafka's varint and varlong alike."""
    v = (value << 1) ^ (value >> 63)
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def read_varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Decode a zig-zag varint at ``pos``; return (value, next position)."""
    shift = 0
    raw = 0
    while True:
        byte = data[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def is_uncompressed(batch: bytes | memoryview) -> bool:
    return not parse_header(batch).attributes & COMPRESSION_MASK


def record_timestamps(batch: bytes | memoryview) -> Iterator[tuple[int, int]]:
    """(offset, timestamp) of each record of an uncompressed batch, without decoding payloads.

    LogAppendTime batches report maxTimestamp for every record, as Kafka's readers do.
    """
    header = parse_header(batch)
    if header.attributes & COMPRESSION_MASK:
        raise ValueError("record_timestamps needs an uncompressed batch")
    log_append = bool(header.attributes & TIMESTAMP_TYPE_MASK)
    pos, size = RECORD_BATCH_OVERHEAD, len(batch)
    for _ in range(header.record_count):
        length, pos = read_varint(batch, pos)
        end = pos + length
        if length <= 0 or end > size:  # garbage; never loop on a lying count
            raise ValueError(f"record length {length} does not fit the batch")
        ts_delta, p = read_varint(batch, pos + 1)  # skip the attributes byte
        offset_delta, _ = read_varint(batch, p)
        timestamp = header.max_timestamp if log_append else header.base_timestamp + ts_delta
        yield header.base_offset + offset_delta, timestamp
        pos = end


def record_timestamps_or_none(batch: bytes | memoryview,
                              header: BatchHeader) -> list[tuple[int, int]] | None:
    """``record_timestamps`` as a list, or None when only batch granularity is possible.

    That is for compressed batches, and for an uncompressed one whose records section does not
    parse: Kafka walks every record on produce and would have refused it; we do not, so a lookup
    must not fail on it later.
    """
    if header.attributes & COMPRESSION_MASK:
        return None
    try:
        return list(record_timestamps(batch))
    except (IndexError, ValueError):
        return None


def keyless_records(batch: bytes | memoryview) -> list[int]:
    """Indexes (in the batch) of the records of an uncompressed batch whose key is null; an
    empty key is a key. A record that does not fit its batch is INVALID_RECORD, as Kafka's
    DefaultRecord.readFrom finds it."""
    header = parse_header(batch)
    if header.attributes & COMPRESSION_MASK:
        raise ValueError("keyless_records needs an uncompressed batch")
    keyless = []
    pos, size = RECORD_BATCH_OVERHEAD, len(batch)
    try:
        for index in range(header.record_count):
            length, pos = read_varint(batch, pos)
            end = pos + length
            if length <= 0 or end > size:
                raise ValueError(f"record length {length} does not fit the batch")
            _, p = read_varint(batch, pos + 1)  # skip the attributes byte, the timestamp delta
            _, p = read_varint(batch, p)  # offset delta
            key_length, _ = read_varint(batch, p)
            if key_length < 0:
                keyless.append(index)
            pos = end
    except (ValueError, IndexError) as exc:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Found invalid record structure: {exc}") from None
    return keyless


class KeylessRecords(KafkaError):
    """Records without a key sent to a compacted topic: INVALID_RECORD with one record error per
    such record (Kafka's RecordValidationException from LogValidator.validateKey). The log does
    not know its topic's name, so the handler asks ``describe`` for the messages."""

    def __init__(self, indexes: list[int]) -> None:
        super().__init__(ErrorCode.INVALID_RECORD)
        self.indexes = indexes

    def describe(self, topic: str, partition: int) -> tuple[str, list[tuple[int, str]]]:
        """(error message, [(batch index, message)]) as Kafka words them for Produce v8+."""
        errors = [(i, "Compacted topic cannot accept message without key in topic partition "
                      f"{topic}-{partition}") for i in self.indexes]
        shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in errors[:3])
        return (f"One or more records have been rejected due to {len(errors)} record errors in "
                f"total, and only showing the first three errors at most: [{shown}]", errors)


def decode_records(batch: bytes | memoryview) -> list[DecodedRecord]:
    """Every record of an uncompressed batch, fully decoded."""
    header = parse_header(batch)
    if header.attributes & COMPRESSION_MASK:
        raise ValueError("decode_records needs an uncompressed batch")
    log_append = bool(header.attributes & TIMESTAMP_TYPE_MASK)
    data = bytes(batch)
    out: list[DecodedRecord] = []
    pos = RECORD_BATCH_OVERHEAD
    for _ in range(header.record_count):
        length, pos = read_varint(data, pos)
        end = pos + length
        ts_delta, p = read_varint(data, pos + 1)
        offset_delta, p = read_varint(data, p)
        key, p = _read_nullable_bytes(data, p)
        value, p = _read_nullable_bytes(data, p)
        count, p = read_varint(data, p)
        headers = []
        for _ in range(count):
            hkey, p = _read_nullable_bytes(data, p)
            hvalue, p = _read_nullable_bytes(data, p)
            headers.append(((hkey or b"").decode(), hvalue))
        if p != end:
            raise ValueError(f"record length {length} does not match its contents")
        timestamp = header.max_timestamp if log_append else header.base_timestamp + ts_delta
        out.append(DecodedRecord(header.base_offset + offset_delta, timestamp, key, value, tuple(headers)))
        pos = end
    return out


def _read_nullable_bytes(data: bytes, pos: int) -> tuple[bytes | None, int]:
    length, pos = read_varint(data, pos)
    if length < 0:
        return None, pos
    return data[pos : pos + length], pos + length

