"""The transaction coordinator's requests with explicit now_ms, against Kafka 4.2's choices."""

from __future__ import annotations

import pytest

from kafka_emu.errors import ErrorCode as E
from kafka_emu.transactions import TransactionConfig, TransactionCoordinator, TxnState as S
from kafka_emu.transactions.metadata import (VALID_PREVIOUS, IllegalTransition,
                                             TransactionMetadata)

TP = ("t", 0)


def started(tid="tx", timeout_ms=60_000, **config):
    c = TransactionCoordinator(TransactionConfig(**config))
    r = c.init_producer_id(tid, timeout_ms, None, 0)
    assert r.error is E.NONE and r.producer_epoch == 0
    return c, r.producer_id


def test_new_id_gets_a_fresh_producer_id_then_each_init_bumps_the_epoch():
    c, pid = started()
    again = c.init_producer_id("tx", 60_000, None, 1)
    assert (again.producer_id, again.producer_epoch) == (pid, 1)
    other = c.init_producer_id("other", 60_000, None, 1)
    assert other.producer_id != pid


def test_producer_ids_come_from_the_shared_allocator():
    from kafka_emu.log.producers import ProducerIdAllocator
    ids = ProducerIdAllocator()
    ids.init_producer_id()  # an idempotent producer took 0
    c = TransactionCoordinator(allocate_producer_id=lambda: ids.init_producer_id().producer_id)
    assert c.init_producer_id("tx", 1000, None, 0).producer_id == 1
    assert ids.init_producer_id().producer_id == 2


@pytest.mark.parametrize("timeout", [0, -1, 900_001])
def test_timeout_out_of_range_is_invalid_transaction_timeout(timeout):
    c = TransactionCoordinator()
    assert c.init_producer_id("tx", timeout, None, 0).error is E.INVALID_TRANSACTION_TIMEOUT
    assert c.init_producer_id("tx", 900_000, None, 0).error is E.NONE


def test_empty_transactional_id_is_invalid_request():
    c = TransactionCoordinator()
    assert c.init_producer_id("", 1000, None, 0).error is E.INVALID_REQUEST
    assert c.add_partitions("", 0, 0, [TP], 0) is E.INVALID_REQUEST
    assert c.end_txn("", 0, 0, True, 0).error is E.INVALID_REQUEST


def test_commit_walks_ongoing_prepare_complete():
    c, pid = started()
    assert c.add_partitions("tx", pid, 0, [TP], 10) is E.NONE
    md = c.get("tx")
    assert md.state is S.ONGOING and md.start_ms == 10
    end = c.end_txn("tx", pid, 0, True, 20)
    assert end.error is E.NONE and md.state is S.PREPARE_COMMIT
    assert end.markers.partitions == (TP,) and end.markers.committed
    assert end.markers.producer_epoch == 0  # v1: markers at the producer's epoch
    # while markers are in flight
    assert c.add_partitions("tx", pid, 0, [("u", 1)], 21) is E.CONCURRENT_TRANSACTIONS
    assert c.end_txn("tx", pid, 0, True, 21).error is E.CONCURRENT_TRANSACTIONS
    assert c.end_txn("tx", pid, 0, False, 21).error is E.INVALID_TXN_STATE
    assert c.init_producer_id("tx", 1000, None, 21).error is E.CONCURRENT_TRANSACTIONS
    assert c.markers_written("tx", 22) is S.COMPLETE_COMMIT
    assert md.partitions == set()
    # a retried commit is fine, an abort is not
    assert c.end_txn("tx", pid, 0, True, 23).error is E.NONE
    assert c.end_txn("tx", pid, 0, False, 23).error is E.INVALID_TXN_STATE


def test_end_without_a_transaction_is_invalid_txn_state():
    c, pid = started()
    assert c.end_txn("tx", pid, 0, True, 1).error is E.INVALID_TXN_STATE
    assert c.end_txn("tx", pid, 0, False, 1).error is E.INVALID_TXN_STATE


def test_add_partitions_checks_id_mapping_then_epoch():
    c, pid = started()
    assert c.add_partitions("nope", pid, 0, [TP], 1) is E.INVALID_PRODUCER_ID_MAPPING
    assert c.add_partitions("tx", pid + 7, 0, [TP], 1) is E.INVALID_PRODUCER_ID_MAPPING
    assert c.add_partitions("tx", pid, 3, [TP], 1) is E.PRODUCER_FENCED
    assert c.end_txn("tx", pid, 3, True, 1).error is E.PRODUCER_FENCED
    assert c.end_txn("nope", pid, 0, True, 1).error is E.INVALID_PRODUCER_ID_MAPPING


