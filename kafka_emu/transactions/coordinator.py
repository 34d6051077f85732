"""The transaction coordinator: Kafka's TransactionCoordinator over TransactionMetadata, pure.

Theory of operation
-------------------
Each request is a method taking ``now_ms`` and returning a value: an ErrorCode, or a result
carrying the answer and, when a transaction must be completed, a ``WriteMarkers`` the broker
carries out (a COMMIT/ABORT control batch on every partition of the transaction, and the
pending offsets of every group it added completed) before calling ``markers_written`` to move
PrepareCommit/PrepareAbort to CompleteCommit/CompleteAbort. Until then the id answers
CONCURRENT_TRANSACTIONS, as Kafka does while its markers are in flight.

The error choices follow Kafka 4.2's TransactionCoordinator:

- InitProducerId: a new id gets a producer id (shared with idempotent producers) and epoch 0;
  Empty/Complete* bump the epoch (a retry naming the last epoch gets the same one back; an
  exhausted epoch rotates to a new producer id); Prepare* -> CONCURRENT_TRANSACTIONS; Ongoing ->
  the producer is fenced (epoch bump), the transaction aborted, and CONCURRENT_TRANSACTIONS
  returned until the client retries (TransactionCoordinator.prepareInitProducerIdTransit).
  A stale expected id/epoch -> PRODUCER_FENCED; a timeout over transaction.max.timeout.ms (or
  not positive) -> INVALID_TRANSACTION_TIMEOUT.
- AddPartitionsToTxn / AddOffsetsToTxn: unknown id or other producer id ->
  INVALID_PRODUCER_ID_MAPPING; other epoch -> PRODUCER_FENCED; Prepare* ->
  CONCURRENT_TRANSACTIONS. The verify-only form (KIP-890 part 1) answers per partition NONE or
  TRANSACTION_ABORTABLE.
- EndTxn, transactions v1 (EndTxn v0-4) and v2 (v5+, KIP-890 part 2: every EndTxn bumps the
  epoch and returns it; retries are told apart by epoch), with Kafka's table of
  INVALID_TXN_STATE / PRODUCER_FENCED / CONCURRENT_TRANSACTIONS / NONE.
- Timeouts: an Ongoing transaction older than its timeout is fenced and aborted by a check that
  runs every transaction.abort.timed.out.transaction.cleanup.interval.ms
  (abortTimedOutTransactions); ``next_deadline`` names the check that will find it.
- transactional.id.expiration.ms: an id idle that long in Empty/Complete* is removed (Dead), by a
  check every transaction.remove.expired.transaction.cleanup.interval.ms.
- The ends the coordinator starts itself (timeout, fencing InitProducerId, operator abort) run
  at the cluster's finalized transaction.version (``config.transaction_version``), not the
  client's: at 2 the abort bumps the epoch a second time (``_fence_and_abort``).

Requests reach here already validated for their wire version; PRODUCER_FENCED is mapped to
INVALID_PRODUCER_EPOCH for old versions by the handlers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import ErrorCode
from .config import TransactionConfig
from .metadata import (COMPLETING, EXPIRATION_ALLOWED, NO_PRODUCER_EPOCH, NO_PRODUCER_ID,
                       SHORT_MAX, TransactionMetadata, TxnState, is_epoch_exhausted)
from .results import EndResult, InitResult, WriteMarkers

__all__ = ["EndResult", "InitResult", "TransactionCoordinator", "WriteMarkers"]

S = TxnState
E = ErrorCode


class TransactionCoordinator:
    def __init__(self, config: TransactionConfig | None = None, *,
                 allocate_producer_id: Callable[[], int] | None = None,
                 group_partition: Callable[[str], tuple[str, int]] | None = None,
                 start_ms: int = 0,
                 on_start: Callable[[TransactionMetadata, int], object] | None = None) -> None:
        self.config = config or TransactionConfig()
        # told (metadata, now_ms) when a transaction starts (a new timeout deadline): the broker
        # wakes its timer task and emits TransactionBegun, whichever request path
        # (AddPartitionsToTxn, AddOffsetsToTxn, Produce v12's implicit add) began it
        self._on_start = on_start
        # a group's __consumer_offsets partition (the broker knows the partition count)
        self._group_partition = group_partition or (lambda group_id: ("__consumer_offsets", 0))
        if allocate_producer_id is None:
            counter = iter(range(2**62))
            allocate_producer_id = lambda: next(counter)  # noqa: E731
        self._allocate = allocate_producer_id
        self.txns: dict[str, TransactionMetadata] = {}
        self.start_ms = start_ms  # the periodic checks tick from here, as Kafka's scheduler

    # -- queries ----------------------------------------------------------------------------
    def get(self, transactional_id: str) -> TransactionMetadata | None:
        return self.txns.get(transactional_id)

    def validate_timeout(self, timeout_ms: int) -> bool:
        return 0 < timeout_ms <= self.config.max_timeout_ms

    def verify_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                          partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
        """AddPartitionsToTxn's verify-only form (handleVerifyPartitionsInTransaction)."""
        parts = list(partitions)
        md = self.txns.get(transactional_id) if transactional_id else None
        if not transactional_id:
            error = E.INVALID_REQUEST
        elif md is None or md.producer_id != producer_id:
            error = E.INVALID_PRODUCER_ID_MAPPING
        elif md.producer_epoch != producer_epoch:
            error = E.PRODUCER_FENCED
        elif md.state in COMPLETING:
            error = E.CONCURRENT_TRANSACTIONS
        else:
            return {tp: E.NONE if tp in md.partitions else E.TRANSACTION_ABORTABLE
                    for tp in parts}
        return {tp: error for tp in parts}

    def verify_partition(self, transactional_id: str, producer_id: int, producer_epoch: int,
                         topic: str, partition: int) -> ErrorCode:
        """The Produce path's check (KIP-890 part 1): is the partition in the transaction?"""
        tp = (topic, partition)
        return self.verify_partitions(transactional_id, producer_id, producer_epoch, [tp])[tp]

    def verify_group(self, transactional_id: str, producer_id: int, producer_epoch: int,
                     group_id: str) -> ErrorCode:
        """TxnOffsetCommit's check (KIP-890 part 1): was the group added by AddOffsetsToTxn to
        the ongoing transaction at this epoch? Errors as ``verify_partitions``."""
        tp = self._group_partition(group_id)
        error = self.verify_partitions(transactional_id, producer_id, producer_epoch, [tp])[tp]
        if error is E.NONE and group_id not in self.txns[transactional_id].groups:
            return E.TRANSACTION_ABORTABLE
        return error

    def add_partition_implicitly(self, transactional_id: str, producer_id: int,
                                 producer_epoch: int, topic: str, partition: int,
                                 now_ms: int = 0) -> ErrorCode:
        """Transactions v2 (KIP-890 part 2): Produce v12+ adds its partition itself, as the
        leader's AddPartitionsToTxn v5 (not verify-only) to the coordinator does."""
        error = self.add_partitions(transactional_id, producer_id, producer_epoch,
                                    [(topic, partition)], now_ms)
        if error is E.NONE:
            self.txns[transactional_id].transaction_version = 2
        return error

    def add_group_implicitly(self, transactional_id: str, producer_id: int, producer_epoch: int,
                             group_id: str, now_ms: int = 0) -> ErrorCode:
        """Transactions v2: TxnOffsetCommit v5 adds its group's offsets partition itself."""
        error = self.add_partitions(transactional_id, producer_id, producer_epoch, [],
                                    now_ms, group_id=group_id)
        if error is E.NONE:
            self.txns[transactional_id].transaction_version = 2
        return error

    # -- InitProducerId ---------------------------------------------------------------------
    def init_producer_id(self, transactional_id: str, timeout_ms: int,
                         expected: tuple[int, int] | None, now_ms: int) -> InitResult:
        if transactional_id == "":
            return InitResult(error=E.INVALID_REQUEST)
        if not self.validate_timeout(timeout_ms):
            return InitResult(error=E.INVALID_TRANSACTION_TIMEOUT)
        md = self.txns.get(transactional_id)
        if md is None:
            md = self.txns[transactional_id] = TransactionMetadata(
                transactional_id, producer_id=self._allocate(), timeout_ms=timeout_ms,
                last_update_ms=now_ms)
        if expected is not None and not (
                md.producer_epoch == NO_PRODUCER_EPOCH or expected[0] == md.producer_id
                or (expected[0] == md.prev_producer_id and is_epoch_exhausted(expected[1]))):
            return InitResult(error=E.PRODUCER_FENCED)
        state = md.state
        if state in COMPLETING:
            return InitResult(error=E.CONCURRENT_TRANSACTIONS)
        if state is S.ONGOING:
            # fence and abort first; the client retries and gets a second bump then
            markers = self._fence_and_abort(md, now_ms, "fenced")
            return InitResult(error=E.CONCURRENT_TRANSACTIONS, markers=markers)
        if state not in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            raise AssertionError(f"{transactional_id}: InitProducerId in {state}")
        if md.epoch_exhausted and (expected is None or expected[1] == md.producer_epoch):
            old_epoch = md.producer_epoch
            md.transition_to(S.EMPTY)
            md.producer_id = self._allocate()
            md.producer_epoch = 0
            md.last_producer_epoch = old_epoch if expected is not None else NO_PRODUCER_EPOCH
        else:
            current, last = md.producer_epoch, md.last_producer_epoch
            if expected is None:
                new_epoch, new_last = current + 1, NO_PRODUCER_EPOCH
            elif current == NO_PRODUCER_EPOCH or expected[1] == current:
                new_epoch, new_last = current + 1, current
            elif expected[1] == last:
                new_epoch, new_last = current, last  # a retry of a call that succeeded
            else:
                return InitResult(error=E.PRODUCER_FENCED)
            md.transition_to(S.EMPTY)
            md.producer_epoch, md.last_producer_epoch = new_epoch, new_last
        md.timeout_ms = timeout_ms
        md.partitions, md.groups = set(), set()
        md.start_ms, md.last_update_ms = -1, now_ms
        return InitResult(error=E.NONE, producer_id=md.producer_id,
                          producer_epoch=md.producer_epoch)

    # -- AddPartitionsToTxn / AddOffsetsToTxn -----------------------------------------------
    def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions: Iterable[tuple[str, int]], now_ms: int, *,
                       group_id: str | None = None) -> ErrorCode:
        if not transactional_id:
            return E.INVALID_REQUEST
        md = self.txns.get(transactional_id)
        if md is None or md.producer_id != producer_id:
            return E.INVALID_PRODUCER_ID_MAPPING
        if md.producer_epoch != producer_epoch:
            return E.PRODUCER_FENCED
        if md.state in COMPLETING:
            return E.CONCURRENT_TRANSACTIONS
        parts = set(partitions)
        if group_id is not None:
            parts.add(self._group_partition(group_id))
        if md.state is S.ONGOING and parts <= md.partitions and (
                group_id is None or group_id in md.groups):
            return E.NONE  # already in: Kafka answers at once
        starts = md.state is not S.ONGOING
        if starts:
            md.start_ms = now_ms
        md.transition_to(S.ONGOING)
        md.partitions |= parts
        if group_id is not None:
            md.groups.add(group_id)
        md.last_update_ms = now_ms
        if starts and self._on_start is not None:
            self._on_start(md, now_ms)
        return E.NONE

    # -- EndTxn -----------------------------------------------------------------------------
    def end_txn(self, transactional_id: str, producer_id: int, producer_epoch: int,
                commit: bool, now_ms: int, *, transaction_version: int = 1) -> EndResult:
        if not transactional_id:
            return EndResult(error=E.INVALID_REQUEST)
        md = self.txns.get(transactional_id)
        if md is None:
            return EndResult(error=E.INVALID_PRODUCER_ID_MAPPING)
        if transaction_version >= 2:
            return self._end_v2(md, producer_id, producer_epoch, commit, now_ms)
        if md.producer_id != producer_id:
            return EndResult(error=E.INVALID_PRODUCER_ID_MAPPING)
        if producer_epoch != md.producer_epoch:  # strict for client requests (v1)
            return EndResult(error=E.PRODUCER_FENCED)
        state = md.state
        if state is S.ONGOING:
            return EndResult(error=E.NONE, markers=self._prepare(md, commit, now_ms, "client",
                                                                 transaction_version))
        return EndResult(error=self._end_in_state(state, commit, retry=True))

    @staticmethod
    def _end_in_state(state: TxnState, commit: bool, *, retry: bool) -> ErrorCode:
        """EndTxn in a state other than Ongoing: a retry of a completed end is NONE, of one in
        flight CONCURRENT_TRANSACTIONS; anything else INVALID_TXN_STATE."""
        if state is (S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT):
            return E.NONE if retry else E.INVALID_TXN_STATE
        if state is (S.PREPARE_COMMIT if commit else S.PREPARE_ABORT):
            return E.CONCURRENT_TRANSACTIONS
        return E.INVALID_TXN_STATE

    def _end_v2(self, md: TransactionMetadata, producer_id: int, producer_epoch: int,
                commit: bool, now_ms: int) -> EndResult:
        """Transactions v2 (KIP-890 part 2), TransactionCoordinator.endTransaction's table."""
        retry_on_overflow = (md.prev_producer_id == producer_id
                             and producer_epoch == SHORT_MAX - 1 and md.producer_epoch == 0)
        retry_on_bump = md.producer_epoch == producer_epoch + 1
        state = md.state
        if state in (S.ONGOING, S.EMPTY):
            valid = producer_epoch == md.producer_epoch
        elif state in COMPLETING:
            valid = retry_on_bump
        else:
            valid = retry_on_bump or retry_on_overflow or producer_epoch == md.producer_epoch
        if md.producer_id != producer_id and not retry_on_overflow:
            return EndResult(error=E.INVALID_PRODUCER_ID_MAPPING)
        if not valid:
            return EndResult(error=E.PRODUCER_FENCED)
        retry = retry_on_bump or retry_on_overflow
        if state is S.ONGOING or (not commit and not retry and state in (
                S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT)):
            markers = self._prepare(md, commit, now_ms, "client", 2)
            if md.next_producer_id != NO_PRODUCER_ID:
                return EndResult(error=E.NONE, producer_id=md.next_producer_id,
                                 producer_epoch=0, markers=markers)
            return EndResult(error=E.NONE, producer_id=md.producer_id,
                             producer_epoch=md.producer_epoch, markers=markers)
        error = self._end_in_state(state, commit, retry=retry)
        if error is E.NONE:
            return EndResult(error=E.NONE, producer_id=md.producer_id,
                             producer_epoch=md.producer_epoch)
        return EndResult(error=error)

    def _prepare(self, md: TransactionMetadata, commit: bool, now_ms: int, cause: str,
                 version: int) -> WriteMarkers:
        """Ongoing (or, v2, an abort from Empty/Complete*) -> PrepareCommit/PrepareAbort at
        ``version``: the request's transaction version (EndTxn v5+: 2), or the cluster's for an
        end the coordinator starts; the metadata keeps it, as prepareAbortOrCommit's does."""
        fencing = md.state is S.PREPARE_EPOCH_FENCE
        if md.state in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            md.start_ms = now_ms  # v2's abort with nothing added: start time is "now"
        md.transition_to(S.PREPARE_COMMIT if commit else S.PREPARE_ABORT)
        md.transaction_version = version
        if version >= 2:
            md.last_producer_epoch = md.producer_epoch
            if not (md.producer_epoch == SHORT_MAX and not commit):
                # a fence's abort never rotates the producer id (endTransaction allocates one
                # only when the pending state is not PrepareEpochFence)
                if md.epoch_exhausted and not fencing:
                    md.next_producer_id = self._allocate()
                md.producer_epoch += 1
        md.last_update_ms = now_ms
        md.abort_cause = None if commit else cause
        return WriteMarkers(transactional_id=md.transactional_id, producer_id=md.producer_id,
                            producer_epoch=md.producer_epoch, committed=commit,
                            partitions=tuple(sorted(md.partitions)),
                            groups=tuple(sorted(md.groups)), cause=cause,
                            transaction_version=max(1, md.transaction_version))

    def _fence_and_abort(self, md: TransactionMetadata, now_ms: int, cause: str) -> WriteMarkers:
        """Ongoing -> PrepareEpochFence (epoch + 1, last epoch forgotten) -> PrepareAbort, as
        prepareFenceProducerEpoch then endTransaction(isFromClient = false) with the cluster's
        finalized transaction.version (TransactionStateManager.transactionVersionLevel), not
        the client's: at TV_2 prepareAbortOrCommit bumps the epoch once more (the markers
        carry epoch + 2, last epoch = the fenced one; no bump past Short.MAX_VALUE), at TV_0/1
        the markers carry epoch + 1. The metadata keeps the server's version, as Kafka's."""
        md.transition_to(S.PREPARE_EPOCH_FENCE)
        if md.producer_epoch < SHORT_MAX:
            md.producer_epoch += 1
        md.last_producer_epoch = NO_PRODUCER_EPOCH
        return self._prepare(md, False, now_ms, cause, self.config.transaction_version)

    def markers_written(self, transactional_id: str, now_ms: int) -> TxnState | None:
        """Every marker of the transaction is written: Prepare* -> Complete*."""
        md = self.txns.get(transactional_id)
        if md is None or md.state not in COMPLETING:
            return None
        md.transition_to(S.COMPLETE_COMMIT if md.state is S.PREPARE_COMMIT else S.COMPLETE_ABORT)
        if md.transaction_version >= 2 and md.next_producer_id != NO_PRODUCER_ID:
            md.producer_id, md.producer_epoch = md.next_producer_id, 0
        md.next_producer_id = NO_PRODUCER_ID
        md.partitions, md.groups = set(), set()
        md.last_update_ms = now_ms
        return md.state

    # -- operator and timers ----------------------------------------------------------------
    def abort(self, transactional_id: str, now_ms: int, cause: str = "operator"
              ) -> WriteMarkers | None:
        """Fence the producer and abort its ongoing transaction (what a timeout does)."""
        md = self.txns.get(transactional_id)
        if md is None or md.state is not S.ONGOING:
            return None
        return self._fence_and_abort(md, now_ms, cause)

    def _next_tick(self, due_ms: int, interval_ms: int) -> int:
        """The first run of a periodic check (every interval from start) at or after due."""
        if due_ms <= self.start_ms + interval_ms:
            return self.start_ms + interval_ms
        ticks = -(-(due_ms - self.start_ms) // interval_ms)
        return self.start_ms + ticks * interval_ms

    def next_deadline(self) -> int | None:
        cfg = self.config
        best = None
        for md in self.txns.values():
            due = md.timeout_due_ms()
            if due is not None:
                tick = self._next_tick(due, cfg.abort_check_interval_ms)
            elif md.state in EXPIRATION_ALLOWED:
                tick = self._next_tick(md.last_update_ms + cfg.id_expiration_ms + 1,
                                       cfg.expire_check_interval_ms)
            else:
                continue
            if best is None or tick < best:
                best = tick
        return best

    def expire(self, now_ms: int) -> list[WriteMarkers]:
        """Run the checks due by ``now_ms``: abort timed-out transactions (their markers are
        returned), remove expired ids."""
        cfg = self.config
        out = []
        for tid, md in list(self.txns.items()):
            due = md.timeout_due_ms()
            if due is not None and self._next_tick(due, cfg.abort_check_interval_ms) <= now_ms:
                out.append(self._fence_and_abort(md, now_ms, "timeout"))
            elif md.state in EXPIRATION_ALLOWED and self._next_tick(
                    md.last_update_ms + cfg.id_expiration_ms + 1,
                    cfg.expire_check_interval_ms) <= now_ms:
                md.transition_to(S.DEAD)
                del self.txns[tid]
        return out

    def list_transactions(self, *, states: Iterable[str] = (), producer_ids: Iterable[int] = (),
                          min_duration_ms: int = -1, now_ms: int = 0) -> list[TransactionMetadata]:
        """ListTransactions' filters (TransactionStateManager.listTransactionStates): empty
        filters match everything; the v1 duration filter drops ids whose transaction started
        no more than that long ago -- computed from txnStartTimestamp as Kafka does, so ids
        with no transaction (start -1) pass it."""
        wanted_states, wanted_pids = set(states), set(producer_ids)
        out = []
        for md in self.txns.values():
            if md.state is S.DEAD:
                continue
            if wanted_pids and md.producer_id not in wanted_pids:
                continue
            if wanted_states and md.state.value not in wanted_states:
                continue
            if min_duration_ms >= 0 and now_ms - md.start_ms <= min_duration_ms:
                continue
            out.append(md)
        return out
