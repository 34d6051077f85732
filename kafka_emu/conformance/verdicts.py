"""The checks a scenario's verdict is made of: from the clients' own events, as Kafka's system
tests check them, and from what the emulator saw (the server-side rules).

Client-side (read from a :class:`~kafka_emu.conformance.record.Tracker` that replayed the run):

- the per-event rules the tracker applies while replaying (records consumed only while joined
  and only from assigned partitions, contiguously; commits only for assigned partitions and never
  ahead of what was consumed; nothing consumed from below an offset already committed) --
  Kafka's ``ConsumerEventHandler`` assertions;
- :func:`no_overlap`: no partition owned by two live consumers at once (from the assigned /
  revoked / killed times, and the time the emulator removed the member: ``departures``);
- :func:`valid_assignments`: at every settled checkpoint the joined consumers' assignments are
  disjoint and cover every partition (Kafka's ``valid_assignment``);
- :func:`no_loss`: every offset below the log end was consumed at least once;
- :func:`no_duplicates`: total consumed == distinct offsets consumed, Kafka's "total consumed ==
  current position" for runs with clean shutdowns only;
- :func:`final_commits`: the last successful commit of each partition equals its position
  (Kafka checks this when auto-commit is off);
- :func:`revocations`: static members do not revoke while others bounce (dynamic ones do).

Server-side (read from the emulator's timeline, ``Emulator.timeline()``; in
``timeline_rules.py``):

- :func:`server_rules`: every generation's assignment disjoint and covering; a member that was
  told its generation or member id is gone (ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID) and commits
  or heartbeats with it again instead of rejoining; any request from a member id after it was
  fenced (FENCED_INSTANCE_ID); a still-connected client's member removed because it did not
  rejoin within the rebalance timeout. On the consumer protocol, which has no generations,
  the same from its events: every epoch's target assignment disjoint and covering, no partition
  owned by two members at once (assigned before its owner revoked it), no commit from a member
  told FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID before it heartbeats again.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .record import RECEIPT_TOLERANCE_MS, TP, Entry, Tracker, Violation, _fmt
# the server-side rules live beside the timeline reading they need; the runner finds them here
from .timeline_rules import SERVER_EVENT_TYPES, departures, server_rules  # noqa: F401

RULES = {
    "consumed-while-not-joined": "records consumed while the consumer had no assignment",
    "consumed-unassigned-partition": "records consumed from a partition not assigned",
    "consumed-out-of-order": "a consumer skipped or re-read offsets within one assignment",
    "consumed-behind-commit": "records below an already committed offset delivered again",
    "committed-unassigned-partition": "an offset committed for a partition not assigned",
    "commit-ahead-of-position": "an offset committed beyond what was consumed (records lost)",
    "overlapping-assignment": "a partition owned by two consumers at once",
    "invalid-assignment": "a settled group whose assignments overlap or leave partitions out",
    "lost-records": "records never consumed",
    "duplicate-records": "records consumed more than once after clean shutdowns",
    "final-commit-mismatch": "the last commit is not the consumed position",
    "static-member-revoked": "a static member revoked partitions while others bounced",
    "dynamic-member-not-revoked": "dynamic members never revoked while others bounced",
    "stale-generation-after-told": "commit/heartbeat with a generation, member epoch or member "
                                   "id the member had already been told was gone",
    "request-after-fencing": "a request from a member id after FENCED_INSTANCE_ID",
    "assigned-before-revoked": "consumer protocol: a partition owned by two members at once "
                               "(the coordinator assigned it before its owner revoked it)",
    "no-rejoin-within-rebalance-timeout": "a live member removed for not rejoining in time",
    "producer-send-error": "the verifiable producer reported failed sends",
    "producer-acks": "acknowledgements missing, repeated, or not matching the log",
    "scenario": "the scenario's own expectation (waits, exits, group state)",
    "contract": "an event line that breaks the client contract (not JSON, a field missing or "
                "of the wrong type); the reason quotes the line",
}

# Events printed with the kit's receipt time instead of the client's own timestamp can arrive a
# little out of order across processes; overlaps shorter than RECEIPT_TOLERANCE_MS (record.py)
# are not reported for them.


# What a fenced static member does between being replaced and learning it (its next request):
# Kafka's zombie window, not the client's fault.
ZOMBIE_RULES = {"consumed-behind-commit"}


def stream_rules(tracker: Tracker, *, fenced: Iterable[str] = ()) -> list[Violation]:
    """The rules the tracker applied event by event (see ``record.Tracker``)."""
    fenced = set(fenced)
    return [v for v in tracker.violations if not (v.node in fenced and v.rule in ZOMBIE_RULES)]


def no_overlap(tracker: Tracker, *, fenced: Iterable[str] = (),
               left: Mapping[str, Sequence[float]] | None = None) -> list[Violation]:
    """No partition is owned by two node lives at once. Ownership ends at the first of: the
    revocation, ``shutdown_complete``, the kill, and the moment the emulator removed the
    life's member from the group (``left``: ``departures()``, keyed by the life's client id
    ``<node>.<life>``; see ``timeline_rules.departures``) -- a consumer that sent LeaveGroup
    owns nothing from then on, whenever it prints its last line. Client timestamps order events
    across processes; ms truncation never creates an overlap, so the comparison is strict. A
    ``fenced`` node's ownership is not held against it: Kafka hands a static member's
    partitions to the process that took over its instance id, and the old one learns it was
    fenced only from its next request."""
    fenced = set(fenced)
    left = left or {}
    out = []
    by_tp: dict[TP, list[list[Any]]] = {}
    for interval in tracker.ownership:
        by_tp.setdefault(interval[2], []).append(interval)
    for tp, intervals in sorted(by_tp.items()):
        intervals.sort(key=lambda i: i[3])
        for i, a in enumerate(intervals):
            a_end = _ownership_end(a, left.get(f"{a[0]}.{a[1]}", ()))
            for b in intervals[i + 1:]:
                if (a[0], a[1]) == (b[0], b[1]) or a[0] in fenced:
                    continue
                tolerance = 0.0 if (a[5] and b[5]) else RECEIPT_TOLERANCE_MS
                if b[3] + tolerance < a_end:
                    out.append(Violation(
                        "overlapping-assignment",
                        f"{tp[0]}-{tp[1]} assigned to {b[0]} while {a[0]} still owned it "
                        f"({'until it stopped' if a_end == float('inf') else f'{a_end - b[3]:.0f} ms'})",
                        b[0]))
    return out


def _ownership_end(interval: list[Any], removals: Sequence[float]) -> float:
    """The end of one ownership interval: its own end (client events), or the first time after
    it began that the emulator removed the member, whichever came first."""
    end = interval[4] if interval[4] is not None else float("inf")
    removed = min((t for t in removals if t >= interval[3]), default=float("inf"))
    return min(end, removed)


def valid_assignments(tracker: Tracker, partitions: Sequence[TP]) -> list[Violation]:
    """At each kit checkpoint (the group was settled) the joined consumers' assignments are
    disjoint and together cover every partition."""
    out = []
    want = set(partitions)
    for entry, live in tracker.checkpoints:
        label = entry.event.get("label", f"checkpoint {entry.seq}")
        seen: dict[TP, str] = {}
        for node, assigned in sorted(live.items()):
            for tp in assigned:
                if tp in seen:
                    out.append(Violation("invalid-assignment",
                                         f"{label}: {tp[0]}-{tp[1]} assigned to both "
                                         f"{seen[tp]} and {node}"))
                seen[tp] = node
        missing = want - set(seen)
        if missing:
            out.append(Violation("invalid-assignment",
                                 f"{label}: {_fmt(missing)} assigned to nobody "
                                 f"(joined: {', '.join(sorted(live)) or 'none'})"))
    return out


def _covered(ranges: Iterable[tuple[int, int, int, str]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for lo, hi, _count, _node in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return [(a, b) for a, b in merged]


def no_loss(tracker: Tracker, log_end: Mapping[TP, int], log_start: Mapping[TP, int] | None = None
            ) -> list[Violation]:
    """Every offset in [log start, log end) of every partition was consumed at least once."""
    out = []
    for tp, end in sorted(log_end.items()):
        start = (log_start or {}).get(tp, 0)
        if end <= start:
            continue
        gaps = []
        cursor = start
        for lo, hi in _covered(tracker.consumed.get(tp, ())):
            if lo > cursor:
                gaps.append((cursor, min(lo, end) - 1))
            cursor = max(cursor, hi + 1)
            if cursor >= end:
                break
        if cursor < end:
            gaps.append((cursor, end - 1))
        gaps = [(a, b) for a, b in gaps if a <= b]
        if gaps:
            lost = sum(b - a + 1 for a, b in gaps)
            shown = ", ".join(f"{a}..{b}" for a, b in gaps[:5])
            out.append(Violation("lost-records", f"{tp[0]}-{tp[1]}: {lost} record(s) never "
                                 f"consumed (offsets {shown}; log end {end})"))
    return out


def no_duplicates(tracker: Tracker, *, excuse_failed_commits: bool = False,
                  ignore_nodes: Iterable[str] = ()) -> list[Violation]:
    """Total consumed equals the distinct offsets consumed (what Kafka's tests check as
    ``total_consumed == current_position`` after clean shutdowns).

    With ``excuse_failed_commits`` a record consumed again is allowed when a commit covering it
    failed (e.g. REBALANCE_IN_PROGRESS): at-least-once delivery then *requires* redelivery.
    ``ignore_nodes`` leaves out what those nodes consumed (a fenced zombie's reads)."""
    out = []
    ignored = set(ignore_nodes)
    for tp, all_ranges in sorted(tracker.consumed.items()):
        ranges = [r for r in all_ranges if r[3] not in ignored]
        total = sum(count for _lo, _hi, count, _node in ranges)
        distinct = sum(b - a + 1 for a, b in _covered(ranges))
        if total <= distinct:
            continue
        if excuse_failed_commits:
            excused = _covered([(lo, hi - 1, 0, "") for lo, hi in
                                tracker.failed_commits.get(tp, ()) if hi > lo])
            repeated = _repeated_offsets(ranges)
            unexcused = [o for o in repeated if not any(a <= o <= b for a, b in excused)]
            if not unexcused:
                continue
            out.append(Violation("duplicate-records",
                                 f"{tp[0]}-{tp[1]}: {len(unexcused)} record(s) consumed twice "
                                 f"although no failed commit covered them (e.g. offset "
                                 f"{unexcused[0]})"))
            continue
        out.append(Violation("duplicate-records",
                             f"{tp[0]}-{tp[1]}: {total} records consumed, {distinct} distinct "
                             f"({total - distinct} duplicate(s){_repeats(ranges)})"))
    return out


def _repeated_offsets(ranges: list[tuple[int, int, int, str]]) -> list[int]:
    seen: dict[int, int] = {}
    for lo, hi, _count, _node in ranges:
        for offset in range(lo, hi + 1):
            seen[offset] = seen.get(offset, 0) + 1
    return sorted(o for o, c in seen.items() if c > 1)


def _repeats(ranges: list[tuple[int, int, int, str]]) -> str:
    ordered = sorted(ranges)
    for (_lo1, hi1, _c1, n1), (lo2, hi2, _c2, n2) in itertools.pairwise(ordered):
        if lo2 <= hi1:
            return f", e.g. {lo2}..{min(hi1, hi2)} by {n1} then {n2}"
    return ""


def final_commits(tracker: Tracker, log_end: Mapping[TP, int]) -> list[Violation]:
    """The last successful commit of each partition with records equals the log end (all was
    consumed and committed): Kafka's ``last_commit == current_position``."""
    out = []
    for tp, end in sorted(log_end.items()):
        if end == 0:
            continue
        committed = tracker.global_committed.get(tp)
        if committed != end:
            out.append(Violation("final-commit-mismatch",
                                 f"{tp[0]}-{tp[1]}: last commit {committed}, consumed position "
                                 f"{tracker.global_position.get(tp)}, log end {end}"))
    return out


def revocations(tracker: Tracker, nodes: Iterable[str], baseline: Mapping[str, int], *,
                static: bool) -> list[Violation]:
    """Kafka's ``num_revokes_for_alive``: static members kept alive revoke nothing while the
    others bounce; dynamic ones do (a rebalance per bounce)."""
    counts = {n: tracker.node(n).revoked_count - baseline.get(n, 0) for n in nodes}
    if static:
        return [Violation("static-member-revoked", f"revoked partitions {c} time(s) while the "
                          f"other members bounced", n) for n, c in sorted(counts.items()) if c]
    if counts and not any(counts.values()):
        return [Violation("dynamic-member-not-revoked",
                          f"{', '.join(sorted(counts))} never revoked while the others bounced "
                          f"(a dynamic group must rebalance)")]
    return []


def producer_delivery(entries: Sequence[Entry], node: str, sent: int,
                      log_end: Mapping[TP, int]) -> list[Violation]:
    """Kafka's VerifiableProducer checks: every send acknowledged once (``acks=-1`` against a
    healthy broker: no ``producer_send_error``), offsets unique per partition, and the log holds
    exactly what was acknowledged (each partition's log end == its acknowledged sends, from 0),
    then ``shutdown_complete``."""
    mine = [e for e in entries if e.node == node]
    acked = [e.event for e in mine if e.name == "producer_send_success"]
    errors = [e.event for e in mine if e.name == "producer_send_error"]
    out = []
    if errors:
        first = errors[0]
        out.append(Violation("producer-send-error", f"{len(errors)} send(s) failed, e.g. "
                             f"{first.get('exception')}: {first.get('message')}", node))
    values = [a.get("value") for a in acked]
    if len(acked) != sent or len(set(values)) != len(values):
        out.append(Violation("producer-acks", f"{len(acked)} acknowledgements ({len(set(values))} "
                             f"distinct values) for {sent} sends", node))
    offsets: dict[TP, list[int]] = {}
    for a in acked:
        offsets.setdefault((a["topic"], int(a["partition"])), []).append(int(a["offset"]))
    for tp, end in sorted(log_end.items()):
        got = sorted(offsets.get(tp, ()))
        if got != list(range(end)):
            out.append(Violation("producer-acks", f"{tp[0]}-{tp[1]}: the log ends at {end} but "
                                 f"the acknowledged offsets are {_ranges(got)}", node))
    if not any(e.name == "shutdown_complete" for e in mine):
        out.append(Violation("producer-acks", "no shutdown_complete", node))
    return out


def _ranges(offsets: list[int]) -> str:
    if not offsets:
        return "none"
    parts, start, prev = [], offsets[0], offsets[0]
    for o in offsets[1:] + [None]:
        if o is None or o != prev + 1:
            parts.append(f"{start}" if start == prev else f"{start}..{prev}")
            if o is not None:
                start = o
        if o is not None:
            prev = o
    return ", ".join(parts[:6]) + (" ..." if len(parts) > 6 else "")
