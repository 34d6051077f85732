"""Scenarios of one share-partition with explicit now_ms (Kafka 4.2's SharePartition facts)."""

import pytest

from kafka_emu.coordinator.share.partition_state import (AckBatch, AckError, DeliveryConfig,
                                                         LogBatch, RecordState, SharePartition)
from kafka_emu.errors import ErrorCode

A, R, X, G, N = 1, 2, 3, 0, 4  # accept, release, reject, gap, renew


def part(**kw) -> SharePartition:
    return SharePartition(DeliveryConfig(auto_offset_reset="earliest", **kw))


def take(sp, member, batches, *, now=0, max_records=500, limit=None, log_start=0):
    limit = batches[-1].last_offset + 1 if limit is None else limit
    runs, _ = sp.acquire(member, batches, log_start=log_start, log_limit=limit,
                         max_records=max_records, now_ms=now)
    return [tuple(r) for r in runs]


def test_latest_starts_at_the_log_end_and_earliest_at_the_log_start():
    sp = SharePartition()  # share.auto.offset.reset=latest by default
    assert take(sp, "m", [LogBatch(0, 4)], log_start=0, limit=5) == []
    assert (sp.start_offset, sp.end_offset) == (5, 5)
    sp = part()
    assert take(sp, "m", [LogBatch(3, 4)], log_start=3, limit=5) == [(3, 4, 1)]


def test_control_and_aborted_batches_are_archived_never_delivered():
    sp = part()
    runs = take(sp, "m", [LogBatch(0, 1), LogBatch(2, 2, skip=True), LogBatch(3, 3)])
    assert runs == [(0, 1, 1), (3, 3, 1)]
    assert sp.records[2].state is RecordState.ARCHIVED
    sp.acknowledge("m", [AckBatch(0, 1, (A,))], 0)
    assert sp.start_offset == 3  # passed over the archived control record


def test_the_in_flight_limit_stops_new_batches_but_ends_the_one_it_started():
    sp = part(max_record_locks=3)
    batches = [LogBatch(0, 1), LogBatch(2, 4), LogBatch(5, 5)]
    assert take(sp, "a", batches) == [(0, 4, 1)]  # 2-4 started with room 1: taken whole
    assert take(sp, "b", batches) == []  # 5 in flight > 3: nothing new
    sp.acknowledge("a", [AckBatch(0, 4, (A,))], 0)
    assert take(sp, "b", batches) == [(5, 5, 1)]


def test_max_records_takes_in_flight_batches_whole_unless_record_limit():
    sp = part()
    take(sp, "a", [LogBatch(0, 4)])
    sp.acknowledge("a", [AckBatch(0, 4, (R,))], 0)
    # batch-optimised: max records is checked between in-flight batches
    assert take(sp, "b", [LogBatch(0, 4)], max_records=2) == [(0, 4, 2)]
    sp.release_member("b")
    runs, _ = sp.acquire("c", [LogBatch(0, 4)], log_start=0, log_limit=5, max_records=2,
                         now_ms=0, record_limit=True)
    assert [tuple(r) for r in runs] == [(0, 1, 3)]


def test_batch_size_cuts_new_records_into_in_flight_batches_at_log_batches():
    sp = part(delivery_count_limit=5)
    log = [LogBatch(0, 2), LogBatch(3, 5), LogBatch(6, 8)]
    runs, _ = sp.acquire("a", log, log_start=0, log_limit=9, max_records=500, now_ms=0,
                         batch_size=4)
    assert [tuple(r) for r in runs] == [(0, 8, 1)]
    assert [sp.records[o].batch for o in (0, 2, 3, 5, 6, 8)] == [0, 0, 0, 0, 6, 6]


