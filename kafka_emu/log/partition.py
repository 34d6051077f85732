"""One partition's log: stored batches, offsets, timestamps, retention and producer state.

Theory of operation
-------------------
The log is an append-only list of batches, each one ``bytes`` object exactly as a consumer will
receive it (base offset and leader epoch already written in). Beside it run three 8-byte
array columns, one slot per batch and no Python int objects (``_bases`` and ``_ends`` never hold
a negative number, so they are unsigned, ``array('Q')``: CPython 3.11 stores into a signed
``'q'`` array through PyArg_Parse, about 320 instructions more per append, and every Produce
appends to each column once per partition; ``_pmax``, a timestamp, may be -1 and stays ``'q'``):

* ``_bases``  base offset of each batch: Fetch and ListOffsets bisect it.
* ``_ends``   running byte position just past each batch (as if the log were one file): Fetch
              bisects it to find how many whole batches fit in ``max_bytes``.
* ``_pmax``   running maximum of maxTimestamp: non-decreasing, so the first batch holding a
              timestamp >= T is found by bisection, like Kafka's time index.

So an append is a header check, a CRC pass, one copy and four list/array appends; a read is two
bisections and a list slice. Offsets are dense (no compaction), so batch i covers
``[_bases[i], _bases[i+1])`` and the last one ends at the high watermark.

Dropping old batches (retention, DeleteRecords) moves ``_head`` forward instead of shifting
the lists; the dead prefix is cut off once it is at least half of the storage, which keeps both
operations amortised O(1). Dropped batches may have raised ``_pmax``; the column is then marked
stale and rebuilt from the live batches by the next timestamp lookup (those are rare).

Offsets: ``log_start_offset`` <= every live offset < ``high_watermark``. DeleteRecords may move
the log start into the middle of a batch; the batch stays (Kafka deletes whole segments only) and
Fetch returns it whole: clients skip records below their fetch offset. With one replica the high
watermark is the log end offset.

Transactions: transactional batches open a transaction per producer, ``append_marker`` writes
the COMMIT/ABORT control batch that closes it (what Kafka's WriteTxnMarkers appends), and
``txns`` (txn_index.py) gives the last stable offset (the first offset of the earliest open
transaction, never below the log start, else the HWM) and the aborted transactions a
read_committed Fetch reports (``read_committed``, which stops at the LSO).

Where this differs from Kafka, on purpose:

* Fetch returns whole batches only; Kafka may end a response with a partial batch, which clients
  discard anyway.
* Timestamp lookups are exact for uncompressed batches (a walk of one batch's record headers) and
  batch-granular for compressed ones (we never decompress): the batch base offset for "first
  offset with timestamp >= T", base + lastOffsetDelta for the max-timestamp query.
* A compacted topic (cleanup.policy with ``compact``) refuses records without a key as Kafka
  does (INVALID_RECORD, one record error each), but only in uncompressed batches: compressed
  ones are not opened. Nothing is ever compacted away.
* Retention (``delete_old_batches``, run by the broker every log.retention.check.interval.ms)
  treats each stored batch as a segment: Kafka deletes whole segments, oldest first, and its
  segments are usually far larger than a batch, so here old records go in finer steps.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left, bisect_right
from typing import NamedTuple

import attrs

from kafka_emu.errors import ErrorCode, KafkaError
from kafka_emu.log.batch import (
    COMPRESSION_MASK,
    LOG_OVERHEAD,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    TimestampType,
    max_timestamp,
    parse_header,
    usual_produce_batch,
    validate_produce_records,
    with_log_append_time,
)
from kafka_emu.log.config import LogConfig
from kafka_emu.log.crc import crc32c
from kafka_emu.log.producers import NO_TXN, ProducerStateTable
from kafka_emu.log.records import (KeylessRecords, Record, build_batch, keyless_records,
                                   record_timestamps_or_none)
from kafka_emu.log.txn_index import AbortedTxn, TxnIndex
from kafka_emu.owned_bytes import OwnedBytes

# ListOffsets special timestamps (ListOffsetsRequest).
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5

HIGH_WATERMARK = -1  # DeleteRecords: "delete everything below the high watermark"

UNKNOWN_OFFSET = -1
UNDEFINED_EPOCH = -1

# Control records (ControlRecordType, EndTransactionMarker): key = version 0 + type,
# value = version 0 + coordinator epoch.
ABORT_MARKER, COMMIT_MARKER = 0, 1
_CONTROL_KEY = struct.Struct(">hh")
_MARKER_VALUE = struct.Struct(">hi")

_PREFIX = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch (batch.py's)
# batch.py's header in a frame, without the fields append_plain does not read (leader epoch,
# first timestamp, producer epoch, base sequence)
_PLAIN_HEADER_AT = struct.Struct(">qi4xbIhi8xqq6xi").unpack_from
_LOG_APPEND_TIME = TimestampType.LOG_APPEND_TIME
_COMPACT_MIN = 64  # do not bother cutting a dead prefix shorter than this
_new_tuple = tuple.__new__


class TimestampAndOffset(NamedTuple):
    """A ListOffsets answer; (-1, -1, -1) means "no such offset"."""

    timestamp: int
    offset: int
    leader_epoch: int


NOT_FOUND = TimestampAndOffset(NO_TIMESTAMP, UNKNOWN_OFFSET, UNDEFINED_EPOCH)


class AppendResult(NamedTuple):
    """What Produce answers for one partition (a NamedTuple: one is built per partition of
    every Produce)."""

    base_offset: int
    last_offset: int
    log_append_time_ms: int  # -1 unless LogAppendTime, or a retried batch (see producers.py)
    log_start_offset: int
    duplicate: bool = False


@attrs.define(eq=False)
class PartitionLog:
    config: LogConfig = attrs.field(factory=LogConfig)
    leader_epoch: int = 0
    producers: ProducerStateTable = attrs.field(factory=ProducerStateTable)
    txns: TxnIndex = attrs.field(factory=TxnIndex)

    _batches: list[bytes] = attrs.field(init=False, factory=list)
    _bases: array = attrs.field(init=False, factory=lambda: array("Q"))
    _ends: array = attrs.field(init=False, factory=lambda: array("Q"))
    _pmax: array = attrs.field(init=False, factory=lambda: array("q"))
    _head: int = attrs.field(init=False, default=0)  # first live batch
    _pmax_stale: bool = attrs.field(init=False, default=False)
    # The log start and the high watermark are plain slots, set only here (read-only to
    # others): Fetch reads both for every partition it answers, and a property is a Python call.
    # With one replica the high watermark is also the log end offset.
    log_start_offset: int = attrs.field(init=False, default=0)
    high_watermark: int = attrs.field(init=False, default=0)
    _position: int = attrs.field(init=False, default=0)  # bytes ever appended
    _size: int = attrs.field(init=False, default=0)  # bytes held by live batches
    # (leader epoch, start offset) once the leadership has moved (become_leader); empty: one
    # epoch, leader_epoch, since the log began
    _epochs: list = attrs.field(init=False, factory=list)

    # --- offsets -----------------------------------------------------------------------------

    @property
    def log_end_offset(self) -> int:
        return self.high_watermark

    @property
    def last_stable_offset(self) -> int:
        first = self.txns.first_unstable_offset()
        if first is None:
            return self.high_watermark
        # UnifiedLog.maybeIncrementFirstUnstableOffset: never below the log start
        return min(max(first, self.log_start_offset), self.high_watermark)

    @property
    def size_bytes(self) -> int:
        return self._size

    @property
    def batch_count(self) -> int:
        return len(self._batches) - self._head

    # --- Produce -----------------------------------------------------------------------------

    def append(self, records: bytes | bytearray | memoryview | None, now_ms: int) -> AppendResult:
        """Validate and append one Produce ``records`` blob; raises KafkaError, appends nothing then.

        ``now_ms`` is the log append time (stamped only under LogAppendTime).
        """
        config = self.config
        header = usual_produce_batch(records, config.max_message_bytes)
        if header is None:  # something is wrong: find what, and say it as Kafka does
            header, records = validate_produce_records(
                records, max_message_bytes=config.max_message_bytes)
        # The header by index (the fast path's is a plain tuple in BatchHeader's order; a
        # NamedTuple's names are descriptors the interpreter does not specialise, and this runs
        # for every partition of every Produce): 5 attributes, 6 lastOffsetDelta, 8 maxTimestamp, 9 producerId.
        attributes = header[5]
        log_append = config.timestamp_type == _LOG_APPEND_TIME
        if log_append and attributes & TIMESTAMP_TYPE_MASK:
            # LogValidator.validateTimestamp: only the broker may set LogAppendTime.
            raise KafkaError(
                ErrorCode.INVALID_TIMESTAMP,
                "Invalid timestamp type in message. Producer should not set timestamp type to "
                "LogAppendTime.",
            )
        # (LogConfig.compacts, without the property's call)
        if "compact" in config.cleanup_policy and not attributes & COMPRESSION_MASK:
            keyless = keyless_records(records)  # only here do we read past the batch header
            if keyless:
                raise KeylessRecords(keyless)
        has_pid = header[9] >= 0
        if has_pid:
            # (the fast path gave the plain tuple; the producer state reads the fields' names)
            header = _new_tuple(BatchHeader, header)
            duplicate = self.producers.find_duplicate(header)
            if duplicate is not None:
                return AppendResult(duplicate.first_offset, duplicate.last_offset,
                                    duplicate.timestamp, self.log_start_offset, True)
            self.producers.check(header)

        base = self.high_watermark
        if log_append:
            stored = with_log_append_time(records, base, self.leader_epoch, now_ms)
            max_ts = append_time = now_ms
        else:
            # with_base_offset, written out: the new prefix, then the batch from its magic on
            # (both rewritten fields are outside the CRC); in place where the records are a
            # large frame's own buffer (OwnedBytes: kept, not copied)
            if records.__class__ is memoryview and records.obj.__class__ is OwnedBytes:
                _PREFIX.pack_into(records, 0, base, len(records) - LOG_OVERHEAD,
                                  self.leader_epoch)
                stored = records
            else:
                stored = _PREFIX.pack(base, len(records) - LOG_OVERHEAD, self.leader_epoch) + (
                    records if records.__class__ is memoryview else memoryview(records))[16:]
            max_ts, append_time = header[8], NO_TIMESTAMP
        # _store, written out (the marker path calls it)
        size = len(stored)
        position = self._position = self._position + size
        self._size += size
        self._batches.append(stored)
        self._bases.append(base)
        self._ends.append(position)
        pmax = self._pmax
        pmax.append(max_ts if not pmax or max_ts > pmax[-1] else pmax[-1])
        hwm = self.high_watermark = base + header[6] + 1
        if has_pid and self.producers.record(header, base, max_ts):
            self.txns.begin(header[9], base)
        # AppendResult(...) without NamedTuple's keyword-capable __new__
        return _new_tuple(AppendResult, (base, hwm - 1, append_time, self.log_start_offset, False))

    def append_plain(self, view: memoryview, start: int, end: int) -> int:
        """``append`` of the records at ``view[start:end]`` (a Produce frame's) when they are a
        plain batch -- ``usual_produce_batch``'s usual payload without a producer id -- and the
        topic is neither LogAppendTime nor compacted: then nothing can fail and the answer is
        the base offset (no log append time, the log start offset as it is). Returns -1, having
        done nothing, for anything else: ``append`` then does it all. (The Produce fast path,
        broker/handlers/produce_fast.py: one call per partition, no view of the records, no
        header tuple kept, no AppendResult.)"""
        config = self.config
        try:
            base_offset, length, magic, crc, attributes, delta, max_ts, pid, count = \
                _PLAIN_HEADER_AT(view, start)
        except struct.error:  # shorter than a header
            return -1
        # attributes & 0x27 > 4: the control bit (0x20) or a codec above ZSTD (4)
        if (base_offset or magic != 2 or pid >= 0 or length + 12 != end - start
                or length + 12 > config.max_message_bytes or count <= 0
                or delta + 1 != count or attributes & 0x27 > 4 or config.timestamp_type
                or "compact" in config.cleanup_policy
                or crc != crc32c.crc32c(view[start + 21:end])):
            return -1
        base = self.high_watermark
        if view.obj.__class__ is OwnedBytes:  # the frame's own buffer: kept, not copied
            _PREFIX.pack_into(view, start, base, length, self.leader_epoch)
            stored = view[start:end]
        else:
            stored = _PREFIX.pack(base, length, self.leader_epoch) + view[start + 16:end]
        size = len(stored)
        position = self._position = self._position + size
        self._size += size
        self._batches.append(stored)
        self._bases.append(base)
        self._ends.append(position)
        pmax = self._pmax
        pmax.append(max_ts if not pmax or max_ts > pmax[-1] else pmax[-1])
        self.high_watermark = base + count
        return base

    def append_marker(self, *, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                      commit: bool, now_ms: int, transaction_version: int = 2) -> int:
        """Append a COMMIT or ABORT control batch for ``producer_id``; return its offset.

        Kafka's WriteTxnMarkers append (MemoryRecords.withEndTransactionMarker, origin
        COORDINATOR): one control record stamped ``now_ms``, no sequence. It closes the
        producer's open transaction here, if any (a marker with none open is still written, as
        in Kafka). INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED as
        ``ProducerStateTable.check_marker``; nothing is written then.
        """
        self.producers.check_marker(producer_id, producer_epoch, coordinator_epoch,
                                    transaction_version)
        marker = Record(key=_CONTROL_KEY.pack(0, COMMIT_MARKER if commit else ABORT_MARKER),
                        value=_MARKER_VALUE.pack(0, coordinator_epoch), timestamp_ms=now_ms)
        batch = build_batch((marker,), base_offset=self.high_watermark,
                            partition_leader_epoch=self.leader_epoch, producer_id=producer_id,
                            producer_epoch=producer_epoch, transactional=True, control=True,
                            timestamp_type=self.config.timestamp_type)
        offset = self.high_watermark
        self._store(batch, offset, now_ms)
        self.high_watermark = offset + 1
        first = self.producers.end_txn(producer_id, producer_epoch, coordinator_epoch, now_ms)
        if first != NO_TXN:
            self.txns.end(producer_id, offset, aborted=not commit)
        return offset

    def has_ongoing_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether ``producer_id`` has a transaction open here at exactly this epoch (the
        Produce path skips KIP-890 verification then, as UnifiedLog.hasOngoingTransaction)."""
        return self.producers.has_ongoing_transaction(producer_id, producer_epoch)

    def _store(self, stored: bytes, base: int, max_ts: int) -> None:
        size = len(stored)
        position = self._position = self._position + size
        self._size += size
        self._batches.append(stored)
        self._bases.append(base)
        self._ends.append(position)
        pmax = self._pmax
        pmax.append(max_ts if not pmax or max_ts > pmax[-1] else pmax[-1])

    # --- Fetch -------------------------------------------------------------------------------

    def read(
        self, fetch_offset: int, max_bytes: int, *, min_one: bool = True
    ) -> tuple[list[bytes], int]:
        """Whole batches from the one holding ``fetch_offset``, up to ``max_bytes``; and the HWM.

        With ``min_one`` (Kafka's minOneMessage: the first partition of a response) the first
        batch comes back even when it alone exceeds ``max_bytes``. Fetching at the high
        watermark returns nothing; below the log start or above the HWM is OFFSET_OUT_OF_RANGE.
        """
        batches, _, hwm = self.read_sized(fetch_offset, max_bytes, min_one=min_one)
        return batches, hwm

    def read_committed(
        self, fetch_offset: int, max_bytes: int, *, min_one: bool = True
    ) -> tuple[list[bytes], int, int, list[AbortedTxn]]:
        """``read_sized`` for isolation level read_committed: only batches below the last
        stable offset, and the aborted transactions overlapping what is returned (UnifiedLog.read
        with maxOffset = LSO, then addAbortedTransactions: entries ending at or after the fetch
        offset and starting below the offset that follows the last batch returned)."""
        lso = self.last_stable_offset
        batches, size, hwm = self.read_sized(fetch_offset, max_bytes, min_one=min_one,
                                             max_offset=lso)
        if not batches:
            return batches, size, hwm, []
        stop = bisect_right(self._bases, fetch_offset, self._head) - 1 + len(batches)
        upper = self._bases[stop] if stop < len(self._bases) else hwm
        return batches, size, hwm, self.txns.collect(fetch_offset, upper)

    def read_sized(
        self, fetch_offset: int, max_bytes: int, *, min_one: bool = True,
        max_offset: int | None = None,
    ) -> tuple[list[bytes], int, int]:
        """``read``, with the batches' total size in the middle (from the position column, so
        Fetch never sums batch lengths). With ``max_offset`` (the LSO) only batches wholly below
        it."""
        hwm = self.high_watermark
        if fetch_offset < self.log_start_offset or fetch_offset > hwm:
            raise KafkaError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"Received request for offset {fetch_offset}, but we only have log segments in "
                f"the range {self.log_start_offset} to {hwm}.",
            )
        if fetch_offset == hwm:
            return [], 0, hwm
        first = bisect_right(self._bases, fetch_offset, self._head) - 1
        ends = self._ends
        start_pos = ends[first] - len(self._batches[first])
        if max_offset is not None and max_offset < hwm:
            # whole batches below it (the LSO is a batch boundary, or the log start)
            limit = bisect_right(self._bases, max_offset, first) - 1
            if limit <= first or fetch_offset >= max_offset:
                return [], 0, hwm
            stop = bisect_right(ends, start_pos + max_bytes, first, limit)
        else:
            stop = bisect_right(ends, start_pos + max_bytes, first)
        if stop == first:
            if not min_one:
                return [], 0, hwm
            stop = first + 1
        return self._batches[first:stop], ends[stop - 1] - start_pos, hwm

    # --- ListOffsets -------------------------------------------------------------------------

    def offset_for_timestamp(self, timestamp: int, *,
                             read_committed: bool = False) -> TimestampAndOffset:
        """ListOffsets for one partition (UnifiedLog.fetchOffsetByTimestamp).

        -2 earliest and -4 earliest-local: the log start. -1 latest: the high watermark, or
        the last stable offset under ``read_committed`` (isolation level 1).
        -3 max timestamp: the first record carrying the largest timestamp. -5 latest-tiered:
        (-1, -1), no tiered storage. Otherwise the first record with timestamp >= ``timestamp``
        at or above the log start, or ``NOT_FOUND``. As Partition.fetchOffsetForTimestamp, under
        read_committed an answer at or above the LSO is ``NOT_FOUND``.
        """
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            return TimestampAndOffset(NO_TIMESTAMP, self.log_start_offset, self.leader_epoch)
        if timestamp == LATEST_TIMESTAMP:
            end = self.last_stable_offset if read_committed else self.high_watermark
            return TimestampAndOffset(NO_TIMESTAMP, end, self.leader_epoch)
        found = self._offset_for_timestamp(timestamp)
        if read_committed and found.offset >= self.last_stable_offset:
            return NOT_FOUND
        return found

    def _offset_for_timestamp(self, timestamp: int) -> TimestampAndOffset:
        if timestamp == LATEST_TIERED_TIMESTAMP:
            return TimestampAndOffset(NO_TIMESTAMP, UNKNOWN_OFFSET, UNDEFINED_EPOCH)
        if self.batch_count == 0:
            return NOT_FOUND
        if self._pmax_stale:
            self._rebuild_pmax()
        if timestamp == MAX_TIMESTAMP:
            return self._max_timestamp()
        return self._search_timestamp(timestamp)

    def _search_timestamp(self, target: int) -> TimestampAndOffset:
        # Every batch before the bisection point has maxTimestamp < target; scan on from there
        # only while records below the log start hide the match.
        batches, log_start = self._batches, self.log_start_offset
        for i in range(bisect_left(self._pmax, target, self._head), len(batches)):
            batch = batches[i]
            if max_timestamp(batch) < target:
                continue
            header = parse_header(batch)
            stamps = record_timestamps_or_none(batch, header)
            if stamps is None:  # compressed: batch granularity
                if header.last_offset >= log_start:
                    return TimestampAndOffset(
                        header.max_timestamp,
                        max(header.base_offset, log_start),
                        header.partition_leader_epoch,
                    )
                continue
            for offset, ts in stamps:
                if ts >= target and offset >= log_start:
                    return TimestampAndOffset(ts, offset, header.partition_leader_epoch)
        return NOT_FOUND

    def _max_timestamp(self) -> TimestampAndOffset:
        # The first batch whose own maxTimestamp is the largest is where the running max first
        # reaches it (Kafka picks the first such batch too).
        pmax = self._pmax
        largest = pmax[-1]
        batch = self._batches[bisect_left(pmax, largest, self._head)]
        header = parse_header(batch)
        stamps = record_timestamps_or_none(batch, header) or ()
        offset = next((o for o, ts in stamps if ts == largest), header.last_offset)
        return TimestampAndOffset(largest, offset, header.partition_leader_epoch)

    def _rebuild_pmax(self) -> None:
        pmax = self._pmax
        running = -(2**63)
        for i in range(self._head, len(self._batches)):
            ts = max_timestamp(self._batches[i])
            if ts > running:
                running = ts
            pmax[i] = running
        self._pmax_stale = False

    # --- OffsetForLeaderEpoch ----------------------------------------------------------------

    def become_leader(self, epoch: int) -> None:
        """A new leader epoch starts at the log end (Partition.makeLeader assigns it in the
        epoch cache); batches appended from now on carry it."""
        if not self._epochs:
            self._epochs = [(self.leader_epoch, 0)]
        self._epochs.append((epoch, self.high_watermark))
        self.leader_epoch = epoch

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) as LeaderEpochFileCache.endOffsetFor: the latest epoch ends at
        the log end; an older one where the next higher epoch began (reported as the largest
        known epoch at or below it, or as asked if it predates them all); an epoch above the
        latest, or a negative one, is unknown. Start offsets below the log start read as it.
        """
        if epoch == self.leader_epoch:
            return epoch, self.high_watermark
        if epoch < 0:
            return UNDEFINED_EPOCH, UNKNOWN_OFFSET
        entries = self._epochs or [(self.leader_epoch, 0)]
        higher = next((e for e in entries if e[0] > epoch), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNKNOWN_OFFSET
        floor = [e for e in entries if e[0] <= epoch]
        return (floor[-1][0] if floor else epoch), max(higher[1], self.log_start_offset)

    # --- DeleteRecords and retention ---------------------------------------------------------

    def delete_records(self, before_offset: int) -> int:
        """Move the log start up to ``before_offset`` (-1: the HWM); return the new low watermark.

        Whole batches wholly below it are dropped. Offsets above the HWM or negative are
        OFFSET_OUT_OF_RANGE; a compact-only topic is POLICY_VIOLATION (Partition.deleteRecordsOnLeader).
        """
        offset = self.high_watermark if before_offset == HIGH_WATERMARK else before_offset
        if offset < 0:
            raise KafkaError(
                ErrorCode.OFFSET_OUT_OF_RANGE, f"The offset {offset} should not be negative"
            )
        if not self.config.deletes:
            raise KafkaError(
                ErrorCode.POLICY_VIOLATION,
                "Records of this partition can not be deleted due to the configured policy",
            )
        if offset > self.high_watermark:
            raise KafkaError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"Cannot increment the log start offset to {offset} since it is larger than the "
                f"high watermark {self.high_watermark}",
            )
        if offset > self.log_start_offset:
            self.log_start_offset = offset
            self.txns.drop_below(offset)
            if offset == self.high_watermark:
                keep_from = len(self._batches)
            else:
                keep_from = bisect_right(self._bases, offset, self._head) - 1
            self._drop_to(keep_from)
        return self.log_start_offset

    def delete_old_batches(self, now_ms: int) -> int:
        """Kafka's retention check for this log (UnifiedLog.deleteOldSegments) with each batch
        as a segment; returns how many batches went.

        Only with ``cleanup.policy`` including delete. First by time: oldest batches whose
        newest record is more than ``retention.ms`` older than ``now_ms`` (stopping at the first
        younger one); then by size: oldest batches while what remains still holds at least
        ``retention.bytes``. As in Kafka, the newest ("active") batch goes too when it breaches
        (Kafka rolls an empty active segment first), so an expired log ends empty with its log
        start at the log end. The log start offset moves to the first batch kept.
        """
        config = self.config
        if not config.deletes:
            return 0
        head, keep_from = self._head, self._head
        end = len(self._batches)
        if config.retention_ms >= 0:
            batches, limit = self._batches, config.retention_ms
            while keep_from < end and now_ms - max_timestamp(batches[keep_from]) > limit:
                keep_from += 1
        if config.retention_bytes >= 0 and keep_from < end:
            ends, base = self._ends, self._ends[keep_from] - len(self._batches[keep_from])
            excess = self._position - base - config.retention_bytes
            # drop batch i while the bytes after it still reach retention.bytes
            while keep_from < end and excess >= ends[keep_from] - base:
                keep_from += 1
            # (a bisection would do; the loop stops after the batches it deletes)
        if keep_from == head:
            return 0
        self.log_start_offset = max(self.log_start_offset,
                              self._bases[keep_from] if keep_from < end else self.high_watermark)
        self.txns.drop_below(self.log_start_offset)
        self._drop_to(keep_from)
        return keep_from - head

    def _drop_to(self, keep_from: int) -> None:
        """Forget live batches before index ``keep_from``."""
        head = self._head
        if keep_from <= head:
            return
        dropped_end = self._ends[keep_from - 1]
        first_end = self._ends[head] - len(self._batches[head])
        self._size -= dropped_end - first_end
        for i in range(head, keep_from):
            self._batches[i] = b""  # release the memory now, not at the next compaction
        self._head = keep_from
        self._pmax_stale = True
        if keep_from >= _COMPACT_MIN and keep_from * 2 >= len(self._batches):
            del self._batches[:keep_from]
            del self._bases[:keep_from]
            del self._ends[:keep_from]
            del self._pmax[:keep_from]
            self._head = 0

