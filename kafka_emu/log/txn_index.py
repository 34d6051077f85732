"""One partition's transactions: which are open, where the last stable offset is, which aborted.

Theory of operation
-------------------
A transactional producer's first transactional batch in a partition opens a transaction there,
at that batch's base offset; the COMMIT or ABORT control batch (marker) the transaction
coordinator writes closes it (Kafka's ProducerStateManager ``ongoingTxns``). This module keeps:

* ``ongoing``: producer id -> first offset, in the order the transactions began. A transaction
  begins at the then log end, which only grows, so insertion order is offset order and the
  earliest open transaction is the dict's first entry: the last stable offset (LSO) is that
  offset, or the high watermark when nothing is open (``UnifiedLog.lastStableOffset``).
* ``aborted``: one ``AbortedTxn`` (producer id, first offset, last offset = the ABORT marker's
  offset, and the LSO right after it ended) per aborted transaction, in marker order; Kafka's
  transaction index (``TransactionIndex``, ``.txnindex`` files). A read_committed Fetch gets
  those overlapping the range it returns (``collect``), so the consumer can drop their records.

``collect`` is ``TransactionIndex.collectAbortedTxns``: entries whose last offset is at or
above the fetch offset and whose first offset is below the upper bound (the offset after the
last batch returned); the walk stops after the first entry whose recorded LSO reaches the
upper bound. That stop is exact: every transaction that ended later either was open then
(so began at or above that LSO) or began after that marker, so none can start below the bound.
Entries are found by bisecting their last offsets, which grow in marker order.

Pure bookkeeping: the partition log owns offsets and producer epochs (``partition.py``,
``producers.py``) and calls in with plain values.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import NamedTuple

import attrs


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int  # the ABORT marker's own offset
    last_stable_offset: int  # the partition's LSO once this transaction had ended


@attrs.define(eq=False)
class TxnIndex:
    ongoing: dict[int, int] = attrs.Factory(dict)
    aborted: list[AbortedTxn] = attrs.Factory(list)
    _last_offsets: array = attrs.Factory(lambda: array("q"))

    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest open transaction, or None."""
        for first in self.ongoing.values():
            return first
        return None

    def begin(self, producer_id: int, first_offset: int) -> None:
        self.ongoing[producer_id] = first_offset

    def end(self, producer_id: int, marker_offset: int, *, aborted: bool) -> None:
        """Close ``producer_id``'s open transaction (if any) with the marker at
        ``marker_offset``; an aborted one goes to the index with the LSO after it
        (ProducerStateManager.lastStableOffset(completedTxn))."""
        first = self.ongoing.pop(producer_id, None)
        if first is None or not aborted:
            return
        nxt = self.first_unstable_offset()
        lso = marker_offset + 1 if nxt is None else nxt
        self.aborted.append(AbortedTxn(producer_id, first, marker_offset, lso))
        self._last_offsets.append(marker_offset)

    def collect(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions a read_committed Fetch from ``fetch_offset`` returning
        records below ``upper_bound`` must report."""
        found = []
        aborted = self.aborted
        for i in range(bisect_left(self._last_offsets, fetch_offset), len(aborted)):
            txn = aborted[i]
            if txn.first_offset < upper_bound:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound:
                break
        return found

    def drop_below(self, log_start: int) -> None:
        """Forget aborted transactions wholly below the log start (Kafka deletes their index
        with the segment); no fetch can reach them any more."""
        cut = bisect_left(self._last_offsets, log_start)
        if cut:
            del self.aborted[:cut]
            del self._last_offsets[:cut]
