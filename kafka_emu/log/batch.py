"""Magic-2 record batches, handled by their fixed header only.

Theory of operation
-------------------
A Kafka broker stores what producers send. Each partition of a Produce request carries one magic-2
RecordBatch; the broker checks its frame and CRC, writes the assigned base offset and the partition
leader epoch into the first 16 bytes (the CRC does not cover them) and keeps the bytes as they are.
Fetch hands the same bytes back. So the data path never decodes a record: all it needs (offset
delta, record count, timestamps, producer id/epoch/sequence) sits in the fixed 61-byte header,
and the cost of an append is one header unpack, one CRC-32C pass in C and one copy.

Header layout (big-endian; byte offsets)::

     0 baseOffset            int64   ┐ outside the CRC: the broker rewrites these two
     8 batchLength           int32   │ (bytes after this field)
    12 partitionLeaderEpoch  int32   ┘
    16 magic                 int8
    17 crc                   uint32    CRC-32C over bytes 21..end
    21 attributes            int16     codec bits 0-2, timestamp type bit 3,
                                       transactional bit 4, control bit 5
    23 lastOffsetDelta       int32
    27 baseTimestamp         int64
    35 maxTimestamp          int64
    43 producerId            int64
    51 producerEpoch         int16
    53 baseSequence          int32
    57 recordCount           int32
    61 records...

Produce validation mirrors Kafka 4.x, in Kafka's order (``validate_produce_records``):

1. Framing, as ``ByteBufferLogInputStream``: a length field below 14 (the v0 minimum) or a magic
   outside 0..2 is ``CORRUPT_MESSAGE``; a batch cut short is not an error, the iterator just stops,
   so trailing partial bytes are dropped (Kafka's ``trimInvalidBytes``).
2. ``ProduceRequest.validateRecords`` (Produce v3+, the only versions Kafka 4 accepts, KIP-896):
   no complete batch, a first batch whose magic is not 2, or a second batch are all
   ``INVALID_RECORD`` (``InvalidRecordException`` → 87). So v0/v1 message sets get
   INVALID_RECORD, not UNSUPPORTED_FOR_MESSAGE_FORMAT or CORRUPT_MESSAGE.
3. ``UnifiedLog.analyzeAndValidateRecords``: baseOffset != 0 → INVALID_RECORD; size above
   ``max.message.bytes`` → MESSAGE_TOO_LARGE; size below 61 or a CRC mismatch → CORRUPT_MESSAGE.
4. ``LogValidator.validateBatch``: lastOffsetDelta + 1 != recordCount or recordCount <= 0,
   a control batch, or a producer id without a sequence → INVALID_RECORD.

Deliberately not done (they need per-record work or decompression): Kafka also walks every record
(per-record timestamp bounds, keys on compacted topics, inner offsets of compressed batches) and
recomputes maxTimestamp from the records; we trust the header. An unknown codec id (5-7) makes
Kafka throw IllegalArgumentException from ``CompressionType.forId``, which reaches the client as
UNKNOWN_SERVER_ERROR; we do the same, on purpose.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterator
from typing import NamedTuple

from kafka_emu.errors import ErrorCode, KafkaError
from kafka_emu.log.crc import crc32c

MAGIC_V2 = 2
LOG_OVERHEAD = 12  # baseOffset + batchLength: the bytes before batchLength starts counting
HEADER_SIZE_UP_TO_MAGIC = 17
RECORD_BATCH_OVERHEAD = 61
MIN_RECORD_SIZE_V0 = 14  # LegacyRecord.RECORD_OVERHEAD_V0, the framing floor for any magic
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MAX_TIMESTAMP_OFFSET = 35

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
NO_PARTITION_LEADER_EPOCH = -1
INT32_MAX = 2**31 - 1

# Kafka 4 LogConfig.DEFAULT_MAX_MESSAGE_BYTES: 1 MiB + LOG_OVERHEAD.
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 + LOG_OVERHEAD

_HEADER = struct.Struct(">qiibIhiqqqhii")
_PREFIX = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch
_LENGTH = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_UINT32 = struct.Struct(">I")
_INT16 = struct.Struct(">h")
_LAST_CODEC = 4  # Compression.ZSTD, as a plain int for the hot path
_new_tuple = tuple.__new__  # NamedTuple._make without its length check: unpack gives 13 fields


class Compression(enum.IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(enum.IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class BatchHeader(NamedTuple):
    """The 61-byte magic-2 header. A NamedTuple, not attrs: it is built straight from
    ``struct.unpack`` on every append, and that tuple needs no per-field work."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        """Bytes of the whole batch, including baseOffset and batchLength."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        return increment_sequence(self.base_sequence, self.last_offset_delta)


