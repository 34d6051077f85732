"""Transaction operations: list the transactional ids the coordinator knows, abort one, or time
one out now.

Both ``abort_transaction`` and ``expire_transaction`` do what the coordinator does to a
transaction past its transaction.timeout.ms (TransactionCoordinator.abortTimedOutTransactions):
the producer's epoch is bumped (fencing it: its next AddPartitionsToTxn, EndTxn or transactional
Produce is refused), ABORT markers are written to every partition of the transaction and the
pending offsets of its groups are dropped. They differ only in the cause the timeline records
(``operator`` or ``timeout``); neither moves the clock (``advance`` does, and a timeout then
fires at the coordinator's next periodic check). Only an Ongoing transaction can be aborted; for
any other state the answer says so and nothing changes.
"""

from __future__ import annotations

from typing import TypedDict

import attrs

from ..operations import ControlError, operation


class TransactionInfo(TypedDict):
    """One transactional id as the coordinator holds it."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    state: str  # Kafka's state name: Empty, Ongoing, PrepareCommit, CompleteAbort, ...
    timeout_ms: int
    start_ms: int  # when its transaction started (-1: none)
    partitions: list[str]  # "topic-partition" of the transaction's partitions
    groups: list[str]  # groups added by AddOffsetsToTxn
    last_abort_cause: str | None  # client, timeout, fenced, operator (None: never aborted)


class TransactionAborted(TypedDict):
    transactional_id: str
    aborted: bool
    state: str  # after the operation
    producer_epoch: int  # after the operation (bumped when aborted)
    partitions: list[str]  # where ABORT markers were written
    detail: str  # why nothing was done, else ""


@attrs.frozen(kw_only=True)
class ListParams:
    state: str | None = attrs.field(default=None, metadata={
        "doc": "only ids in this state (Kafka's names: Ongoing, Empty, CompleteCommit, ...)"})


@attrs.frozen(kw_only=True)
class IdParams:
    transactional_id: str = attrs.field(metadata={"doc": "the transactional.id"})


def _names(partitions) -> list[str]:
    return [f"{t}-{p}" for t, p in sorted(partitions)]


def _info(md) -> TransactionInfo:
    return {"transactional_id": md.transactional_id, "producer_id": md.producer_id,
            "producer_epoch": md.producer_epoch, "state": md.state.value,
            "timeout_ms": md.timeout_ms, "start_ms": md.start_ms,
            "partitions": _names(md.partitions), "groups": sorted(md.groups),
            "last_abort_cause": md.abort_cause}


@operation("GET", "/transactions", ListParams)
def transactions(broker, params: ListParams) -> list[TransactionInfo]:
    """Every transactional id the coordinator holds (optionally of one state)."""
    listed = broker.transactions.list_transactions(
        states=() if params.state is None else (params.state,), now_ms=broker.now_ms())
    return [_info(md) for md in sorted(listed, key=lambda m: m.transactional_id)]


def _abort(broker, transactional_id: str, cause: str) -> TransactionAborted:
    from ...broker.txn_markers import write_markers
    coordinator = broker.transactions
    md = coordinator.get(transactional_id)
    if md is None:
        raise ControlError(f"transactional id {transactional_id!r} is not known", 404)
    now = broker.now_ms()
    markers = coordinator.abort(transactional_id, now, cause)
    write_markers(broker, markers, now)
    detail = "" if markers else f"no ongoing transaction (state {md.state.value})"
    return {"transactional_id": transactional_id, "aborted": markers is not None,
            "state": md.state.value, "producer_epoch": md.producer_epoch,
            "partitions": _names(markers.partitions) if markers else [], "detail": detail}


@operation("POST", "/transactions/{transactional_id}/abort", IdParams)
def abort_transaction(broker, params: IdParams) -> TransactionAborted:
    """Abort an ongoing transaction and fence its producer (ABORT markers, epoch bump)."""
    return _abort(broker, params.transactional_id, "operator")


@operation("POST", "/transactions/{transactional_id}/expire", IdParams)
def expire_transaction(broker, params: IdParams) -> TransactionAborted:
    """Time an ongoing transaction out now, as transaction.timeout.ms would: aborted, producer
    fenced."""
    return _abort(broker, params.transactional_id, "timeout")
