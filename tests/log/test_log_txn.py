"""Transactions in the partition log: transactional batches, markers, LSO, aborted index.

Batches are hand-built (txn_frames.py) and markers are read back with kafka-python's reader,
so neither side of the check is kafka_emu's own record codec.
"""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_emu.errors import ErrorCode
from kafka_emu.log import LATEST_TIMESTAMP, PartitionLog
from kafka_emu.log.partition import NOT_FOUND
from kafka_emu.log.txn_index import AbortedTxn

from log_testing import raises_code
from txn_frames import read_batches, raw_batch


def txn(log: PartitionLog, pid: int, seq: int, n: int = 1, *, epoch: int = 0,
        transactional: bool = True, ts: int = 1_000) -> int:
    values = [b"p%d-%d" % (pid, seq + i) for i in range(n)]
    return log.append(raw_batch(values, pid=pid, epoch=epoch, seq=seq,
                                transactional=transactional, timestamp_ms=ts), 0).base_offset


def test_marker_is_a_control_batch_as_kafka_writes_it():
    log = PartitionLog(leader_epoch=3)
    txn(log, 7, 0, 2, epoch=4)
    offset = log.append_marker(producer_id=7, producer_epoch=5, coordinator_epoch=9, commit=True,
                               now_ms=12_345)
    assert offset == 2 and log.high_watermark == 3
    batches, _ = log.read(2, 10**6)
    (batch,) = read_batches(batches[0])
    assert batch.base_offset == 2 and batch.leader_epoch == 3
    assert batch.is_control_batch and batch.is_transactional
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (7, 5, -1)
    assert batch.validate_crc()
    (record,) = list(batch)
    assert record.commit and record.version == 0 and record.timestamp == 12_345
    assert struct.unpack(">hi", record.value) == (0, 9)  # version 0, coordinator epoch


def test_lso_is_first_offset_of_earliest_open_transaction():
    log = PartitionLog()
    log.append(raw_batch([b"plain"]), 0)  # 0
    txn(log, 1, 0, 2)  # 1-2
    txn(log, 2, 0)  # 3
    txn(log, 1, 2)  # 4
    assert (log.high_watermark, log.last_stable_offset) == (5, 1)
    log.append_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=True,
                      now_ms=0, transaction_version=1)  # 5
    assert log.last_stable_offset == 3
    log.append_marker(producer_id=2, producer_epoch=0, coordinator_epoch=0, commit=False,
                      now_ms=0, transaction_version=1)  # 6
    assert log.last_stable_offset == log.high_watermark == 7
    assert log.txns.aborted == [AbortedTxn(2, 3, 6, 7)]


def test_aborted_entry_records_lso_of_other_open_transaction():
    log = PartitionLog()
    txn(log, 1, 0)  # 0
    txn(log, 2, 0)  # 1
    log.append_marker(producer_id=2, producer_epoch=0, coordinator_epoch=0, commit=False,
                      now_ms=0, transaction_version=1)  # 2
    assert log.txns.aborted == [AbortedTxn(2, 1, 2, 0)]


def test_non_transactional_batch_during_open_transaction_is_invalid_txn_state():
    log = PartitionLog()
    txn(log, 1, 0)
    with raises_code(ErrorCode.INVALID_TXN_STATE):
        txn(log, 1, 1, transactional=False)
    assert log.high_watermark == 1
    txn(log, 1, 1)  # the same sequence, transactional, is fine: nothing was recorded


def test_stale_epoch_transactional_batch_is_invalid_producer_epoch():
    log = PartitionLog()
    txn(log, 1, 0, epoch=3)
    with raises_code(ErrorCode.INVALID_PRODUCER_EPOCH):
        txn(log, 1, 1, epoch=2)


def test_tv2_marker_needs_a_bumped_epoch_and_a_retry_is_accepted():
    log = PartitionLog()
    txn(log, 1, 0, epoch=4)
    with raises_code(ErrorCode.INVALID_PRODUCER_EPOCH):
        log.append_marker(producer_id=1, producer_epoch=4, coordinator_epoch=0, commit=True,
                          now_ms=0)
    log.append_marker(producer_id=1, producer_epoch=5, coordinator_epoch=0, commit=True, now_ms=0)
    # KAFKA-19999: the same marker again (no transaction open) is a retry, written again
    log.append_marker(producer_id=1, producer_epoch=5, coordinator_epoch=0, commit=True, now_ms=0)
    assert log.high_watermark == 3
    # the next transaction runs at the bumped epoch from sequence 0
    txn(log, 1, 0, epoch=5)
    assert log.last_stable_offset == 3