def test_add_offsets_records_the_group_and_its_partition():
    c = TransactionCoordinator(group_partition=lambda g: ("__consumer_offsets", len(g) + 6))
    pid = c.init_producer_id("tx", 1000, None, 0).producer_id
    assert c.verify_group("tx", pid, 0, "g") is E.TRANSACTION_ABORTABLE
    assert c.add_partitions("tx", pid, 0, [], 1, group_id="g") is E.NONE
    assert c.verify_group("tx", pid, 0, "g") is E.NONE
    assert c.verify_group("tx", pid, 1, "g") is E.PRODUCER_FENCED
    end = c.end_txn("tx", pid, 0, False, 2)
    assert end.markers.groups == ("g",)
    assert end.markers.partitions == (("__consumer_offsets", 7),)


# The ends the coordinator starts itself follow the cluster's transaction.version: the fence
# bumps the epoch (PrepareEpochFence), and at TV_2 prepareAbortOrCommit bumps it once more.
FENCED_ABORT_EPOCH = {0: 1, 1: 1, 2: 2}  # the markers' epoch after fencing epoch 0


@pytest.mark.parametrize("level", [0, 1, 2])
def test_second_producer_fences_an_ongoing_transaction(level):
    c, pid = started(transaction_version=level)
    c.add_partitions("tx", pid, 0, [TP], 1)
    r = c.init_producer_id("tx", 60_000, None, 2)
    assert r.error is E.CONCURRENT_TRANSACTIONS
    epoch = FENCED_ABORT_EPOCH[level]
    assert r.markers is not None and not r.markers.committed and r.markers.producer_epoch == epoch
    assert r.markers.transaction_version == max(1, level)
    md = c.get("tx")
    assert md.state is S.PREPARE_ABORT and md.producer_epoch == epoch
    # TV_2 remembers the fenced epoch as the last one (prepareAbortOrCommit), TV_0/1 forget it
    assert md.last_producer_epoch == (1 if level == 2 else -1)
    assert c.init_producer_id("tx", 60_000, None, 3).error is E.CONCURRENT_TRANSACTIONS
    c.markers_written("tx", 4)
    assert md.state is S.COMPLETE_ABORT and md.producer_id == pid
    # the old producer is fenced
    assert c.add_partitions("tx", pid, 0, [TP], 5) is E.PRODUCER_FENCED
    assert c.end_txn("tx", pid, 0, True, 5).error is E.PRODUCER_FENCED
    retry = c.init_producer_id("tx", 60_000, None, 5)
    assert (retry.error, retry.producer_id, retry.producer_epoch) == (E.NONE, pid, epoch + 1)


def test_default_transaction_version_is_kafka_4s_newly_formatted_level():
    assert TransactionConfig().transaction_version == 2


@pytest.mark.parametrize("level", [1, 2])
def test_a_v1_client_fenced_on_a_tv2_cluster_resumes_with_init_producer_id(level):
    # the client's own end (EndTxn v4) stays v1 whatever the level; only the fence's abort
    # follows the cluster, and the next InitProducerId bumps from wherever the abort left it
    c, pid = started(transaction_version=level)
    c.add_partitions("tx", pid, 0, [TP], 1)
    assert c.end_txn("tx", pid, 0, True, 2).markers.producer_epoch == 0  # v1: no bump
    c.markers_written("tx", 3)
    c.add_partitions("tx", pid, 0, [TP], 4)
    markers = c.abort("tx", 5)
    assert markers.producer_epoch == FENCED_ABORT_EPOCH[level]
    c.markers_written("tx", 6)
    r = c.init_producer_id("tx", 60_000, (pid, 0), 7)  # KIP-360: a fenced epoch is stale
    assert r.error is E.PRODUCER_FENCED
    r = c.init_producer_id("tx", 60_000, None, 8)
    assert (r.error, r.producer_epoch) == (E.NONE, FENCED_ABORT_EPOCH[level] + 1)


@pytest.mark.parametrize("level, start, marker_epoch", [
    (2, 32765, 32767),  # fence to MAX-1, the abort's bump to MAX
    (2, 32766, 32767),  # fence to MAX, no bump past it
    (1, 32766, 32767),
])
def test_fencing_near_the_epoch_limit_never_overflows_nor_rotates(level, start, marker_epoch):
    c, pid = started(transaction_version=level)
    md = c.get("tx")
    md.producer_epoch = start
    c.add_partitions("tx", pid, start, [TP], 1)
    markers = c.abort("tx", 2, cause="timeout")
    assert (markers.producer_id, markers.producer_epoch) == (pid, marker_epoch)
    c.markers_written("tx", 3)
    # no producer id rotation on the fence's abort (only a client's v2 end rotates); the next
    # InitProducerId finds the epoch exhausted and rotates then
    assert (md.producer_id, md.producer_epoch, md.next_producer_id) == (pid, marker_epoch, -1)
    r = c.init_producer_id("tx", 60_000, None, 4)
    assert r.error is E.NONE and r.producer_id != pid and r.producer_epoch == 0


