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
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Iterable
from typing import Any

import attrs

TP = tuple[str, int]
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


def tps(items: Iterable[dict[str, Any]]) -> list[TP]:
    return [(i["topic"], int(i["partition"])) for i in items]


class RunLog:
    """The merged event log of one scenario (thread-safe append; readers take snapshots)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.entries: list[Entry] = []
        self.changed = threading.Condition(self._lock)

    def add(self, node: str, life: int, event: dict[str, Any]) -> Entry:
        now_ms = time.time() * 1000
        stamped = isinstance(event.get("timestamp"), (int, float))
        with self._lock:
            entry = Entry(len(self.entries), node, life,
                          float(event["timestamp"]) if stamped else now_ms, event, stamped)
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

    def node(self, name: str) -> NodeView:
        if name not in self.nodes:
            self.nodes[name] = NodeView(name)
        return self.nodes[name]

    def feed(self, entries: Iterable[Entry]) -> None:
        for entry in entries:
            self.seen += 1
            handler = getattr(self, "_on_" + entry.name, None)
            if handler is not None:
                handler(None if entry.node == KIT else self.node(entry.node), entry)

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
        revoked = set(tps(e.event.get("partitions", ())))
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
        assigned = set(tps(e.event.get("partitions", ())))
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
        if n.state != NodeState.JOINED:
            self._violate("consumed-while-not-joined",
                          f"records consumed in state {n.state.value}", n.name)
        total = 0
        for batch in e.event.get("partitions", ()):
            tp = (batch["topic"], int(batch["partition"]))
            lo, hi, count = int(batch["minOffset"]), int(batch["maxOffset"]), int(batch["count"])
            total += count
            if tp not in n.assignment:
                self._violate("consumed-unassigned-partition",
                              f"consumed {tp[0]}-{tp[1]} [{lo}..{hi}] while assigned "
                              f"{_fmt(n.assignment)}", n.name)
            if tp in n.position and n.position[tp] != lo:
                self._violate("consumed-out-of-order",
                              f"{tp[0]}-{tp[1]}: consumed from {lo}, expected {n.position[tp]}",
                              n.name)
            committed = self.global_committed.get(tp)
            if committed is not None and lo < committed:
                self._violate("consumed-behind-commit",
                              f"{tp[0]}-{tp[1]}: consumed from {lo}, but {committed} was already "
                              f"committed (records {lo}..{committed - 1} delivered again)", n.name)
            n.position[tp] = hi + 1
            self.global_position[tp] = hi + 1
            self.consumed.setdefault(tp, []).append((lo, hi, count, n.name))
        n.total_consumed += total

    def _on_offsets_committed(self, n: NodeView, e: Entry) -> None:
        success = e.event.get("success", False)
        if not success:
            error = str(e.event.get("error", ""))
            if "FENCED_INSTANCE_ID" in error.upper() or "FENCEDINSTANCEID" in error.upper():
                n.fenced = True
        for item in e.event.get("offsets", ()):
            tp = (item["topic"], int(item["partition"]))
            offset = int(item["offset"])
            if not success or item.get("error"):
                before = self.global_committed.get(tp, 0)
                self.failed_commits.setdefault(tp, []).append((before, offset))
                continue
            if tp not in n.assignment:
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
            self.global_committed[tp] = offset

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