def test_per_offset_types_and_the_validation_errors():
    sp = part()
    take(sp, "a", [LogBatch(0, 3)])
    for batches, code in [([AckBatch(0, 3, (A, A))], ErrorCode.INVALID_REQUEST),
                          ([AckBatch(2, 1, (A,))], ErrorCode.INVALID_REQUEST),
                          ([AckBatch(0, 0, (7,))], ErrorCode.INVALID_REQUEST),
                          ([AckBatch(0, 0, (N,))], ErrorCode.INVALID_REQUEST),
                          ([AckBatch(0, 0, ())], ErrorCode.INVALID_REQUEST),
                          ([AckBatch(0, 4, (A,))], ErrorCode.INVALID_RECORD_STATE),
                          ([AckBatch(0, 0, (A,)), AckBatch(9, 9, (A,))],
                           ErrorCode.INVALID_RECORD_STATE)]:
        with pytest.raises(AckError) as err:
            sp.acknowledge("a", batches, 0)
        assert err.value.code == code, batches
    assert all(r.state is RecordState.ACQUIRED for r in sp.records.values())  # all or nothing
    with pytest.raises(AckError) as err:
        sp.acknowledge("b", [AckBatch(0, 0, (A,))], 0)
    assert err.value.code == ErrorCode.INVALID_RECORD_STATE
    sp.acknowledge("a", [AckBatch(0, 3, (A, R, X, G))], 0)
    states = {o: r.state for o, r in sp.records.items()}
    assert states == {1: RecordState.AVAILABLE, 2: RecordState.ARCHIVED, 3: RecordState.ARCHIVED}
    assert sp.start_offset == 1


def test_locks_expire_at_their_deadline_and_renew_restarts_the_clock():
    sp = part(record_lock_duration_ms=1000)
    take(sp, "a", [LogBatch(0, 0)], now=0)
    take(sp, "b", [LogBatch(0, 0), LogBatch(1, 1)], now=500)
    assert sp.next_deadline() == 1000
    assert sp.expire(999) == []
    sp.acknowledge("a", [AckBatch(0, 0, (N,))], 900, renew_allowed=True)
    assert sp.next_deadline() == 1500  # b's lock; a's renewed one is 1900
    events = sp.expire(1500)
    assert [(e.kind, e.member_id, e.first_offset) for e in events] == [("lock_expired", "b", 1)]
    assert sp.records[0].member_id == "a" and sp.lock_deadline(0) == 1900
    assert sp.expire(1900)[0].first_offset == 0 and sp.next_deadline() is None


def test_a_release_at_the_delivery_limit_archives():
    sp = part(delivery_count_limit=2)
    take(sp, "a", [LogBatch(0, 0)])
    sp.release_member("a")
    take(sp, "a", [LogBatch(0, 0)])
    events = sp.release_member("a")
    assert [e.kind for e in events] == ["archive"]
    assert sp.start_offset == 1 and not sp.records


def test_records_the_log_no_longer_holds_are_archived():
    sp = part()
    take(sp, "a", [LogBatch(0, 4)])
    sp.acknowledge("a", [AckBatch(0, 0, (A,))], 0)
    runs, events = sp.acquire("b", [LogBatch(5, 6)], log_start=3, log_limit=7, max_records=9,
                              now_ms=0)
    assert [tuple(r) for r in runs] == [(5, 6, 1)]
    assert ("archive", 1, 2) in [(e.kind, e.first_offset, e.last_offset) for e in events]
    assert sp.start_offset == 3 and sp.records[3].member_id == "a"


def test_repeated_deliveries_are_throttled_then_isolated():
    sp = part(delivery_count_limit=5)  # throttled from max(2, ceil(5 / 2)) = 3 deliveries on
    log = [LogBatch(0, 7), LogBatch(8, 9)]  # one in-flight batch of 10, acquired together
    for n in (1, 2, 3):
        assert take(sp, "a", log) == [(0, 9, n)]
        sp.release_member("a")
    # delivered 3 times: the batch goes alone in its fetch, half of it (10 >> 1) at a time
    assert take(sp, "a", log) == [(0, 4, 4)]
    assert take(sp, "b", log) == [(5, 9, 4)]
    sp.release_member("a")
    # 0-4 on their last attempt: one record at a time
    assert take(sp, "c", log) == [(0, 0, 5)]
    assert take(sp, "c", log) == [(1, 1, 5)]
    sp.release_member("c")
    assert sp.start_offset == 2  # 0 and 1 released at the limit: archived, passed over


def test_acknowledgements_wholly_before_the_start_offset_are_skipped():
    sp = part()
    take(sp, "a", [LogBatch(0, 3)])
    sp.acknowledge("a", [AckBatch(0, 1, (A,))], 0)
    assert sp.start_offset == 2
    sp.acknowledge("a", [AckBatch(0, 1, (A,)), AckBatch(2, 2, (A,))], 0)  # 0-1: no error
    assert sp.start_offset == 3