def test_expected_epoch_rules_of_kip_360():
    c, pid = started()
    # the producer resumes after an error: bump, remembering the epoch it had
    r = c.init_producer_id("tx", 60_000, (pid, 0), 1)
    assert (r.error, r.producer_epoch) == (E.NONE, 1)
    assert c.get("tx").last_producer_epoch == 0
    # its retry (response lost) names the old epoch again: same answer, no bump
    r = c.init_producer_id("tx", 60_000, (pid, 0), 2)
    assert (r.error, r.producer_epoch) == (E.NONE, 1)
    # a stale epoch is fenced; another producer id too
    assert c.init_producer_id("tx", 60_000, (pid, 5), 3).error is E.PRODUCER_FENCED
    assert c.init_producer_id("tx", 60_000, (pid + 9, 0), 3).error is E.PRODUCER_FENCED


def test_exhausted_epoch_rotates_the_producer_id():
    c, pid = started()
    c.get("tx").producer_epoch = 32766
    r = c.init_producer_id("tx", 60_000, None, 1)
    assert r.error is E.NONE and r.producer_id != pid and r.producer_epoch == 0
    assert c.get("tx").prev_producer_id == pid


@pytest.mark.parametrize("level", [1, 2])
def test_timeout_aborts_and_fences_at_the_next_check(level):
    c, pid = started(timeout_ms=1000, abort_check_interval_ms=10_000, transaction_version=level)
    c.add_partitions("tx", pid, 0, [TP], 500)
    # timed out from 1501 on; the periodic check runs at 10000
    assert c.next_deadline() == 10_000
    assert c.expire(9_999) == []
    out = c.expire(10_000)
    assert len(out) == 1 and out[0].cause == "timeout" and not out[0].committed
    assert (out[0].producer_epoch, out[0].transaction_version) == (FENCED_ABORT_EPOCH[level],
                                                                    level)
    md = c.get("tx")
    assert md.state is S.PREPARE_ABORT and md.producer_epoch == FENCED_ABORT_EPOCH[level]
    c.markers_written("tx", 10_001)
    assert c.end_txn("tx", pid, 0, True, 10_002).error is E.PRODUCER_FENCED
    if level == 2:  # a v2 client (EndTxn v5) still at epoch 0 is fenced too
        assert c.end_txn("tx", pid, 0, True, 10_003,
                         transaction_version=2).error is E.PRODUCER_FENCED


def test_a_transaction_within_its_timeout_is_left_alone():
    c, pid = started(timeout_ms=60_000, abort_check_interval_ms=10_000)
    c.add_partitions("tx", pid, 0, [TP], 0)
    assert c.expire(60_000) == []  # start + timeout is not yet "older than" (strict, as Kafka)
    assert c.next_deadline() == 70_000
    assert len(c.expire(70_000)) == 1


def test_idle_ids_expire():
    c, pid = started(id_expiration_ms=1000, expire_check_interval_ms=500)
    assert c.next_deadline() == 1500
    c.expire(1500)
    assert c.get("tx") is None


def test_operator_abort_only_touches_ongoing_transactions():
    c, pid = started()
    assert c.abort("tx", 1) is None
    c.add_partitions("tx", pid, 0, [TP], 1)
    markers = c.abort("tx", 2)
    assert markers.cause == "operator" and c.get("tx").abort_cause == "operator"


def test_verify_partitions_kip_890_part_1():
    c, pid = started()
    c.add_partitions("tx", pid, 0, [TP], 1)
    assert c.verify_partition("tx", pid, 0, *TP) is E.NONE
    assert c.verify_partition("tx", pid, 0, "u", 0) is E.TRANSACTION_ABORTABLE
    assert c.verify_partition("tx", pid, 1, *TP) is E.PRODUCER_FENCED
    assert c.verify_partition("zz", pid, 0, *TP) is E.INVALID_PRODUCER_ID_MAPPING
    c.end_txn("tx", pid, 0, True, 2)
    assert c.verify_partition("tx", pid, 0, *TP) is E.CONCURRENT_TRANSACTIONS


