"""A hypothesis state machine of the transaction coordinator (transactions v1 requests) against a
simple model, at the cluster's transaction.version 1 and 2 (the aborts the coordinator starts
itself -- timeout, fencing InitProducerId -- bump the epoch once at 1, twice at 2): each request's error, the state, epoch and partitions after it, markers exactly when a
transaction ends (with its partitions), and invariants -- the epoch never decreases, the state is
always one the allowed-previous table reached, only Ongoing/Prepare* hold partitions."""

from __future__ import annotations

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kafka_emu.errors import ErrorCode as E
from kafka_emu.transactions import TransactionConfig, TransactionCoordinator, TxnState as S

TIMEOUT, INTERVAL = 1_000, 500
PARTS = st.sets(st.sampled_from([("a", 0), ("a", 1), ("b", 0)]), min_size=1, max_size=2)


class TxnMachine(RuleBasedStateMachine):
    LEVEL = 1  # the finalized transaction.version

    @property
    def fence_bump(self):
        return 2 if self.LEVEL >= 2 else 1

    @initialize()
    def start(self):
        self.c = TransactionCoordinator(TransactionConfig(abort_check_interval_ms=INTERVAL,
                                                          transaction_version=self.LEVEL))
        self.now = 0
        r = self.c.init_producer_id("tx", TIMEOUT, None, self.now)
        assert r.error is E.NONE
        self.pid, self.epoch, self.state = r.producer_id, 0, S.EMPTY
        self.parts: set = set()
        self.start_ms = -1
        self.max_epoch_seen = 0

    def _ended(self, markers, committed, epoch):
        assert markers is not None
        assert markers.committed is committed and set(markers.partitions) == self.parts
        assert markers.producer_epoch == epoch and markers.producer_id == self.pid

    @rule(ms=st.integers(0, 800))
    def time_passes(self, ms):
        self.now += ms
        out = self.c.expire(self.now)
        if self.state is S.ONGOING:
            overdue = self.now - self.start_ms
            if overdue <= TIMEOUT:
                assert out == []
            elif overdue > TIMEOUT + INTERVAL:
                assert len(out) == 1
            if out:
                self.epoch += self.fence_bump
                self._ended(out[0], False, self.epoch)
                assert out[0].cause == "timeout"
                self.state = S.PREPARE_ABORT
        else:
            assert out == []

    @rule(parts=PARTS, off=st.sampled_from([0, 0, 0, -1, 1]))
    def add_partitions(self, parts, off):
        error = self.c.add_partitions("tx", self.pid, self.epoch + off, parts, self.now)
        if off:
            assert error is E.PRODUCER_FENCED
        elif self.state in (S.PREPARE_ABORT, S.PREPARE_COMMIT):
            assert error is E.CONCURRENT_TRANSACTIONS
        else:
            assert error is E.NONE
            if self.state is not S.ONGOING:
                self.start_ms = self.now
            self.state = S.ONGOING
            self.parts |= parts

    @rule(commit=st.booleans(), off=st.sampled_from([0, 0, 0, -1, 1]))
    def end_txn(self, commit, off):
        r = self.c.end_txn("tx", self.pid, self.epoch + off, commit, self.now)
        if off:
            assert r.error is E.PRODUCER_FENCED and r.markers is None
            return
        if self.state is S.ONGOING:
            assert r.error is E.NONE
            self._ended(r.markers, commit, self.epoch)
            self.state = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
            return
        assert r.markers is None
        done = S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT
        busy = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        expected = (E.NONE if self.state is done else
                    E.CONCURRENT_TRANSACTIONS if self.state is busy else E.INVALID_TXN_STATE)
        assert r.error is expected

    @precondition(lambda self: self.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT))
    @rule()
    def markers_written(self):
        self.now += 1
        got = self.c.markers_written("tx", self.now)
        self.state = S.COMPLETE_COMMIT if self.state is S.PREPARE_COMMIT else S.COMPLETE_ABORT
        assert got is self.state
        self.parts = set()

    @rule(resume=st.booleans())
    def init_producer_id(self, resume):
        expected = (self.pid, self.epoch) if resume else None
        r = self.c.init_producer_id("tx", TIMEOUT, expected, self.now)
        if self.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            assert r.error is E.CONCURRENT_TRANSACTIONS and r.markers is None
        elif self.state is S.ONGOING:
            assert r.error is E.CONCURRENT_TRANSACTIONS
            self.epoch += self.fence_bump
            self._ended(r.markers, False, self.epoch)
            self.state = S.PREPARE_ABORT
        else:
            assert r.error is E.NONE and r.producer_id == self.pid
            self.epoch += 1
            assert r.producer_epoch == self.epoch
            self.state, self.parts = S.EMPTY, set()

    @invariant()
    def matches_the_model(self):
        md = self.c.get("tx")
        assert (md.state, md.producer_id, md.producer_epoch) == (self.state, self.pid, self.epoch)
        assert md.partitions == self.parts
        if self.state in (S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT):
            assert md.partitions and md.start_ms == self.start_ms
        else:
            assert not md.partitions

    @invariant()
    def epoch_never_decreases(self):
        assert self.c.get("tx").producer_epoch >= self.max_epoch_seen
        self.max_epoch_seen = self.c.get("tx").producer_epoch


class TxnMachineTV2(TxnMachine):
    LEVEL = 2


TestTxnMachine = TxnMachine.TestCase
TestTxnMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestTxnMachineTV2 = TxnMachineTV2.TestCase
TestTxnMachineTV2.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
