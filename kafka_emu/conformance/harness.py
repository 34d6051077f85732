"""One scenario's world: a fresh emulator, the client processes, the records, the waits.

Theory of operation. Kafka's system tests drive a ``VerifiableConsumer`` service (a set of
nodes, each running the client program) and a ``VerifiableProducer`` against a cluster, and wait
on the consumers' own events ("all members joined", "consumed 100 more"). :class:`Harness` does
the same against one in-process emulator per scenario:

- consumer nodes ``c1``, ``c2``, ... are started, stopped (SIGTERM), killed (SIGKILL) and
  restarted; every start is a new *life* with client id ``<node>.<life>``, written into the
  ``--consumer.config`` file so server events map back to the node;
- records come from the kit itself, appended straight into the emulator's partition logs (fast,
  and the consumer is what is under test); ``produce_in_background`` keeps a trickle going while
  consumers bounce, as Kafka's tests keep their producer running;
- waits read a :class:`~kafka_emu.conformance.record.Tracker` fed live from the clients' events,
  and the emulator's own view of the group; a wait that times out fails the scenario with what
  it was waiting for and what it saw;
- the emulator's timeline (requests, faults, coordinator events) is read back at the end for
  the server-side verdicts;
- time: a session expiry is made to happen *now* with the control plane's
  ``advance_to_next_deadline(kind="session")`` when the emulator has it; without it the kit
  falls back to a short session timeout and real waiting.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..log.records import Record, build_batch
from .clients import ClientSpec
from .process import STOP_TIMEOUT_S, ClientProcess
from .record import TP, NodeState, RunLog, Tracker

T = TypeVar("T")

# Fast group settings for scenarios that are not about expiry (Kafka's tests use 10-60 s).
SESSION_TIMEOUT_MS = 10000
STATIC_SESSION_TIMEOUT_MS = 60000  # Kafka's static-membership tests use 60 s
HEARTBEAT_MS = 250
REBALANCE_TIMEOUT_MS = 15000  # max.poll.interval.ms: the rebalance timeout of every client
WAIT_S = 30.0
# Broker settings of the kit's emulators: short sessions allowed (the fallback when time cannot
# be advanced); the first rebalance of a group waits a little, as Kafka's system tests configure
# (a client that joins the instant it subscribes could otherwise assign from empty metadata).
BROKER_SETTINGS = {"group.min.session.timeout.ms": 500, "group.initial.rebalance.delay.ms": 100,
                   # the server-side verdicts read the whole scenario back from the timeline
                   "emu.timeline.max.events": 1_000_000}
# With the consumer protocol (KIP-848) the session timeout and heartbeat interval are the
# broker's, not the client's: the kit's emulators take the kit's session timeout (Kafka's
# minimum, 45 s, would make the fallback of real waiting too slow); heartbeats are
# kafka-emu's default (group.consumer.heartbeat.interval.ms, 250 ms, as HEARTBEAT_MS).
CONSUMER_PROTOCOL_SETTINGS = {"group.consumer.min.session.timeout.ms": 500,
                              "group.consumer.session.timeout.ms": SESSION_TIMEOUT_MS}


class ScenarioFailed(Exception):
    """A scenario expectation that did not hold (a wait timed out, a client died...)."""


class ScenarioSkipped(Exception):
    """The scenario cannot run here; the message says why."""


class Harness:
    def __init__(self, emu: Any, client: ClientSpec, *, scenario: str, topic: str,
                 partitions: int, group: str, workdir: Path, wait_s: float = WAIT_S,
                 fail_fast: bool = True, group_protocol: str = "classic",
                 remote_assignor: str | None = None) -> None:
        self.emu = emu
        self.client = client
        self.scenario = scenario
        self.topic = topic
        self.partitions = partitions
        self.group = group
        self.workdir = workdir
        self.log = RunLog()
        self.tracker = Tracker()
        self.server_events: list[dict[str, Any]] = []  # the timeline, read at the end
        self.metrics: dict[str, float] = {}  # figures a scenario measured (for bench/)
        self.wait_s = wait_s  # how long any one wait may take before the scenario fails
        self.fail_fast = fail_fast
        # "consumer": members heartbeat with ConsumerGroupHeartbeat and the broker assigns
        # (by ``remote_assignor``, or its default); session timeouts are the broker's
        self.group_protocol = group_protocol
        self.remote_assignor = remote_assignor
        # A migration scenario starts each node on a protocol of its own (``start``'s
        # ``group_protocol``): the group is read as whichever type the emulator lists it as.
        self.migrating = False
        self.procs: dict[str, ClientProcess] = {}
        self.lives: dict[str, int] = {}
        self.node_config: dict[str, dict[str, Any]] = {}
        self._seen = 0
        self._producer: threading.Thread | None = None
        self._producing = threading.Event()
        self._sequence = itertools.count()
        # nodes whose overlap with a successor is not their fault: a fenced static member keeps
        # its partitions until its next request tells it (Kafka's zombie window)
        self.fenced_nodes: set[str] = set()

    # -- records -----------------------------------------------------------------------------
    @property
    def all_partitions(self) -> list[TP]:
        return [(self.topic, p) for p in range(self.partitions)]

    def produce(self, per_partition: int) -> None:
        """Append ``per_partition`` records to every partition (in the emulator's own thread,
        waking any consumer long-polling for them)."""
        now_wall = int(time.time() * 1000)
        start = next(self._sequence) * per_partition

        def run() -> None:
            broker = self.emu.broker
            for p in range(self.partitions):
                batch = build_batch([Record(value=f"{p}.{start + i}".encode(),
                                            timestamp_ms=now_wall) for i in range(per_partition)])
                broker.topics.partition(self.topic, p).append(batch, broker.now_ms())
            broker.topics.notify_append()
        # The kit is kafka-emu's own code: it runs this on the emulator's trio thread through the
        # handle's runner (no public "append records" operation exists; clients produce over
        # the wire, and produce_consume_validate does exactly that).
        self.emu._call(run)

    def produce_in_background(self, per_partition: int = 5, every_s: float = 0.05) -> None:
        """Keep appending while consumers come and go (Kafka's tests keep producing)."""
        self._producing.set()

        def loop() -> None:
            while self._producing.is_set():
                self.produce(per_partition)
                time.sleep(every_s)
        self._producer = threading.Thread(target=loop, name="kit-producer", daemon=True)
        self._producer.start()

    def stop_producing(self) -> None:
        self._producing.clear()
        if self._producer is not None:
            self._producer.join()
            self._producer = None

    def log_end(self) -> dict[TP, int]:
        def run():
            topics = self.emu.broker.topics
            return {(self.topic, p): topics.partition(self.topic, p).log_end_offset
                    for p in range(self.partitions)}
        return self.emu._call(run)

    # -- consumers ---------------------------------------------------------------------------
    def start(self, node: str, *, instance_id: str | None = None, autocommit: bool = False,
              session_timeout_ms: int = SESSION_TIMEOUT_MS, max_messages: int = -1,
              assignment_strategy: str | None = None, remote_assignor: str | None = None,
              extra: dict[str, Any] | None = None,
              group_protocol: str | None = None) -> ClientProcess:
        """Start (a new life of) consumer ``node``. On the consumer protocol
        ``session_timeout_ms`` and ``assignment_strategy`` are not the client's to set (as
        Kafka's VerifiableConsumer service passes neither there): the broker's session timeout
        applies and ``remote_assignor`` (or the harness's) names the broker's assignor.
        ``group_protocol`` starts this node on another protocol than the run's (migrations)."""
        if node in self.procs and self.procs[node].running:
            raise ScenarioFailed(f"{node} is already running")
        life = self.lives.get(node, 0) + 1
        self.lives[node] = life
        # The kit's settings beyond the contract's flags go as properties (the contract's
        # properties file; the client's profile may route one to a flag of its own)
        consumer_protocol = (group_protocol or self.group_protocol) == "consumer"
        assignor = remote_assignor or self.remote_assignor
        props = {"client.id": f"{node}.{life}",
                 **({} if consumer_protocol else {"heartbeat.interval.ms": HEARTBEAT_MS}),
                 # Java and librdkafka require max.poll.interval.ms >= session.timeout.ms
                 "max.poll.interval.ms": max(REBALANCE_TIMEOUT_MS, session_timeout_ms),
                 **({"group.instance.id": instance_id} if instance_id else {}),
                 **({"group.protocol": "consumer"} if consumer_protocol else {}),
                 **({"group.remote.assignor": assignor} if consumer_protocol and assignor
                    else {}),
                 **(extra or {})}
        argv = [*self.client.consumer, "--topic", self.topic, "--group-id", self.group,
                self.client.profile.bootstrap_flag, self.emu.bootstrap_servers,
                *([] if consumer_protocol else ["--session-timeout", str(session_timeout_ms)]),
                *self.client.profile.arguments("consumer", props,
                                               self.workdir / f"{node}.{life}.properties")]
        if autocommit:
            argv.append("--enable-autocommit")
        if max_messages >= 0:
            argv += ["--max-messages", str(max_messages)]
        if assignment_strategy and not consumer_protocol:  # Kafka's tests: the Java class
            argv += ["--assignment-strategy", assignment_strategy]
        self.node_config[node] = {"instance_id": instance_id}
        proc = ClientProcess(node, life, argv, self.log, stderr_dir=self.workdir,
                             meta={"instance_id": instance_id,
                                   # cooperative listeners print deltas (record.NodeView), and
                                   # so do all on the consumer protocol (KIP-848 reconciles
                                   # incrementally)
                                   "incremental": consumer_protocol
                                   or "Cooperative" in (assignment_strategy or "")})
        self.procs[node] = proc
        return proc

    def run_producer(self, node: str, max_messages: int, *, timeout: float | None = None
                     ) -> ClientProcess:
        """Run the client's verifiable producer to completion (``--max-messages``)."""
        if self.client.producer is None:
            raise ScenarioSkipped("needs a verifiable producer (give --producer CMD)")
        life = self.lives.get(node, 0) + 1
        self.lives[node] = life
        # acks=all as a property: Kafka's VerifiableProducer takes ``--acks -1``, librdkafka's
        # reads a value starting with '-' as a missing one; both read the properties file
        props = {"client.id": f"{node}.{life}", "acks": "all"}
        argv = [*self.client.producer, "--topic", self.topic, self.client.profile.bootstrap_flag,
                self.emu.bootstrap_servers, "--max-messages", str(max_messages),
                *self.client.profile.arguments("producer", props,
                                               self.workdir / f"{node}.{life}.properties")]
        proc = ClientProcess(node, life, argv, self.log, stderr_dir=self.workdir)
        self.procs[node] = proc
        proc.expected_exit = True
        if not proc.wait(self.wait_s if timeout is None else timeout):
            proc.kill()
            raise ScenarioFailed(f"the producer did not finish {max_messages} sends within "
                                 f"{self.wait_s:.0f}s; stderr: {proc.stderr_tail(2)}")
        return proc

    def stop(self, node: str, *, clean: bool = True, wait: bool = True) -> None:
        proc = self.procs[node]
        if clean:
            proc.terminate()
        else:
            proc.kill()
        if wait and not proc.wait():
            raise ScenarioFailed(f"{node} did not stop within {STOP_TIMEOUT_S:.0f}s after "
                                 f"{'SIGTERM' if clean else 'SIGKILL'}")

    def stop_all(self, *, clean: bool = True) -> None:
        for proc in self.procs.values():
            if proc.running:
                proc.terminate() if clean else proc.kill()
        for node, proc in self.procs.items():
            if not proc.wait():
                proc.kill()
                proc.wait(5)
                raise ScenarioFailed(f"{node} did not stop within 30s after SIGTERM")

    def kill_everything(self) -> None:
        """Teardown: no process outlives its scenario."""
        self.stop_producing()
        for proc in self.procs.values():
            if proc.proc.poll() is None:
                proc.kill()
        for proc in self.procs.values():
            proc.wait(5)

    # -- state and waits ---------------------------------------------------------------------
    def sync(self) -> Tracker:
        entries = self.log.snapshot()
        self.tracker.feed(entries[self._seen:])
        self._seen = len(entries)
        return self.tracker

    def wait_until(self, what: str, predicate: Callable[[], T], timeout: float | None = None,
                   expect_running: tuple[str, ...] | None = None) -> T:
        timeout = self.wait_s if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            self.sync()
            if self.tracker.violations and self.fail_fast:
                # as Kafka's event handlers assert: the first broken rule ends the scenario
                raise ScenarioFailed(f"stopped while waiting for {what}: a rule was broken")
            value = predicate()
            if value:
                return value
            for node in expect_running if expect_running is not None else self._should_run():
                proc = self.procs[node]
                if not proc.running:
                    self.sync()
                    raise ScenarioFailed(self._exited(node, proc, what))
            if time.monotonic() > deadline:
                raise ScenarioFailed(f"timed out after {timeout:.0f}s waiting for {what} "
                                     f"({self.describe()})")
            with self.log.changed:
                self.log.changed.wait(0.05)

    def _exited(self, node: str, proc: ClientProcess, what: str) -> str:
        said = f"stderr: {proc.stderr_tail(2) or '(empty)'}"
        if any(e.node == node and e.life == proc.life and not e.name.startswith("kit_")
               for e in self.log.snapshot()):
            return f"{node} exited (code {proc.proc.returncode}) while waiting for {what}; {said}"
        # Gone before a single event: most likely it refused a flag the kit passed
        return (f"{node} exited (code {proc.proc.returncode}) before printing any event, while "
                f"waiting for {what}: does it take these flags (profile "
                f"{self.client.profile.name})? argv: {' '.join(proc.argv)}; {said}")

    def _should_run(self) -> tuple[str, ...]:
        return tuple(n for n, p in self.procs.items()
                     if p.signalled is None and not p.expected_exit)

    def describe(self) -> str:
        t = self.tracker
        nodes = ", ".join(f"{n.name}:{n.state.value}{sorted(p for _t, p in n.assignment)}"
                          for n in sorted(t.nodes.values(), key=lambda n: n.name) if n.alive)
        try:
            state, count = self.group_state()
            server = f"group {state} with {count} member(s)"
        except Exception as exc:  # the emulator may be gone in teardown
            server = f"group unknown ({exc!r})"
        return f"live: {nodes or 'none'}; consumed {t.total_consumed()}; {server}"

    def group_type(self) -> str | None:
        """The group's type as ListGroups shows it ("classic", "consumer"; None: no group)."""
        return next((g.group_type for g in self.emu.list_groups() if g.group_id == self.group),
                    None)

    def _consumer_group(self) -> bool:
        if self.migrating:
            return self.group_type() == "consumer"
        return self.group_protocol == "consumer"

    def _described(self) -> Any:
        # DescribeGroups answers a consumer group GROUP_ID_NOT_FOUND ("not a classic group"),
        # as Kafka does: the consumer protocol's group is read with ConsumerGroupDescribe
        if self._consumer_group():
            return self.emu.describe_consumer_group(self.group)
        return self.emu.describe_group(self.group)

    def group_state(self) -> tuple[str, int]:
        """The group's state and member count as the emulator sees them (both protocols name
        the settled state "Stable")."""
        g = self._described()
        return g.state, len(g.members)

    def members(self) -> dict[str | None, str]:
        """group.instance.id -> member id of the group's members, as the emulator sees them."""
        g = self._described()
        if hasattr(g, "assignment_epoch"):  # a consumer group's description
            return {m.instance_id: m.member_id for m in g.members}
        return {m.group_instance_id: m.member_id for m in g.members}

    def await_members(self, count: int, *, nodes: tuple[str, ...] | None = None,
                      timeout: float | None = None) -> None:
        """``count`` consumers joined (Kafka's await_members) and the group Stable with exactly
        that many members on the emulator."""
        def settled() -> bool:
            joined = [n for n in self.tracker.joined()
                      if nodes is None or n.name in nodes]
            if len(joined) != count:
                return False
            return self.group_state() == ("Stable", count)
        self.wait_until(f"{count} member(s) joined and the group Stable", settled, timeout)

    def await_all_members(self, timeout: float | None = None) -> None:
        self.await_members(len(self._should_run()), timeout=timeout)

    def await_consumed(self, min_messages: int = 50, timeout: float | None = None) -> None:
        """The live consumers consume ``min_messages`` more (Kafka's await_consumed_messages)."""
        target = self.sync().total_consumed() + min_messages
        self.wait_until(f"{min_messages} more records consumed",
                        lambda: self.tracker.total_consumed() >= target, timeout)

    def await_every_partition_committed_again(self, timeout: float | None = None) -> None:
        """Every partition gets a new successful commit: each member goes on consuming and
        committing. Without it a scenario could drain while the member whose commit a fault
        refused had nothing new to consume, and so never commit again (the kit's consumers
        commit what each poll returned, as Kafka's VerifiableConsumer does)."""
        before = dict(self.sync().global_committed)
        self.wait_until("a new commit of every partition", lambda: all(
            self.tracker.global_committed.get(tp, -1) > before.get(tp, -1)
            for tp in self.all_partitions), timeout)

    def await_valid_assignment(self, count: int, label: str, timeout: float | None = None) -> None:
        """Wait until the joined consumers' assignments are disjoint and cover every partition,
        then record a checkpoint (the verdict checks it; a timeout records the bad state)."""
        want = set(self.all_partitions)

        def valid() -> bool:
            joined = self.tracker.joined()
            union = [tp for n in joined for tp in n.assignment]
            return len(joined) == count and len(union) == len(set(union)) and set(union) == want
        try:
            self.wait_until(f"a valid assignment over {count} consumer(s)", valid, timeout)
        finally:
            self.checkpoint(label)

    def checkpoint(self, label: str) -> None:
        self.log.kit("kit", 0, "checkpoint", label=label)
        self.sync()

    def drain(self, *, commits: bool = True, timeout: float | None = None) -> dict[TP, int]:
        """Stop producing and wait until the live consumers consumed (and, with ``commits``,
        committed) everything up to the log end. Returns the log end offsets."""
        self.stop_producing()
        ends = self.log_end()

        def done() -> bool:
            t = self.tracker
            if any(t.global_position.get(tp, 0) < end for tp, end in ends.items() if end):
                return False
            return not commits or all(t.global_committed.get(tp) == end
                                      for tp, end in ends.items() if end)
        self.wait_until("the consumers to reach the log end" + (" and commit it" if commits
                                                                 else ""), done, timeout)
        return ends

    def revocations(self) -> dict[str, int]:
        self.sync()
        return {name: n.revoked_count for name, n in self.tracker.nodes.items()}

    def node_state(self, node: str) -> NodeState:
        return self.sync().node(node).state

    # -- time and faults (the control plane) -------------------------------------------------
    def can_advance(self) -> bool:
        return hasattr(self.emu, "advance_to_next_deadline")

    def expire_sessions(self, members: int, fallback_session_ms: int) -> str:
        """Make the sessions of dead members expire now: the control plane's
        ``advance_to_next_deadline(group, kind="session")`` until the group has ``members``
        members; without it, wait out the (short) session timeout in real time."""
        if not self.can_advance():
            self.wait_until(f"the group to shrink to {members} member(s) by session expiry",
                            lambda: self.group_state()[1] <= members,
                            fallback_session_ms / 1000 + self.wait_s)
            return "waited"
        from ..control.operations import ControlError
        margin = 3 * HEARTBEAT_MS
        give_up = time.monotonic() + self.wait_s
        while time.monotonic() < give_up:
            dead = self.group_state()[1] - members
            if dead <= 0:
                return "advanced"
            # Jump only when the ``dead`` earliest session deadlines (the dead members': they
            # stopped heartbeating) lie well before the next one: the live members' deadlines
            # move on with each heartbeat, and a jump must leave them an interval to spare.
            pending = sorted(d["deadline_ms"] for d in
                             self.emu.deadlines(group_id=self.group, kind="session"))
            if len(pending) >= dead and (len(pending) == dead
                                         or pending[dead] - pending[dead - 1] >= margin):
                try:
                    self.emu.advance_to_next_deadline(group_id=self.group, kind="session")
                except ControlError:  # the deadline went (a heartbeat or a rejoin) meanwhile
                    pass
            time.sleep(0.05)
        raise ScenarioFailed(f"the group still has {self.group_state()[1]} members after "
                             f"{self.wait_s:.0f}s of advancing to session deadlines (want "
                             f"{members})")

    def add_fault(self, action: str, **rule: Any) -> int:
        """A control-plane fault rule on this scenario's group (``Emulator.add_fault``)."""
        if not hasattr(self.emu, "add_fault"):
            raise ScenarioSkipped("needs fault injection (Emulator.add_fault), which this "
                                  "kafka-emu does not have")
        return self.emu.add_fault(action, **rule)

    def await_fault(self, rule_id: int, fired: int = 1, timeout: float | None = None) -> None:
        def done() -> bool:
            rules = [r for r in self.emu.faults() if r["id"] == rule_id]
            return bool(rules) and rules[0]["fired"] >= fired
        self.wait_until(f"fault rule {rule_id} to fire {fired} time(s)", done, timeout)