def test_transactions_v2_end_bumps_the_epoch_and_tells_retries_apart():
    c, pid = started()
    c.add_partitions("tx", pid, 0, [TP], 1)
    end = c.end_txn("tx", pid, 0, True, 2, transaction_version=2)
    assert (end.error, end.producer_id, end.producer_epoch) == (E.NONE, pid, 1)
    assert end.markers.producer_epoch == 1  # markers at the bumped epoch
    # retry while in flight (old epoch): CONCURRENT_TRANSACTIONS
    assert c.end_txn("tx", pid, 0, True, 3, transaction_version=2).error is E.CONCURRENT_TRANSACTIONS
    c.markers_written("tx", 4)
    retry = c.end_txn("tx", pid, 0, True, 5, transaction_version=2)
    assert (retry.error, retry.producer_epoch) == (E.NONE, 1)
    # the table: CompleteCommit + current epoch commit -> INVALID_TXN_STATE, abort -> bump
    assert c.end_txn("tx", pid, 1, True, 6, transaction_version=2).error is E.INVALID_TXN_STATE
    ab = c.end_txn("tx", pid, 1, False, 6, transaction_version=2)
    assert (ab.error, ab.producer_epoch, ab.markers.partitions) == (E.NONE, 2, ())
    c.markers_written("tx", 7)
    # Empty-like retry with a much older epoch is fenced
    assert c.end_txn("tx", pid, 0, False, 8, transaction_version=2).error is E.PRODUCER_FENCED


def test_transactions_v2_abort_from_empty():
    c, pid = started()
    r = c.end_txn("tx", pid, 0, False, 1, transaction_version=2)
    assert (r.error, r.producer_epoch) == (E.NONE, 1)
    # in flight: the retry (old epoch) waits; the new epoch is not valid yet
    assert c.end_txn("tx", pid, 0, False, 2, transaction_version=2).error is E.CONCURRENT_TRANSACTIONS
    assert c.end_txn("tx", pid, 1, False, 2, transaction_version=2).error is E.PRODUCER_FENCED


def test_transactions_v2_epoch_overflow_hands_out_a_new_producer_id():
    c, pid = started()
    c.get("tx").producer_epoch = 32766
    c.add_partitions("tx", pid, 32766, [TP], 1)
    end = c.end_txn("tx", pid, 32766, True, 2, transaction_version=2)
    assert end.error is E.NONE and end.producer_id != pid and end.producer_epoch == 0
    c.markers_written("tx", 3)
    md = c.get("tx")
    assert (md.producer_id, md.producer_epoch) == (end.producer_id, 0)
    # the retry of that EndTxn with the old id and epoch is recognised
    retry = c.end_txn("tx", pid, 32766, True, 4, transaction_version=2)
    assert retry.error is E.NONE


def test_list_filters():
    c, pid = started()
    c.init_producer_id("idle", 60_000, None, 0)
    c.add_partitions("tx", pid, 0, [TP], 100)
    assert {m.transactional_id for m in c.list_transactions(states=["Ongoing"])} == {"tx"}
    assert {m.transactional_id for m in c.list_transactions(producer_ids=[pid])} == {"tx"}
    # duration: "tx" started at 100; at 150 it has run 50 ms
    listed = c.list_transactions(min_duration_ms=60, now_ms=150)
    assert "tx" not in {m.transactional_id for m in listed}
    assert "tx" in {m.transactional_id for m in c.list_transactions(min_duration_ms=40, now_ms=150)}


@pytest.mark.parametrize("new", list(S))
@pytest.mark.parametrize("old", list(S))
def test_transition_door_follows_the_allowed_previous_table(old, new):
    md = TransactionMetadata("x", producer_id=1, state=old)
    if old in VALID_PREVIOUS[new]:
        md.transition_to(new)
        assert md.state is new
    else:
        with pytest.raises(IllegalTransition):
            md.transition_to(new)


def test_implicit_adds_of_transactions_v2():
    c, pid = started()
    assert c.add_partition_implicitly("tx", pid, 0, "t", 3, 5) is E.NONE
    assert c.add_group_implicitly("tx", pid, 0, "g", 6) is E.NONE
    md = c.get("tx")
    assert md.state is S.ONGOING and ("t", 3) in md.partitions and md.groups == {"g"}
    assert md.transaction_version == 2
    assert c.add_partition_implicitly("tx", pid, 9, "t", 3, 7) is E.PRODUCER_FENCED


def test_fencing_an_ongoing_transaction_keeps_its_start_time():
    # regression: the fence passed through PrepareEpochFence and the abort took it for an
    # abort with nothing added (v2's), restarting the clock (found by the state machine)
    c, pid = started()
    c.add_partitions("tx", pid, 0, [TP], 5)
    c.init_producer_id("tx", 60_000, None, 9)
    assert c.get("tx").start_ms == 5


def test_a_starting_transaction_tells_the_broker_its_deadline_moved():
    told = []
    c = TransactionCoordinator(
        on_start=lambda md, now: told.append((md.transactional_id, sorted(md.partitions), now)))
    pid = c.init_producer_id("tx", 1000, None, 0).producer_id
    c.add_partition_implicitly("tx", pid, 0, "t", 0, 5)
    c.add_partitions("tx", pid, 0, [("t", 1)], 6)  # already ongoing: no new deadline
    # told once, with what the first add put in the transaction
    assert told == [("tx", [("t", 0)], 5)] and c.next_deadline() == 10_000
