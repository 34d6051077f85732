"""One transactions scenario's world: the emulator, the copier processes, the verifying reads.

Theory of operation. :class:`TxnHarness` seeds the input topic straight into the emulator's
logs, starts copier lives (``copier-<i>`` copies input partition ``i``; every start is a new
life, as Kafka's service restarts its node), reads each life's JSON lines into the run log as
``copier_progress`` / ``copier_shutdown`` events (:class:`CopierProcess`), bounces copiers
(SIGTERM / SIGKILL once they made 20% progress, as Kafka's ``bounce_copiers``) or brokers (stop
and start each in turn), and reads the output topic with confluent-kafka's read_committed
consumer -- one thread reading throughout, one read at the end. It counts the bounces that hit
a copier still copying: a bounce scenario in which none did tested nothing, and fails.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..log.records import Record, build_batch
from .harness import ScenarioFailed
from .process import ClientProcess
from .record import RunLog

if TYPE_CHECKING:
    from .txn_scenarios import TxnScenario

INPUT, OUTPUT, GROUP = "input-topic", "output-topic", "transactions-test-consumer-group"
TXN_SIZE = 100  # Kafka: 750
TXN_TIMEOUT_MS = 40000  # as Kafka's test: above the request timeout
BOUNCE_ROUNDS = 2  # Kafka: 3
PROGRESS_PCT = 20.0
WAIT_S = 90.0
CLEAN_DOWN_S, HARD_DOWN_S = 0.3, 2.0


class TxnHarness:
    """One scenario's emulator, copiers and verifying consumers."""

    def __init__(self, emu: Any, sc: "TxnScenario", copier: tuple[str, ...], workdir: Path,
                 wait_s: float = WAIT_S) -> None:
        self.emu, self.sc, self.copier = emu, sc, copier
        self.workdir, self.wait_s = workdir, wait_s
        self.log = RunLog()
        self.procs: dict[str, ClientProcess] = {}
        self.lives: dict[str, int] = {}
        self.inputs: dict[int, list[str]] = {}
        self.concurrent: list[str] | None = None
        self.last_outputs: list[str] = []  # what the verifying consumer read
        self.bounces_while_copying = 0
        self.server_events: list[dict[str, Any]] | None = None  # read once the copy is done
        self._stop_reading = threading.Event()
        self._reader: threading.Thread | None = None

    # -- input ---------------------------------------------------------------------------------
    def seed(self, total: int) -> None:
        """``total`` records (values "0".."total-1") spread over the input partitions."""
        parts = self.sc.input_partitions
        self.inputs = {p: [str(i) for i in range(p, total, parts)] for p in range(parts)}
        now_wall = int(time.time() * 1000)

        def run() -> None:
            broker = self.emu.broker
            for p, values in self.inputs.items():
                log = broker.topics.partition(INPUT, p)
                for i in range(0, len(values), 500):
                    log.append(build_batch([Record(value=v.encode(), timestamp_ms=now_wall)
                                            for v in values[i:i + 500]]), broker.now_ms())
            broker.topics.notify_append()
        self.emu._call(run)

    # -- copiers -------------------------------------------------------------------------------
    def copier_ids(self) -> list[str]:
        return [f"copier-{i}" for i in range(self.sc.input_partitions)]

    def start(self, txn_id: str) -> None:
        life = self.lives.get(txn_id, 0) + 1
        self.lives[txn_id] = life
        argv = [*self.copier, "--bootstrap-server", self.emu.bootstrap_servers,
                "--transactional-id", txn_id, "--group-id", GROUP, "--input-topic", INPUT,
                "--input-partition", txn_id.rsplit("-", 1)[1], "--output-topic", OUTPUT,
                "--transaction-size", str(self.sc.transaction_size),
                "--transaction-timeout", str(TXN_TIMEOUT_MS),
                *(["--use-group-metadata"] if self.sc.use_group_metadata else []),
                *(["--enable-random-aborts"] if self.sc.random_aborts else [])]
        self.procs[txn_id] = CopierProcess(txn_id, life, argv, self.log, stderr_dir=self.workdir)

    def events(self, txn_id: str, life: int | None = None) -> list[dict[str, Any]]:
        return [e.event for e in self.log.snapshot() if e.node == txn_id
                and (life is None or e.life == life) and e.name.startswith("copier_")]

    def done(self, txn_id: str) -> bool:
        return any(ev["name"] == "copier_shutdown" and ev.get("remaining") == 0
                   for ev in self.events(txn_id))

    def progress(self, txn_id: str) -> float:
        """Percent of the current life's work done (Kafka's progress_percent)."""
        evs = self.events(txn_id, self.lives[txn_id])
        if not evs:
            return 0.0
        consumed, remaining = int(evs[-1].get("consumed", 0)), int(evs[-1].get("remaining", -1))
        if remaining < 0:
            return 0.0
        return 100.0 if consumed + remaining == 0 else 100.0 * consumed / (consumed + remaining)

    def wait_until(self, what: str, predicate: Callable[[], bool],
                   timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.wait_s)
        while not predicate():
            for txn_id, proc in self.procs.items():
                if not proc.running and not self.done(txn_id) and proc.signalled is None:
                    raise ScenarioFailed(f"{txn_id} exited (code {proc.proc.returncode}) while "
                                         f"waiting for {what}; stderr: {proc.stderr_tail(3)}")
            if time.monotonic() > deadline:
                raise ScenarioFailed(f"timed out waiting for {what} ({self.describe()})")
            with self.log.changed:
                self.log.changed.wait(0.05)

    def describe(self) -> str:
        return "; ".join(f"{t}: life {self.lives[t]}, {self.progress(t):.0f}%"
                         + (" done" if self.done(t) else "") for t in self.procs)

    def restart(self, txn_id: str) -> None:
        """Kafka's copier.restart: stop (SIGTERM or SIGKILL) and start a new life, unless done."""
        if self.done(txn_id):
            return
        proc = self.procs[txn_id]
        self.bounces_while_copying += 1
        proc.terminate() if self.sc.clean else proc.kill()
        if not proc.wait(60):
            raise ScenarioFailed(f"{txn_id} did not stop within 60s")
        if not self.sc.clean:
            self.expire_open(txn_id)
        if not self.done(txn_id):
            self.start(txn_id)

    def expire_open(self, txn_id: str) -> None:
        """A killed copier's open transaction holds its pending offsets: the next life's
        read_committed consumer waits for them (OffsetFetch require_stable) before it even
        calls InitProducerId, so on Kafka the transaction timeout (40 s in the test) ends it.
        The kit makes that timeout happen now (the control plane's expire_transaction)."""
        from ..control.ops.transactions import IdParams, expire_transaction
        broker = self.emu.broker

        def run() -> None:
            if broker.transactions.get(txn_id) is not None:
                expire_transaction(broker, IdParams(transactional_id=txn_id))
        self.emu._call(run)

    def bounce_copiers(self) -> None:
        for _ in range(BOUNCE_ROUNDS):
            for txn_id in self.copier_ids():
                self.wait_until(f"{txn_id} to make {PROGRESS_PCT:.0f}% progress",
                                lambda t=txn_id: self.done(t)
                                or self.progress(t) >= PROGRESS_PCT)
                self.restart(txn_id)

    def bounce_brokers(self) -> None:
        for i, node in enumerate([b["node_id"] for b in self.emu.brokers()], 1):
            # the i-th broker once the copiers did i x 20% (spread over the copy, as Kafka's
            # bounces land while its copiers work)
            want = min(90.0, i * PROGRESS_PCT)
            self.wait_until(f"the copiers to make {want:.0f}% progress", lambda w=want: all(
                self.done(t) or self.progress(t) >= w for t in self.copier_ids()))
            self.bounces_while_copying += not all(self.done(t) for t in self.copier_ids())
            self.emu.stop_broker(node)
            time.sleep(CLEAN_DOWN_S if self.sc.clean else HARD_DOWN_S)
            self.emu.start_broker(node)

    def kill_everything(self) -> None:
        self._stop_reading.set()
        for proc in self.procs.values():
            if proc.proc.poll() is None:
                proc.kill()
        for proc in self.procs.values():
            proc.wait(5)
        if self._reader is not None:
            self._reader.join(10)

    # -- verification --------------------------------------------------------------------------
    def read_server_events(self) -> None:
        self.server_events = [
            {k: e.get(k) for k in ("type", "at_ms", "transactional_id", "committed", "cause")}
            for e in self.emu.timeline(types=["TransactionBegun", "TransactionEnded"])]

    def start_concurrent_reader(self) -> None:
        self.concurrent = []
        self._reader = threading.Thread(target=read_committed, daemon=True,
                                        name="txn-concurrent-reader",
                                        args=(self.emu.bootstrap_servers,
                                              self.sc.output_partitions, self.concurrent,
                                              lambda: self._stop_reading.is_set()))
        self._reader.start()

    def read_all(self, expected: int) -> list[str]:
        """Read the output topic read_committed until ``expected`` records, then a quiet spell
        (so a duplicate after them is seen too)."""
        got: list[str] = []
        state = {"quiet_since": None}

        def enough() -> bool:
            if len(got) < expected:
                state["quiet_since"] = None
                return self._stop_reading.is_set()
            if state["quiet_since"] is None or state.get("n") != len(got):
                state["quiet_since"], state["n"] = time.monotonic(), len(got)
            return time.monotonic() - state["quiet_since"] > 1.0 or self._stop_reading.is_set()
        deadline = time.monotonic() + self.wait_s
        read_committed(self.emu.bootstrap_servers, self.sc.output_partitions, got,
                       lambda: enough() or time.monotonic() > deadline)
        return got

    def recording(self, outputs: list[str]) -> dict[str, Any]:
        copiers: dict[str, list] = {}
        for e in self.log.snapshot():
            if e.name.startswith("copier_"):
                copiers.setdefault(e.node, []).append(
                    [e.life, {k: v for k, v in e.event.items() if k != "name"}])
        return {"scenario": self.sc.name, "check_order": self.sc.check_order,
                "inputs": {str(p): v for p, v in self.inputs.items()}, "outputs": outputs,
                "concurrent": self.concurrent,
                "copier_partitions": {t: int(t.rsplit("-", 1)[1]) for t in self.copier_ids()},
                "copiers": copiers, "server": self.server_events}


def read_committed(bootstrap: str, partitions: int, into: list[str],
                   stop: Callable[[], bool]) -> None:
    """Append the output topic's values, read with isolation.level=read_committed from the
    beginning, to ``into`` until ``stop()``."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "verifying-consumer",
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    try:
        c.assign([TopicPartition(OUTPUT, p, 0) for p in range(partitions)])
        while not stop():
            for m in c.consume(500, 0.2):
                if m.error() is None:
                    into.append(m.value().decode())
    finally:
        c.close()


class CopierProcess(ClientProcess):
    """A copier's life: its JSON lines (Kafka's keys, no ``name``) become ``copier_progress``
    and ``copier_shutdown`` events in the run log."""

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            self.tail.append(line)
            try:
                data = json.loads(line) if line.startswith("{") else None
            except ValueError:
                data = None
            if isinstance(data, dict) and ("progress" in data or "shutdown_complete" in data):
                kind = "copier_shutdown" if "shutdown_complete" in data else "copier_progress"
                self.log.add(self.node, self.life, {"name": kind, **data}, raw=line)
        code = self.proc.wait()
        self._stderr.close()
        self.log.kit(self.node, self.life, "exited", code=code,
                     clean=(not self.killed and code == 0))