def increment_sequence(sequence: int, increment: int) -> int:
    """Sequences wrap from int32 max to 0 (DefaultRecordBatch.incrementSequence)."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def parse_header(data: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Unpack the header at ``pos``; the caller guarantees 61 bytes are there."""
    return _new_tuple(BatchHeader, _HEADER.unpack_from(data, pos))


def max_timestamp(batch: bytes | bytearray | memoryview) -> int:
    """The batch header's maxTimestamp (what retention and a ListOffsets by time read)."""
    return _INT64.unpack_from(batch, MAX_TIMESTAMP_OFFSET)[0]


def compute_crc(batch: bytes | bytearray | memoryview) -> int:
    view = batch if isinstance(batch, memoryview) else memoryview(batch)
    return crc32c.crc32c(view[ATTRIBUTES_OFFSET:])


def crc_is_valid(batch: bytes | bytearray | memoryview) -> bool:
    if len(batch) < RECORD_BATCH_OVERHEAD:
        return False
    return _UINT32.unpack_from(batch, CRC_OFFSET)[0] == compute_crc(batch)


def iter_batches(records: bytes | bytearray | memoryview) -> Iterator[memoryview]:
    """Whole batches of a records blob by Kafka's framing rules, lazily and without copies.

    Trailing bytes too short to hold a whole batch end the iteration, as Kafka's iterator does;
    a length below the v0 minimum or an impossible magic is CORRUPT_MESSAGE when reached.
    """
    view = records if isinstance(records, memoryview) else memoryview(records)
    total = len(view)
    pos = 0
    while total - pos >= LOG_OVERHEAD:
        length = _LENGTH.unpack_from(view, pos + 8)[0]
        if length < MIN_RECORD_SIZE_V0:
            raise KafkaError(
                ErrorCode.CORRUPT_MESSAGE,
                f"Record size {length} is less than the minimum record overhead "
                f"({MIN_RECORD_SIZE_V0})",
            )
        if total - pos < HEADER_SIZE_UP_TO_MAGIC:
            return
        magic = view[pos + 16]
        if magic > MAGIC_V2:  # a memoryview byte is unsigned, so negative magics land here too
            raise KafkaError(
                ErrorCode.CORRUPT_MESSAGE, f"Invalid magic found in record: {_signed8(magic)}"
            )
        end = pos + length + LOG_OVERHEAD
        if end > total:
            return
        yield view[pos:end]
        pos = end


def split_batches(records: bytes | bytearray | memoryview) -> list[memoryview]:
    return list(iter_batches(records))


def validate_produce_records(
    records: bytes | bytearray | memoryview | None,
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> tuple[BatchHeader, memoryview]:
    """Check one partition's Produce ``records`` as Kafka 4 does; return (header, batch view).

    Everything here is O(1) in the number of records: one header unpack and one CRC pass.
    """
    view = memoryview(records if records is not None else b"")
    total = len(view)
    if (
        total >= RECORD_BATCH_OVERHEAD
        and view[16] == MAGIC_V2
        and _LENGTH.unpack_from(view, 8)[0] + LOG_OVERHEAD == total
    ):
        batch = view  # the usual case, exactly one magic-2 batch: skip the framing walk
    else:
        batch = _single_batch(view)
    base_offset = _INT64.unpack_from(batch, 0)[0]
    if base_offset != 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"The baseOffset of the record batch in the append should be 0, but it is {base_offset}",
        )
    size = len(batch)
    if size > max_message_bytes:
        raise KafkaError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"The record batch size in the append is {size} bytes which exceeds the maximum "
            f"configured value of {max_message_bytes}.",
        )
    if size < RECORD_BATCH_OVERHEAD:
        raise KafkaError(
            ErrorCode.CORRUPT_MESSAGE,
            f"Record batch is corrupt (the size {size} is smaller than the minimum allowed "
            f"overhead {RECORD_BATCH_OVERHEAD})",
        )
    header = parse_header(batch)
    computed = crc32c.crc32c(batch[ATTRIBUTES_OFFSET:])
    if header.crc != computed:
        raise KafkaError(
            ErrorCode.CORRUPT_MESSAGE,
            f"Record is corrupt (stored crc = {header.crc}, computed crc = {computed})",
        )
    codec = header.attributes & COMPRESSION_MASK
    if codec > Compression.ZSTD:
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {codec}")
    _validate_batch(header)
    return header, batch