def test_tv1_marker_at_same_epoch_and_stale_epoch_refused():
    log = PartitionLog()
    txn(log, 1, 0, epoch=4)
    with raises_code(ErrorCode.INVALID_PRODUCER_EPOCH):
        log.append_marker(producer_id=1, producer_epoch=3, coordinator_epoch=0, commit=True,
                          now_ms=0, transaction_version=1)
    log.append_marker(producer_id=1, producer_epoch=4, coordinator_epoch=0, commit=True,
                      now_ms=0, transaction_version=1)
    assert log.last_stable_offset == 2


def test_zombie_coordinator_epoch_is_fenced_and_writes_nothing():
    log = PartitionLog()
    txn(log, 1, 0)
    log.append_marker(producer_id=1, producer_epoch=1, coordinator_epoch=5, commit=False, now_ms=0)
    txn(log, 1, 0, epoch=1)
    with raises_code(ErrorCode.TRANSACTION_COORDINATOR_FENCED):
        log.append_marker(producer_id=1, producer_epoch=2, coordinator_epoch=4, commit=True,
                          now_ms=0)
    assert (log.high_watermark, log.last_stable_offset) == (3, 2)


def test_marker_without_open_transaction_is_written_and_changes_nothing():
    log = PartitionLog()
    assert log.append_marker(producer_id=9, producer_epoch=0, coordinator_epoch=0, commit=False,
                             now_ms=0) == 0
    assert log.txns.aborted == [] and log.last_stable_offset == 1


def test_read_committed_stops_at_lso_and_reports_aborted():
    log = PartitionLog()
    txn(log, 1, 0, 3)  # 0-2 aborted
    log.append_marker(producer_id=1, producer_epoch=1, coordinator_epoch=0, commit=False,
                      now_ms=0)  # 3
    log.append(raw_batch([b"x"]), 0)  # 4
    txn(log, 2, 0)  # 5, open
    log.append(raw_batch([b"y"]), 0)  # 6
    batches, _, hwm, aborted = log.read_committed(0, 10**6)
    assert hwm == 7 and log.last_stable_offset == 5
    assert [b.base_offset for blob in batches for b in read_batches(blob)] == [0, 3, 4]
    assert aborted == [AbortedTxn(1, 0, 3, 4)]
    assert log.read_committed(4, 10**6)[3] == []  # the abort ended below the fetch offset
    assert log.read_committed(5, 10**6)[0] == []  # at the LSO: nothing yet
    assert log.read_committed(6, 10**6)[0] == []  # above the LSO but below the HWM: empty
    # read_uncommitted sees everything
    assert len(log.read(0, 10**6)[0]) == 5


def test_list_offsets_latest_by_isolation_level():
    log = PartitionLog()
    log.append(raw_batch([b"a"], timestamp_ms=100), 0)
    txn(log, 1, 0, ts=200)
    assert log.offset_for_timestamp(LATEST_TIMESTAMP).offset == 2
    assert log.offset_for_timestamp(LATEST_TIMESTAMP, read_committed=True).offset == 1
    assert log.offset_for_timestamp(150).offset == 1
    assert log.offset_for_timestamp(150, read_committed=True) == NOT_FOUND


def test_delete_records_past_open_transaction_lifts_lso_to_log_start():
    log = PartitionLog()
    txn(log, 1, 0, 2)
    log.append(raw_batch([b"z"]), 0)
    log.delete_records(1)
    assert log.last_stable_offset == 1


def test_open_transaction_keeps_producer_from_expiring():
    log = PartitionLog()
    txn(log, 1, 0, ts=0)
    txn(log, 2, 0, transactional=False, ts=0)
    assert log.producers.remove_expired(10**12) == 1
    assert log.producers.entry(1) is not None


# ------------------------------------------------------------------ property: against a model

