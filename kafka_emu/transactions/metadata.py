"""One transactional id's state, as Kafka's TransactionMetadata keeps it.

Theory of operation
-------------------
A transactional id owns a producer id and epoch, the epoch before the last bump
(``last_producer_epoch``, so a retried InitProducerId is recognised), the producer id it had
before the current one (``prev_producer_id``, set on every transition as Kafka's
prepareTransitionTo does), the partitions of its ongoing transaction and the groups added by
AddOffsetsToTxn, the transaction timeout and the start / last-update times.

States and their transitions (Kafka's TransactionState; the allowed-previous table is
``VALID_PREVIOUS`` and ``transition_to`` is the one door):

- Empty: no transaction. AddPartitionsToTxn / AddOffsetsToTxn -> Ongoing; InitProducerId bumps
  the epoch (stays Empty); EndTxn(abort) under transactions v2 -> PrepareAbort.
- Ongoing: partitions added. EndTxn -> PrepareCommit / PrepareAbort; more partitions stay
  Ongoing; InitProducerId, a timeout or an operator's abort -> PrepareEpochFence.
- PrepareEpochFence: the epoch is bumped to fence the producer; at once -> PrepareAbort.
- PrepareCommit / PrepareAbort: markers are being written to every partition of the
  transaction; requests for the id get CONCURRENT_TRANSACTIONS. Markers written ->
  CompleteCommit / CompleteAbort.
- CompleteCommit / CompleteAbort: like Empty (a new transaction may start).
- Dead: expired (transactional.id.expiration.ms idle); removed from the coordinator.

Kafka writes every transition to ``__transaction_state`` first and completes it once written
(a "pending state" meanwhile). The emulator's log appends are immediate, so a transition is
prepared and completed in one step; PrepareEpochFence, which Kafka keeps only as a pending
state, is passed through in the same call.
"""

from __future__ import annotations

import enum

import attrs

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
SHORT_MAX = 32767


class TxnState(enum.Enum):
    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"

    @property
    def wire_name(self) -> str:
        """The name DescribeTransactions / ListTransactions show (TransactionState.getName)."""
        return self.value


S = TxnState
VALID_PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT,
                                S.COMPLETE_ABORT}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}
# states in which the id may expire (TransactionState.isExpirationAllowed)
EXPIRATION_ALLOWED = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})
COMPLETING = frozenset({S.PREPARE_COMMIT, S.PREPARE_ABORT})


def is_epoch_exhausted(epoch: int) -> bool:
    """Epochs stop at Short.MaxValue - 1, so the coordinator can always fence once more."""
    return epoch >= SHORT_MAX - 1


class IllegalTransition(Exception):
    """A transition the table forbids: a bug in the coordinator, never a client's error."""


@attrs.define(eq=False)
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    prev_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID  # transactions v2: the id after an epoch overflow
    producer_epoch: int = NO_PRODUCER_EPOCH
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    timeout_ms: int = 60_000
    state: TxnState = TxnState.EMPTY
    partitions: set[tuple[str, int]] = attrs.Factory(set)
    groups: set[str] = attrs.Factory(set)  # AddOffsetsToTxn's groups (their offsets partition
    # is in ``partitions`` as Kafka keeps it; the groups say whose pending offsets to complete)
    start_ms: int = -1  # txnStartTimestamp: when the first partition was added
    last_update_ms: int = -1
    transaction_version: int = 0  # the client's: 2 when it ended a transaction with EndTxn v5+
    # why the transaction in PrepareAbort is aborting ("client", "timeout", "fenced", "operator")
    abort_cause: str | None = None

    def transition_to(self, new: TxnState) -> None:
        """The one door: check Kafka's allowed-previous table, and every transition that
        starts (leaves Prepare*/Ongoing) or ends a transaction clears what it must."""
        if self.state not in VALID_PREVIOUS[new]:
            raise IllegalTransition(
                f"transactional id {self.transactional_id!r}: {self.state.value} -> {new.value}")
        self.prev_producer_id = self.producer_id
        self.state = new

    @property
    def epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    @property
    def has_pending_transaction(self) -> bool:
        return self.state in (S.ONGOING, S.PREPARE_ABORT, S.PREPARE_COMMIT)

    def timeout_due_ms(self) -> int | None:
        """When an ongoing transaction counts as timed out: Kafka's check is strict
        (``txnStartTimestamp + txnTimeoutMs < now``), so the first such ms is one later."""
        if self.state is not S.ONGOING:
            return None
        return self.start_ms + self.timeout_ms + 1
