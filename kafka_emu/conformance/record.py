"""What a scenario saw: every client's events, merged into one log, and the state they imply.

Theory of operation. Each verifiable-client process prints contract events (``contract.py``);
the kit adds its own (``kit_*``: a process started, was signalled, exited; a checkpoint at which
the group must be settled). :class:`RunLog` keeps them in arrival order as :class:`Entry`
values, each naming its *node* (a consumer slot such as ``c1``, restarted any number of times,
as a machine in Kafka's system tests is) and that node's *life* (one process run).

:class:`Tracker` replays a log the way Kafka's ``VerifiableConsumer`` service does
(``ConsumerEventHandler`` per node plus the global position/commit maps) and keeps, instead of
raising, every rule it saw broken as a :class:`Violation`. The kit feeds it live to wait for
conditions ("all members joined", "the consumers reached the log end"); ``verdicts.py`` reads
its final state. Hand-made logs go through exactly the same code, which is how the checks are
tested.

Events reach the kit in the order its reader threads read them, one thread per process: under
load a process's lines can arrive after lines another process printed later. Within a process
the order is exact; across processes the tracker goes by the events' times: the committed
offset a consumption is checked against is the last one committed *before* it, and the group's
latest commit and position are the latest by time, not by arrival (a late line from the
previous owner once made a correct handover look like "consumed-behind-commit").

Every form of an event that Kafka's contract (the docstring of ``tests/kafkatest/services/
verifiable_client.py``) allows is accepted: ``records_consumed`` partitions with ``minOffset`` /
``maxOffset`` and no per-partition ``count`` (the contract's own form, and librdkafka's
``kafkatest_verifiable_client``, which also lists partitions without new records with
``minOffset: -1``), events without a ``timestamp`` (the kit's receipt time stands in), empty
polls, stdout lines that are not JSON. What the contract does not allow -- an event line that
does not parse, a field the kit needs missing or of the wrong type -- is the ``contract`` rule,
quoting the line.
"""

from __future__ import annotations

import bisect
import enum
import json
import threading
import time
from collections.abc import Iterable
from typing import Any

import attrs

# what the kit accepts from a client's stdout (re-exported: process.py and replay.py read lines)
from .lines import Malformed, int_field, list_field, parse_line, tp_of, tps  # noqa: F401

TP = tuple[str, int]
# Events printed without a client timestamp carry the kit's receipt time, which can lag by the
# reader thread's delay: across processes such times are compared with this much slack.
RECEIPT_TOLERANCE_MS = 50.0
# How far back (in event time) a late commit line is checked against reads already seen: far
# more than a starved reader thread lags.
LATE_LINES_MS = 10_000.0
KIT = "kit"  # the node name of the kit's own events that belong to no consumer (checkpoints)


class NodeState(enum.Enum):
    STARTED = "started"
    DEAD = "dead"
    REBALANCING = "rebalancing"
    JOINED = "joined"


@attrs.frozen
class Entry:
    seq: int
    node: str
    life: int
    t_ms: float  # the client's own timestamp when it printed one, else when the kit read the line
    event: dict[str, Any]
    client_stamped: bool = True
    raw: str | None = None  # the line as the client printed it (None for the kit's own events)

    @property
    def name(self) -> str:
        return self.event.get("name", "")


@attrs.frozen
class Violation:
    rule: str  # e.g. "lost-records"; stable names, see verdicts.RULES
    message: str
    node: str | None = None

    def __str__(self) -> str:
        where = f"[{self.node}] " if self.node else ""
        return f"{self.rule}: {where}{self.message}"


class RunLog:
    """The merged event log of one scenario (thread-safe append; readers take snapshots)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.entries: list[Entry] = []
        self.changed = threading.Condition(self._lock)

    def add(self, node: str, life: int, event: dict[str, Any], *, raw: str | None = None,
            received_ms: float | None = None) -> Entry:
        """Append an event; ``received_ms`` (default: now) stands in for a missing client
        timestamp (a replayed recording passes the receipt time it recorded)."""
        now_ms = time.time() * 1000 if received_ms is None else received_ms
        stamp = event.get("timestamp")
        stamped = isinstance(stamp, (int, float)) and not isinstance(stamp, bool)
        with self._lock:
            entry = Entry(len(self.entries), node, life,
                          float(stamp) if stamped else now_ms, event, stamped, raw)
            self.entries.append(entry)
            self.changed.notify_all()
        return entry

    def kit(self, node: str, life: int, name: str, **fields: Any) -> Entry:
        return self.add(node, life, {"name": f"kit_{name}", "timestamp": time.time() * 1000,
                                     **fields})  # a "timestamp" in fields wins

    def snapshot(self) -> list[Entry]:
        with self._lock:
            return list(self.entries)


@attrs.define
class NodeView:
    """Kafka's ConsumerEventHandler for one node, across its lives."""

    name: str
    state: NodeState = NodeState.DEAD
    life: int = 0
    instance_id: str | None = None
    incremental: bool = False  # cooperative assignors: assigned/revoked are deltas
    assignment: set[TP] = attrs.field(factory=set)
    position: dict[TP, int] = attrs.field(factory=dict)
    committed: dict[TP, int] = attrs.field(factory=dict)
    total_consumed: int = 0
    assigned_count: int = 0
    revoked_count: int = 0  # revocations of a non-empty assignment
    alive: bool = False  # the process runs (between kit_started and kit_exited)
    clean_exit: bool | None = None
    fenced: bool = False
    startup_seen: bool = False
    # librdkafka's client: the running count (``_totcount``) and partitions of its last
    # records_consumed line, to know the same line printed twice (Tracker._on_records_consumed)
    last_consumed: tuple[int, str] | None = None