def usual_produce_batch(records, max_message_bytes: int) -> tuple | None:
    """The header of ``records`` when it is what producers send and Kafka accepts, else None:
    its 13 fields as a plain tuple in BatchHeader's order (a BatchHeader is built only where
    its names are read, for a producer's state: ``BatchHeader._make(fields)``).

    The usual payload -- exactly one magic-2 batch, base offset 0, within ``max_message_bytes``,
    its CRC right, a known codec, a consistent record count, no control bit, a sequence if it
    has a producer id -- passes every check of ``validate_produce_records``; this finds that out
    with one header unpack and one CRC pass, and builds nothing else. None means some check may
    fail: ``validate_produce_records`` then runs them all, in Kafka's order, for the error.
    """
    try:
        fields = _HEADER.unpack_from(records)
    except (struct.error, TypeError):  # shorter than a header, or None
        return None
    base_offset, length, _, magic, crc, attributes, delta, _, _, pid, _, seq, count = fields
    # (literals, not the module's names: this runs for every partition of every Produce)
    # attributes & 0x27 > 4: the control bit (0x20) or a codec above ZSTD (4)
    if (base_offset or magic != 2 or length + 12 != len(records)
            or length + 12 > max_message_bytes or count <= 0 or delta + 1 != count
            or attributes & 0x27 > 4 or (pid >= 0 and seq < 0)):
        return None
    if crc != crc32c.crc32c((records if records.__class__ is memoryview
                             else memoryview(records))[21:]):
        return None
    return fields


def _single_batch(view: memoryview) -> memoryview:
    # Lazily, so that errors come in Kafka's order (ProduceRequest.validateRecords).
    batches = iter_batches(view)
    batch = next(batches, None)
    if batch is None:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            "Produce requests with version 3+ must have at least one record batch per partition",
        )
    if batch[16] != MAGIC_V2:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            "Produce requests with version 3+ are only allowed to contain record batches with "
            "magic version 2",
        )
    if next(batches, None) is not None:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            "Produce requests with version 3+ are only allowed to contain exactly one record "
            "batch per partition",
        )
    return batch


def _validate_batch(header: BatchHeader) -> None:
    """LogValidator.validateBatch for client appends (all INVALID_RECORD)."""
    count = header.record_count
    count_from_offsets = header.last_offset_delta + 1
    if count_from_offsets <= 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Batch has an invalid offset range: [0, {header.last_offset_delta}]",
        )
    if count <= 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid reported count for record batch: {count}")
    if count_from_offsets != count:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Inconsistent batch offset range [0, {header.last_offset_delta}] and count of "
            f"records {count}",
        )
    if header.attributes & CONTROL_MASK:
        raise KafkaError(ErrorCode.INVALID_RECORD, "Clients are not allowed to write control records")
    if header.producer_id > NO_PRODUCER_ID and header.base_sequence < 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Invalid sequence number {header.base_sequence} in record batch with producerId "
            f"{header.producer_id}",
        )


def with_base_offset(
    batch: bytes | bytearray | memoryview, base_offset: int, leader_epoch: int
) -> bytes:
    """A copy of ``batch`` with baseOffset and partitionLeaderEpoch rewritten.

    Both fields sit before the CRC'd range, so the CRC stays valid and this is one copy.
    """
    view = batch if batch.__class__ is memoryview else memoryview(batch)
    return _PREFIX.pack(base_offset, len(view) - LOG_OVERHEAD, leader_epoch) + view[16:]


def with_log_append_time(
    batch: bytes | bytearray | memoryview, base_offset: int, leader_epoch: int, now_ms: int
) -> bytes:
    """A copy stamped as LogAppendTime: sets attribute bit 3 and maxTimestamp = ``now_ms``.

    Kafka does the same in place (DefaultRecordBatch.setMaxTimestamp); consumers then read every
    record's timestamp as maxTimestamp. These fields are under the CRC, so it is recomputed.
    """
    buf = bytearray(batch)
    _PREFIX.pack_into(buf, 0, base_offset, len(buf) - LOG_OVERHEAD, leader_epoch)
    attributes = _INT16.unpack_from(buf, ATTRIBUTES_OFFSET)[0] | TIMESTAMP_TYPE_MASK
    _INT16.pack_into(buf, ATTRIBUTES_OFFSET, attributes)
    _INT64.pack_into(buf, MAX_TIMESTAMP_OFFSET, now_ms)
    _UINT32.pack_into(buf, CRC_OFFSET, crc32c.crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]))
    return bytes(buf)


def with_fresh_crc(batch: bytes | bytearray | memoryview) -> bytes:
    """A copy with the CRC recomputed; for tests that craft headers Kafka would reject."""
    buf = bytearray(batch)
    _UINT32.pack_into(buf, CRC_OFFSET, crc32c.crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]))
    return bytes(buf)


def _signed8(value: int) -> int:
    return value - 256 if value > 127 else value
