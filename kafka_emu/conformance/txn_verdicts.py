"""The verdict rules of the transactions scenarios, from what the kit saw (pure, no I/O).

Kafka's ``transactions_test.py`` judges a copy by what a read_committed consumer reads from the
output topic, twice: one consumer reading *while* the copiers and brokers bounce, one reading
the whole topic after the copiers finished. Each must read every input record exactly once
(``check_order``: in the input's order, with one partition in and out). The copiers' own
progress events (Kafka's ``TransactionalMessageCopier`` JSON lines) add what an exactly-once
pipeline must never print: a life's committed count going down, more records committed over
all its lives than its input partition held, and a copier that never finished (a
``shutdown_complete`` with ``remaining`` 0).

A *recording* (what the runner writes beside a failed run, and what the tests hand-write) is a
JSON object: ``inputs`` (input partition -> values in offset order), ``outputs`` and
``concurrent`` (values as each consumer read them, ``concurrent`` null when not run),
``copiers`` (transactional id -> ``[life, event]`` pairs, ``input_partition`` per copier in
``copier_partitions``), ``server`` (the emulator's TransactionBegun / TransactionEnded
events, null when not read), ``check_order``, ``group_mode`` (subscribed copiers: the bound on a
copier's commits is the whole input). :func:`judge` reads one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .record import Violation

RULES = {
    "txn-lost": "an input record is missing from what a read_committed consumer read",
    "txn-duplicate": "a read_committed consumer read a record more than once",
    "txn-unexpected": "a read_committed consumer read a record that is not an input record "
                      "(an aborted transaction's, or garbage)",
    "txn-order": "with one partition in and out, the output is not in the input's order",
    "copier-unfinished": "no life of the copier finished its input (shutdown_complete with "
                         "remaining 0)",
    "copier-progress": "within one life, totalProcessed went down or remaining went up",
    "txn-no-bounce": "a bounce scenario's bounces all came after the copiers finished (it "
                     "tested nothing)",
    "copier-overcount": "the copier's lives committed more records than its input partition "
                        "holds (a copy committed twice)",
    "txn-left-open": "the emulator's timeline: a transaction begun and never ended once every "
                     "copier finished (a hanging transaction holds the LSO back)",
    "txn-unpaired": "the emulator's timeline: a transaction ended that had not begun, or began "
                    "twice without ending",
}


def _sample(values: Iterable[Any], limit: int = 5) -> str:
    values = sorted(values, key=str)
    more = f" (+{len(values) - limit} more)" if len(values) > limit else ""
    return ", ".join(map(str, values[:limit])) + more


def exactly_once(inputs: Sequence[str], read: Sequence[str], *, who: str,
                 check_order: bool = False) -> list[Violation]:
    """``read`` (one consumer's values, in the order read) holds each of ``inputs`` once and
    nothing else (``check_order``: in the same order)."""
    out: list[Violation] = []
    counts = Counter(read)
    dups = {v: n for v, n in counts.items() if n > 1}
    if dups:
        out.append(Violation("txn-duplicate", f"{who} read {sum(dups.values()) - len(dups)} "
                             f"duplicate(s): {_sample(dups)}"))
    wanted = set(inputs)
    lost = wanted - counts.keys()
    if lost:
        out.append(Violation("txn-lost", f"{who} missed {len(lost)} of {len(wanted)} input "
                             f"record(s): {_sample(lost)}"))
    extra = counts.keys() - wanted
    if extra:
        out.append(Violation("txn-unexpected", f"{who} read {len(extra)} record(s) that are "
                             f"not input records: {_sample(extra)}"))
    if check_order and not out and list(read) != list(inputs):
        first = next(i for i, (a, b) in enumerate(zip(read, inputs, strict=True)) if a != b)
        out.append(Violation("txn-order", f"{who} read {read[first]!r} at position {first} "
                             f"where the input has {inputs[first]!r}"))
    return out


def copier_rules(copier: str, lives: Sequence[tuple[int, Mapping[str, Any]]],
                 input_count: int) -> list[Violation]:
    """The rules on one copier's events, ``(life, event)`` in the order printed."""
    out: list[Violation] = []
    last: dict[int, tuple[int, int]] = {}  # life -> (totalProcessed, remaining)
    committed: dict[int, int] = {}
    finished = False
    for life, ev in lives:
        total, remaining = int(ev.get("totalProcessed", 0)), int(ev.get("remaining", 0))
        if ev.get("stage") == "RebalanceComplete":  # group mode: the work is counted anew
            last.pop(life, None)
        before = last.get(life)
        if before is not None and (total < before[0] or remaining > before[1]):
            out.append(Violation("copier-progress", f"life {life}: totalProcessed "
                                 f"{before[0]} -> {total}, remaining {before[1]} -> "
                                 f"{remaining}", node=copier))
        last[life] = (total, remaining)
        committed[life] = max(committed.get(life, 0), total)
        if "shutdown_complete" in ev and remaining == 0:
            finished = True
    if not finished:
        out.append(Violation("copier-unfinished", f"{len(committed)} life/lives, none printed "
                             "shutdown_complete with remaining 0", node=copier))
    if sum(committed.values()) > input_count:
        out.append(Violation("copier-overcount", f"its lives committed "
                             f"{sum(committed.values())} records ({dict(committed)}) of an "
                             f"input partition of {input_count}", node=copier))
    return out


def transaction_events(events: Iterable[Mapping[str, Any]]) -> list[Violation]:
    """The server side: the timeline's TransactionBegun / TransactionEnded, in order, pair up
    per transactional id, and none is left open at the end."""
    out: list[Violation] = []
    open_since: dict[str, Any] = {}
    for e in events:
        tid = e.get("transactional_id")
        if e.get("type") == "TransactionBegun":
            if tid in open_since:
                out.append(Violation("txn-unpaired", f"{tid} began again at {e.get('at_ms')} "
                                     f"without ending the one begun at {open_since[tid]}"))
            open_since[tid] = e.get("at_ms")
        elif e.get("type") == "TransactionEnded":
            if open_since.pop(tid, None) is None:
                out.append(Violation("txn-unpaired", f"{tid} ended at {e.get('at_ms')} "
                                     f"({e.get('cause')}) with no transaction begun"))
    out += [Violation("txn-left-open", f"{tid}'s transaction begun at {at} never ended")
            for tid, at in sorted(open_since.items())]
    return out


def judge(rec: Mapping[str, Any]) -> list[Violation]:
    """Every rule on a recording (see the module doc)."""
    parts = {int(p): list(v) for p, v in rec["inputs"].items()}
    inputs = [v for p in sorted(parts) for v in parts[p]]
    check_order = bool(rec.get("check_order"))
    out = exactly_once(inputs, rec["outputs"], who="the verifying consumer",
                       check_order=check_order)
    if rec.get("concurrent") is not None:
        out += exactly_once(inputs, rec["concurrent"], who="the concurrent consumer",
                            check_order=check_order)
    where = rec.get("copier_partitions", {})
    group_mode = bool(rec.get("group_mode"))
    for copier, lives in sorted(rec.get("copiers", {}).items()):
        # subscribed copiers share every partition: bound each by the whole input
        count = len(inputs) if group_mode else len(parts.get(int(where.get(copier, 0)), []))
        out += copier_rules(copier, [(int(life), ev) for life, ev in lives], count)
    if rec.get("server") is not None:
        out += transaction_events(rec["server"])
    return out