class Tracker:
    """Replays entries into per-node and global state, collecting violations."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeView] = {}
        self.global_position: dict[TP, int] = {}
        self.global_committed: dict[TP, int] = {}
        self.consumed: dict[TP, list[tuple[int, int, int, str]]] = {}  # (min, max, count, node)
        self.violations: list[Violation] = []
        # offsets whose commit failed: (tp) -> [(last successful commit before, failed offset)]
        self.failed_commits: dict[TP, list[tuple[int, int]]] = {}
        # (node, life, tp) -> [start_ms, end_ms or None, client_stamped]
        self.ownership: list[list[Any]] = []
        self.checkpoints: list[tuple[Entry, dict[str, set[TP]]]] = []
        self.seen = 0
        self._last_max: dict[tuple[str, int, TP], int] = {}  # (node, life, tp) -> maxOffset
        # tp -> successful commits as (t_ms, seq, offset, (node, life), client_stamped), in
        # time order (see the docstring)
        self.commits: dict[TP, list[tuple[float, int, int, tuple[str, int], bool]]] = {}
        self._position_at: dict[TP, float] = {}  # when global_position was last moved
        self._reads: dict[TP, list[tuple[Entry, int]]] = {}  # (records_consumed, its minOffset)
        self._flagged: set[tuple[int, TP]] = set()
        self.repeated_lines = 0  # records_consumed lines a client printed twice (not re-reads)

    def node(self, name: str) -> NodeView:
        if name not in self.nodes:
            self.nodes[name] = NodeView(name)
        return self.nodes[name]

    def feed(self, entries: Iterable[Entry]) -> None:
        for entry in entries:
            self.seen += 1
            handler = getattr(self, "_on_" + entry.name, None)
            if handler is None:
                continue
            try:
                handler(None if entry.node == KIT else self.node(entry.node), entry)
            except Malformed as exc:
                self._contract(entry, f"{entry.name}: {exc}")

    def _contract(self, entry: Entry, message: str) -> None:
        line = entry.raw if entry.raw is not None else json.dumps(entry.event)
        self._violate("contract", f"{message}; the line: {line}", entry.node)

    def _violate(self, rule: str, message: str, node: str | None = None) -> None:
        self.violations.append(Violation(rule, message, node))

    # -- ownership intervals (for the overlap check) --------------------------------------
    def _own(self, n: NodeView, entry: Entry, partitions: Iterable[TP]) -> None:
        for tp in partitions:
            self.ownership.append([n.name, n.life, tp, entry.t_ms, None, entry.client_stamped])

    def _disown(self, n: NodeView, t_ms: float, partitions: Iterable[TP] | None = None) -> None:
        wanted = None if partitions is None else set(partitions)
        for interval in self.ownership:
            if interval[0] == n.name and interval[1] == n.life and interval[4] is None \
                    and (wanted is None or interval[2] in wanted):
                interval[4] = t_ms

    # -- kit events --------------------------------------------------------------------------
    def _on_kit_started(self, n: NodeView, e: Entry) -> None:
        n.life = e.life
        n.alive = True
        n.last_consumed = None
        n.clean_exit = None
        n.fenced = False
        n.startup_seen = False
        n.instance_id = e.event.get("instance_id")
        n.incremental = bool(e.event.get("incremental"))
        n.state = NodeState.STARTED

    def _on_kit_killed(self, n: NodeView, e: Entry) -> None:
        # Kafka's handle_kill_process: a hard kill is a shutdown without the event.
        self._dead(n, e.t_ms)

    def _on_kit_exited(self, n: NodeView, e: Entry) -> None:
        n.alive = False
        n.clean_exit = e.event.get("clean", False)
        self._dead(n, e.t_ms)

    def _on_kit_bad_line(self, n: NodeView, e: Entry) -> None:
        self._contract(e, f"a {e.event.get('event')} event that is {e.event.get('error')}")

    def _on_kit_checkpoint(self, n: NodeView, e: Entry) -> None:
        live = {name: set(v.assignment) for name, v in self.nodes.items()
                if v.state == NodeState.JOINED}
        self.checkpoints.append((e, live))

    def _dead(self, n: NodeView, t_ms: float) -> None:
        n.state = NodeState.DEAD
        n.assignment = set()
        n.position = {}
        self._disown(n, t_ms)

    # -- client events -----------------------------------------------------------------------
    def _on_startup_complete(self, n: NodeView, e: Entry) -> None:
        n.startup_seen = True
        if n.state == NodeState.DEAD and not n.alive:
            n.state = NodeState.STARTED

    def _on_shutdown_complete(self, n: NodeView, e: Entry) -> None:
        self._dead(n, e.t_ms)

    def _on_partitions_revoked(self, n: NodeView, e: Entry) -> None:
        revoked = set(tps(list_field(e.event, "partitions")))
        if revoked or n.assignment:
            n.revoked_count += 1
        if n.incremental:
            n.assignment -= revoked
            for tp in revoked:
                n.position.pop(tp, None)
            self._disown(n, e.t_ms, revoked)
        else:
            n.assignment = set()
            n.position = {}
            self._disown(n, e.t_ms)
        n.state = NodeState.REBALANCING

    def _on_partitions_assigned(self, n: NodeView, e: Entry) -> None:
        assigned = set(tps(list_field(e.event, "partitions")))
        n.assigned_count += 1
        n.state = NodeState.JOINED
        if n.incremental:
            new = assigned - n.assignment
            n.assignment |= assigned
        else:
            self._disown(n, e.t_ms)  # an assignment without a revocation replaces the old one
            new = assigned
            n.assignment = assigned
            n.position = {}
        self._own(n, e, new)

    def _on_records_consumed(self, n: NodeView, e: Entry) -> None:
        total = e.event.get("_totcount")
        if isinstance(total, int) and not isinstance(total, bool):
            line = (total, json.dumps(e.event.get("partitions"), sort_keys=True))
            if line == n.last_consumed:
                # librdkafka's kafkatest_verifiable_client prints a line twice when its SIGTERM
                # handler (writing to std::cerr, tied to std::cout) flushes the line the main
                # thread is flushing: the same partitions, and its running count unchanged, so
                # no record was read in between. Not a re-read: counted, not judged
                self.repeated_lines += 1
                return
            n.last_consumed = line
        batches = []
        for batch in list_field(e.event, "partitions"):
            tp = tp_of(batch)
            lo, hi = int_field(batch, "minOffset"), int_field(batch, "maxOffset")
            if lo < 0:  # librdkafka: listed, but nothing new since its last report
                continue
            if hi < lo:
                raise Malformed(f"{tp[0]}-{tp[1]}: maxOffset {hi} is below minOffset {lo}")
            count = int_field(batch, "count") if "count" in batch else None
            batches.append([tp, lo, hi, count])
        self._running_max(n, e, batches)
        if batches and n.state != NodeState.JOINED:
            self._violate("consumed-while-not-joined",
                          f"records consumed in state {n.state.value}", n.name)
        consumed = 0
        for tp, lo, hi, count in batches:
            count = hi - lo + 1 if count is None else count  # the contract's form: a range
            consumed += count
            if tp not in n.assignment:
                self._violate("consumed-unassigned-partition",
                              f"consumed {tp[0]}-{tp[1]} [{lo}..{hi}] while assigned "
                              f"{_fmt(n.assignment)}", n.name)
            if tp in n.position and n.position[tp] != lo:
                self._violate("consumed-out-of-order",
                              f"{tp[0]}-{tp[1]}: consumed from {lo}, expected {n.position[tp]}",
                              n.name)
            self._reads.setdefault(tp, []).append((e, lo))
            self._behind_commit(tp, e, lo)
            n.position[tp] = hi + 1
            if e.t_ms >= self._position_at.get(tp, float("-inf")):
                self.global_position[tp] = hi + 1
                self._position_at[tp] = e.t_ms
            self.consumed.setdefault(tp, []).append((lo, hi, count, n.name))
        n.total_consumed += consumed

    def _running_max(self, n: NodeView, e: Entry, batches: list[list[Any]]) -> None:
        """librdkafka's client reports as ``maxOffset`` the highest offset the process ever
        read from a partition, not this report's: after a rewind (a failed commit's records
        delivered again) it repeats the old maximum. Such a range is cut to what the report's
        total ``count`` leaves for it, when it is the only range in doubt (the kit's logs have
        no gaps: no transactions, no compaction)."""
        last = self._last_max
        doubtful = [b for b in batches if b[3] is None and last.get((n.name, n.life, b[0])) == b[2]]
        for b in batches:
            last[(n.name, n.life, b[0])] = b[2]
        total = e.event.get("count")
        if len(doubtful) != 1 or isinstance(total, bool) or not isinstance(total, int):
            return
        others = sum(b[3] if b[3] is not None else b[2] - b[1] + 1
                     for b in batches if b is not doubtful[0])
        left = total - others
        if 0 < left < doubtful[0][2] - doubtful[0][1] + 1:
            doubtful[0][2] = doubtful[0][1] + left - 1

    def _on_offsets_committed(self, n: NodeView, e: Entry) -> None:
        success = e.event.get("success")
        if not isinstance(success, bool):
            raise Malformed(f"'success' must be true or false, got {success!r}")
        items = [(tp_of(item), int_field(item, "offset"), item) for item in list_field(e.event, "offsets")]
        if not success:
            error = str(e.event.get("error", ""))
            if "FENCED_INSTANCE_ID" in error.upper() or "FENCEDINSTANCEID" in error.upper():
                n.fenced = True
        for tp, offset, item in items:
            if offset < 0:  # librdkafka: a partition with nothing to commit (-1001, INVALID)
                continue
            if not success or item.get("error"):
                before = self.global_committed.get(tp, 0)
                self.failed_commits.setdefault(tp, []).append((before, offset))
                continue
            # librdkafka commits revoked partitions inside unassign() and its verifiable client
            # prints that commit after its partitions_revoked line: a repeat of the offset this
            # node committed while it owned the partition, which nobody has moved since, takes
            # nothing from a new owner (the broker took it in the old generation).
            repeat = n.committed.get(tp) == offset == self.global_committed.get(tp)
            if tp not in n.assignment and not repeat:
                self._violate("committed-unassigned-partition",
                              f"committed {tp[0]}-{tp[1]} at {offset} while assigned "
                              f"{_fmt(n.assignment)}", n.name)
            position = n.position.get(tp, self.global_position.get(tp, 0))
            if offset > position:
                self._violate("commit-ahead-of-position",
                              f"{tp[0]}-{tp[1]}: committed {offset} but consumed only up to "
                              f"{position} (records {position}..{offset - 1} were never "
                              f"processed: lost for the group)", n.name)
            n.committed[tp] = offset
            history = self.commits.setdefault(tp, [])
            bisect.insort(history, (e.t_ms, e.seq, offset, (n.name, n.life), e.client_stamped))
            self.global_committed[tp] = history[-1][2]  # the latest by time
            # a commit whose line came late: the reads other processes made after it
            for read, lo in reversed(self._reads.get(tp, ())):
                if read.t_ms < e.t_ms - LATE_LINES_MS:
                    break
                if (read.node, read.life) != (n.name, n.life):
                    self._behind_commit(tp, read, lo)

    def _behind_commit(self, tp: TP, e: Entry, lo: int) -> None:
        committed = self.committed_before(tp, e)
        if committed is not None and lo < committed and (e.seq, tp) not in self._flagged:
            self._flagged.add((e.seq, tp))
            self._violate("consumed-behind-commit",
                          f"{tp[0]}-{tp[1]}: consumed from {lo}, but {committed} was already "
                          f"committed (records {lo}..{committed - 1} delivered again)", e.node)

    def committed_before(self, tp: TP, e: Entry) -> int | None:
        """The offset of ``tp`` last committed before ``e`` happened: by another process, a
        commit stamped earlier (by more than the receipt tolerance when either time is the
        kit's receipt time); by ``e``'s own process, any commit it printed before ``e``."""
        best = None
        for t_ms, seq, offset, committer, stamped in self.commits.get(tp, ()):
            if committer == (e.node, e.life):
                before = seq < e.seq
            else:
                margin = 0.0 if e.client_stamped and stamped else RECEIPT_TOLERANCE_MS
                before = t_ms + margin < e.t_ms
            if before and (best is None or (t_ms, seq) > best[:2]):
                best = (t_ms, seq, offset)
        return None if best is None else best[2]

    # -- queries the kit waits on ------------------------------------------------------------
    def joined(self) -> list[NodeView]:
        return [n for n in self.nodes.values() if n.state == NodeState.JOINED]

    def live(self) -> list[NodeView]:
        return [n for n in self.nodes.values() if n.alive]

    def total_consumed(self) -> int:
        return sum(n.total_consumed for n in self.nodes.values())

    def owner(self, tp: TP) -> NodeView | None:
        for n in self.nodes.values():
            if n.state == NodeState.JOINED and tp in n.assignment:
                return n
        return None


def _fmt(partitions: Iterable[TP]) -> str:
    items = sorted(partitions)
    return "[" + ", ".join(f"{t}-{p}" for t, p in items) + "]" if items else "[]"
