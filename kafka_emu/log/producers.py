"""Idempotent producers: handing out producer ids, and per-partition sequence state.

Theory of operation
-------------------
An idempotent producer gets a producer id (with epoch 0) from InitProducerId and numbers the
records it sends to each partition 0, 1, 2, ... (wrapping from int32 max to 0). The partition
leader remembers, per producer id, the epoch and the last ``NUM_BATCHES_TO_RETAIN`` batches it
appended (first/last sequence, first/last offset, timestamp), because the producer keeps at most
five requests in flight and may resend any of them. On each append with a producer id:

* an exact (firstSeq, lastSeq) match of a remembered batch in the same epoch is a retry: the
  append is skipped and the ORIGINAL offsets are returned with no error (UnifiedLog.append,
  ``maybeDuplicate``). Kafka also returns the remembered batch timestamp as log_append_time for
  such a retry, whatever the topic's timestamp type; ``BatchMetadata.timestamp`` carries it.
* an older epoch is INVALID_PRODUCER_EPOCH. Since Kafka 2.7 (KIP-588) Produce answers this,
  not PRODUCER_FENCED, so the client can abort and retry (ProducerAppendInfo.checkProducerEpoch).
* a newer epoch must start at sequence 0, else OUT_OF_ORDER_SEQUENCE_NUMBER. Idempotent Java
  producers bump their own epoch this way after an unresolved sequence (KIP-360).
* same epoch: firstSeq must be lastSeq + 1 (mod wrap), else OUT_OF_ORDER_SEQUENCE_NUMBER.
* an unknown producer id is accepted at ANY sequence. Kafka 2.5+ does this (the "no current
  producer epoch" branch of ProducerAppendInfo.checkSequence, KIP-360) because retention or
  DeleteRecords may have removed the producer's earlier batches; UNKNOWN_PRODUCER_ID is no longer
  returned for Produce.

These checks are split in two so that the partition log can validate, append, then record, and
nothing changes if validation fails. State is never dropped when DeleteRecords or retention move
the log start (Kafka keeps it in memory too); ``remove_expired`` mirrors
``producer.id.expiration.ms`` for a broker that wants it.

Transactions (ProducerAppendInfo.appendDataBatch / appendEndTxnMarker): a producer's first
transactional batch opens its transaction in the partition (``txn_first_offset``); while it is
open a non-transactional batch from that producer is INVALID_TXN_STATE (after the epoch and
sequence checks, in Kafka's order). A COMMIT/ABORT marker (``check_marker`` then ``end_txn``)
closes it and sets the producer's epoch and coordinator epoch: a marker from an older
coordinator epoch is TRANSACTION_COORDINATOR_FENCED; its producer epoch must be at least the
current one (transactions v0/v1) or above it (v2, whose EndTxn bumps the epoch first), except
that a v2 marker at the current epoch with no transaction open is a retry of one already
written and is accepted (KAFKA-19999). A producer with an open transaction never expires.

InitProducerId without a transactional id always hands out a fresh producer id with epoch 0, even
when the request carries an existing id/epoch (TransactionCoordinator.handleInitProducerId:
"if the transactional id is null, then always blindly accept the request and return a new
producerId").
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

import attrs

from kafka_emu.errors import ErrorCode, KafkaError
from kafka_emu.log.batch import (
    INT32_MAX,
    NO_PRODUCER_EPOCH,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    BatchHeader,
)

NUM_BATCHES_TO_RETAIN = 5
NO_TXN = -1
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000  # producer.id.expiration.ms


class ProducerIdAndEpoch(NamedTuple):
    producer_id: int
    producer_epoch: int


class BatchMetadata(NamedTuple):
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int  # the batch's maxTimestamp as stored (the append time under LogAppendTime)


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


@attrs.define(eq=False)
class ProducerEntry:
    producer_id: int
    epoch: int = NO_PRODUCER_EPOCH
    batches: deque[BatchMetadata] = attrs.Factory(lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))
    last_timestamp: int = NO_TIMESTAMP
    coordinator_epoch: int = -1
    txn_first_offset: int = NO_TXN  # first offset of the open transaction, if any

    def set_epoch(self, epoch: int) -> None:
        """ProducerStateEntry.maybeUpdateProducerEpoch: a new epoch forgets the batches."""
        if self.epoch != epoch:
            self.batches.clear()
            self.epoch = epoch

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE


@attrs.define(eq=False)
class ProducerStateTable:
    """Sequence state of every producer that wrote to one partition."""

    entries: dict[int, ProducerEntry] = attrs.Factory(dict)

    def __len__(self) -> int:
        return len(self.entries)

    def entry(self, producer_id: int) -> ProducerEntry | None:
        return self.entries.get(producer_id)

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        """The remembered batch this one retries, if any (ProducerStateEntry.findDuplicateBatch)."""
        entry = self.entries.get(header.producer_id)
        if entry is None or entry.epoch != header.producer_epoch:
            return None
        first, last = header.base_sequence, header.last_sequence
        for meta in entry.batches:
            if meta.first_seq == first and meta.last_seq == last:
                return meta
        return None

    def check(self, header: BatchHeader) -> None:
        """Raise if appending ``header``'s batch would break the producer's epoch or sequence."""
        entry = self.entries.get(header.producer_id)
        if entry is None:
            return  # unknown producer: any epoch, any sequence (see module docstring)
        epoch, first_seq = header.producer_epoch, header.base_sequence
        if epoch < entry.epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {header.producer_id} is {epoch}, which is smaller than the "
                f"last seen epoch {entry.epoch}",
            )
        if epoch != entry.epoch:
            if first_seq != 0:
                raise KafkaError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"Invalid sequence number for new epoch of producer {header.producer_id}: "
                    f"{epoch} (request epoch), {first_seq} (seq. number), {entry.epoch} "
                    "(current producer epoch)",
                )
        elif not in_sequence(entry.last_seq, first_seq):
            raise KafkaError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Out of order sequence number for producer {header.producer_id}: {first_seq} "
                f"(incoming seq. number), {entry.last_seq} (current end sequence number)",
            )
        if entry.txn_first_offset != NO_TXN and not header.is_transactional:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"Expected transactional write from producer {header.producer_id}",
            )

    def has_ongoing_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """UnifiedLog.hasOngoingTransaction: an open transaction at exactly this epoch."""
        entry = self.entries.get(producer_id)
        return (entry is not None and entry.txn_first_offset != NO_TXN
                and entry.epoch == producer_epoch)

    def check_marker(self, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                     transaction_version: int) -> None:
        """Raise if a COMMIT/ABORT marker may not be written (appendEndTxnMarker's checks)."""
        entry = self.entries.get(producer_id)
        if entry is None:
            return  # an empty entry: epoch -1, coordinator epoch -1, nothing to break
        current = entry.epoch
        if producer_epoch < current or (transaction_version >= 2 and producer_epoch == current):
            retry = (transaction_version >= 2 and producer_epoch == current
                     and entry.txn_first_offset == NO_TXN)
            if not retry:
                sign = "<=" if transaction_version >= 2 else "<"
                raise KafkaError(
                    ErrorCode.INVALID_PRODUCER_EPOCH,
                    f"Epoch of producer {producer_id} is {producer_epoch}, which is {sign} the "
                    f"last seen epoch {current} (TV{transaction_version})",
                )
        if entry.coordinator_epoch > coordinator_epoch:
            raise KafkaError(
                ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                f"Invalid coordinator epoch for producerId {producer_id}: {coordinator_epoch} "
                f"(zombie), {entry.coordinator_epoch} (current)",
            )

    def end_txn(self, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                timestamp: int) -> int:
        """Record a written marker (ProducerStateEntry.update); return the first offset of the
        transaction it closed, or NO_TXN when none was open."""
        entry = self.entries.get(producer_id)
        if entry is None:
            entry = self.entries[producer_id] = ProducerEntry(producer_id)
        first = entry.txn_first_offset
        entry.set_epoch(producer_epoch)
        entry.coordinator_epoch = coordinator_epoch
        entry.txn_first_offset = NO_TXN
        entry.last_timestamp = timestamp
        return first

    def record(self, header: BatchHeader, first_offset: int, timestamp: int) -> bool:
        """Remember an appended batch (ProducerStateEntry.addBatch); True when it opened a
        transaction (its first transactional batch in this partition)."""
        pid = header.producer_id
        entry = self.entries.get(pid)
        if entry is None:
            entry = self.entries[pid] = ProducerEntry(pid)
        entry.set_epoch(header.producer_epoch)
        entry.batches.append(
            BatchMetadata(
                header.base_sequence,
                header.last_sequence,
                first_offset,
                first_offset + header.last_offset_delta,
                timestamp,
            )
        )
        entry.last_timestamp = timestamp
        if header.is_transactional and entry.txn_first_offset == NO_TXN:
            entry.txn_first_offset = first_offset
            return True
        return False

    def remove_expired(
        self, now_ms: int, expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS
    ) -> int:
        """Forget producers idle for ``expiration_ms``; return how many went.

        Like Kafka, "idle" is measured from the last batch's timestamp, not its arrival, and a
        producer with an open transaction is kept (ProducerStateManager.isProducerExpired).
        """
        expired = [
            pid
            for pid, entry in self.entries.items()
            if now_ms - entry.last_timestamp >= expiration_ms and entry.txn_first_offset == NO_TXN
        ]
        for pid in expired:
            del self.entries[pid]
        return len(expired)


@attrs.define(eq=False)
class ProducerIdAllocator:
    """Broker-wide source of producer ids (a fresh KRaft cluster's first block starts at 0)."""

    next_producer_id: int = 0

    def init_producer_id(
        self, *, producer_id: int = -1, producer_epoch: int = NO_PRODUCER_EPOCH
    ) -> ProducerIdAndEpoch:
        """InitProducerId without a transactional id: always a new id, epoch 0.

        ``producer_id``/``producer_epoch`` (v3+, KIP-360) are accepted and ignored, as Kafka
        ignores them on this path; the producer bumps epochs itself for idempotence.
        """
        del producer_id, producer_epoch
        pid = self.next_producer_id
        self.next_producer_id += 1
        return ProducerIdAndEpoch(pid, 0)