PIDS = (0, 1, 2)
op = st.one_of(
    st.tuples(st.just("data"), st.sampled_from(PIDS), st.integers(1, 3)),
    st.tuples(st.just("plain"), st.integers(1, 3)),
    st.tuples(st.just("commit"), st.sampled_from(PIDS)),
    st.tuples(st.just("abort"), st.sampled_from(PIDS)),
    st.tuples(st.just("delete"), st.integers(0, 3)),  # DeleteRecords, this far below the HWM
)


def _consume_committed(log: PartitionLog, max_bytes: int) -> list[bytes]:
    """What a read_committed consumer keeps, fetching from 0 in steps of ``max_bytes`` and
    filtering as Kafka's consumer does (CompletedFetch: aborted producer ids by first offset,
    dropped at their ABORT marker)."""
    kept: list[bytes] = []
    offset, pending, aborting = log.log_start_offset, [], set()
    while offset < log.last_stable_offset:
        blobs, _, _, aborted = log.read_committed(offset, max_bytes, min_one=True)
        pending = sorted(set(pending) | set(aborted), key=lambda a: a.first_offset)
        for blob in blobs:
            for batch in read_batches(blob):
                while pending and pending[0].first_offset <= batch.last_offset:
                    aborting.add(pending.pop(0).producer_id)
                if batch.is_control_batch:
                    if not next(iter(batch)).commit:
                        aborting.discard(batch.producer_id)
                elif not (batch.is_transactional and batch.producer_id in aborting):
                    kept.extend(r.value for r in batch if r.offset >= offset)
                offset = batch.next_offset
    return kept


@settings(max_examples=300, deadline=None)
@given(st.lists(op, max_size=40), st.integers(80, 400))
def test_lso_and_aborted_index_match_a_model(ops, max_bytes):
    log = PartitionLog()
    seq = dict.fromkeys(PIDS, 0)
    open_first: dict[int, int] = {}  # model: pid -> first offset of its open txn
    open_values: dict[int, list[bytes]] = {}
    aborted: list[tuple[int, int, int]] = []
    visible: list[tuple[int, bytes]] = []  # (offset, value) of committed or plain records
    plain_n = 0
    for o in ops:
        offset = log.high_watermark
        if o[0] == "data":
            _, pid, n = o
            txn(log, pid, seq[pid], n)
            values = [b"p%d-%d" % (pid, seq[pid] + i) for i in range(n)]
            seq[pid] += n
            open_first.setdefault(pid, offset)
            open_values.setdefault(pid, []).extend(
                (offset + i, v) for i, v in enumerate(values))
        elif o[0] == "plain":
            values = [b"plain%d" % (plain_n + i) for i in range(o[1])]
            plain_n += o[1]
            log.append(raw_batch(values), 0)
            visible.extend((offset + i, v) for i, v in enumerate(values))
        elif o[0] == "delete":
            log.delete_records(max(log.log_start_offset, log.high_watermark - o[1]))
        else:
            pid, commit = o[1], o[0] == "commit"
            log.append_marker(producer_id=pid, producer_epoch=0, coordinator_epoch=0,
                              commit=commit, now_ms=0, transaction_version=1)
            if pid in open_first:
                first = open_first.pop(pid)
                values = open_values.pop(pid)
                if commit:
                    visible.extend(values)
                else:
                    aborted.append((pid, first, offset))
        # the first open transaction's start, never below the log start (DeleteRecords)
        lso = min(open_first.values(), default=log.high_watermark)
        assert log.last_stable_offset == min(max(lso, log.log_start_offset), log.high_watermark)
    # the index keeps what a fetch at or above the log start can still reach
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in log.txns.aborted] == \
        [a for a in aborted if a[2] >= log.log_start_offset]
    # every fetch offset: the aborted list is exactly the overlapping aborted transactions
    for start in range(log.log_start_offset, log.last_stable_offset):
        blobs, _, _, got = log.read_committed(start, max_bytes)
        if not blobs:
            assert got == []
            continue
        upper = read_batches(blobs[-1])[-1].next_offset
        want = [a for a in aborted if a[2] >= start and a[1] < upper]
        assert [(a.producer_id, a.first_offset, a.last_offset) for a in got] == want
    lso, log_start = log.last_stable_offset, log.log_start_offset
    assert _consume_committed(log, max_bytes) == [v for off, v in sorted(visible)
                                                   if log_start <= off < lso]
