"""Kafka's transactions system test as conformance scenarios: a transactional copier, bounced.

``tests/kafkatest/tests/core/transactions_test.py`` (TransactionsTest.test_transactions) seeds
an input topic, starts one ``TransactionalMessageCopier`` per input partition (transactional id
``copier-<i>``, one shared consumer group), bounces the copiers (SIGTERM or SIGKILL, three
rounds, each copier once it has done 20% of its work) or the brokers (each restarted in turn),
waits until every copier finished, and reads the output topic with read_committed consumers
(one reading throughout, one at the end): every input record exactly once, in order with one
partition (``check_order``). The matrix is failure mode (clean / hard) x bounce target
(clients / brokers) x check_order x use_group_metadata.

Here: the same matrix at a smaller scale (3,000 records instead of 100,000, transactions of 100
instead of 750, two bounce rounds, a three-broker cluster in one process with replication 3 so
the transaction and group coordinators move as brokers stop), plus one scenario with the
copier's ``--enable-random-aborts``. A hard broker bounce leaves the broker down longer (Kafka's
waits out the broker session, 18 s + 5 s). The copier is any program taking the contract's
flags (``--copier CMD``; the kit appends ``--bootstrap-server`` and the rest) or a built-in one
(``COPIERS``; ``NODE_COPIERS`` for kafkajs). The seed goes straight into the input logs (Kafka's
uses an idempotent VerifiableProducer); verification reads with confluent-kafka's read_committed
consumer, the kit's own (Kafka's ConsoleConsumer). Verdict rules: ``txn_verdicts.py``.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import attrs

from ..testing.emulator import make_config, run_in_thread
from . import known_bugs, txn_verdicts
from .harness import ScenarioFailed
from .record import Violation
from .txn_harness import INPUT, OUTPUT, TXN_SIZE, WAIT_S, TxnHarness

SEED = 3000  # Kafka: 100,000 (a third with check_order)
CLUSTER = {"default.replication.factor": 3, "emu.timeline.max.events": 1_000_000}

# Built-in copiers: name -> argv (the kit appends the contract's flags)
COPIERS = {"confluent-kafka": (sys.executable, "-m",
                               "kafka_emu.conformance.clients.confluent_copier"),
           "aiokafka": (sys.executable, "-m", "kafka_emu.conformance.clients.aiokafka_copier"),
           "kafka-python": (sys.executable, "-m",
                            "kafka_emu.conformance.clients.kafka_python_copier")}
# Built-in copiers that are Node scripts (clients/node.py installs kafkajs): name -> script
NODE_COPIERS = {"kafkajs": "kafkajs_copier.mjs"}


@attrs.frozen(kw_only=True)
class TxnScenario:
    name: str
    summary: str
    kafka_test: str
    bounce: str | None  # "clients", "brokers" or None
    clean: bool = True
    check_order: bool = False
    use_group_metadata: bool = True
    random_aborts: bool = False
    transaction_size: int = TXN_SIZE
    seed: int = SEED
    brokers: int = 3

    @property
    def input_partitions(self) -> int:
        return 1 if self.check_order else 2

    @property
    def output_partitions(self) -> int:
        return 1 if self.check_order else 3


TXN_CATALOGUE: dict[str, TxnScenario] = {}


def _add(**kw: Any) -> None:
    sc = TxnScenario(**kw)
    TXN_CATALOGUE[sc.name] = sc


for _mode in ("clean", "hard"):
    for _target in ("clients", "brokers"):
        for _order in (False, True):
            _name = f"txn_{_mode}_bounce_{_target}" + ("_ordered" if _order else "")
            # broker bounces wait for the copiers' progress: a longer copy keeps them inside it
            _add(name=_name, bounce=_target, clean=_mode == "clean", check_order=_order,
                 seed=SEED * 3 if _target == "brokers" else SEED,
                 kafka_test=f"TransactionsTest.test_transactions(failure_mode={_mode}_bounce, "
                            f"bounce_target={_target}, check_order={_order}, "
                            "use_group_metadata=True)",
                 summary=(f"{'SIGTERM' if _mode == 'clean' else 'SIGKILL'} each copier"
                          if _target == "clients" else
                          "stop each of three brokers in turn and start it "
                          + ("at once" if _mode == "clean" else "after 2 s down"))
                         + (", one partition in and out (order kept)" if _order else "")
                         + "; read_committed sees every record once")
_add(name="txn_hard_bounce_clients_group_id", bounce="clients", clean=False,
     use_group_metadata=False,
     kafka_test="TransactionsTest.test_transactions(failure_mode=hard_bounce, bounce_target="
                "clients, check_order=False, use_group_metadata=False)",
     summary="SIGKILL each copier, offsets sent with the group id only; every record once")
_add(name="txn_random_aborts", bounce=None, random_aborts=True, brokers=1,
     kafka_test="TransactionalMessageCopier --enable-random-aborts (no bounce)",
     summary="a third of the transactions aborted by the copier and redone; aborted copies "
             "never visible to read_committed")


def copy_transactionally(h: TxnHarness) -> list[Violation]:
    """Kafka's test body: seed, start the copiers and the concurrent consumer, bounce, wait for
    every copier to finish, read everything read_committed, judge."""
    h.seed(h.sc.seed // 3 if h.sc.check_order else h.sc.seed)
    for txn_id in h.copier_ids():
        h.start(txn_id)
    h.start_concurrent_reader()
    if h.sc.bounce == "clients":
        h.bounce_copiers()
    elif h.sc.bounce == "brokers":
        h.bounce_brokers()
    idle: list[Violation] = []
    if h.sc.bounce and not h.bounces_while_copying:
        idle = [Violation("txn-no-bounce", f"no {h.sc.bounce} bounce happened while a copier "
                          "was still copying: the scenario tested nothing")]
    for txn_id in h.copier_ids():
        h.wait_until(f"{txn_id} to copy all its records", lambda t=txn_id: h.done(t))
    total = sum(len(v) for v in h.inputs.values())
    h.wait_until("the concurrent consumer to read every record",
                 lambda: len(h.concurrent or ()) >= total)
    outputs = h.last_outputs = h.read_all(total)
    h.read_server_events()
    h._stop_reading.set()
    if h._reader is not None:
        h._reader.join(10)
    return idle + txn_verdicts.judge(h.recording(outputs))


def run_txn_scenario(sc: TxnScenario, copier: tuple[str, ...], *, client: str = "external",
                     client_version: str = "", workdir: Path | None = None,
                     wait_s: float | None = None, trace_dir: Path | None = None):
    """Run one scenario against a fresh emulator; a ``runner.Result`` (its verdict, reason,
    violations). A failed run leaves ``recording.json`` (``txn_verdicts.judge`` reads it) and
    the copiers' stderr in its directory."""
    from .runner import FAIL, PASS, Result
    started = time.monotonic()
    own_dir = workdir is None
    where = Path(tempfile.mkdtemp(prefix=f"kafka-emu-{sc.name}-")) if own_dir else \
        workdir / sc.name
    where.mkdir(parents=True, exist_ok=True)
    config = make_config({**CLUSTER, "default.replication.factor": min(3, sc.brokers)},
                         topics={INPUT: sc.input_partitions, OUTPUT: sc.output_partitions},
                         brokers=sc.brokers)
    tracing = {} if trace_dir is None else {
        "trace_dir": str(trace_dir),
        "trace_labels": {"suite": "conformance", "scenario": sc.name, "client": client,
                         "client_version": client_version}}
    violations: list[Violation] = []
    reason = ""
    try:
        with run_in_thread(config, **tracing) as emu:
            h = TxnHarness(emu, sc, copier, where, wait_s or WAIT_S)
            try:
                violations = copy_transactionally(h)
            except ScenarioFailed as exc:
                reason = str(exc)
            finally:
                h.kill_everything()
            if reason or violations:
                (where / "recording.json").write_text(json.dumps(h.recording(h.last_outputs)))
    except Exception as exc:  # the emulator or the kit failed: reported as such
        reason = f"kafka-emu error: {exc!r}\n{traceback.format_exc(limit=5)}"
    seconds = time.monotonic() - started
    verdict = FAIL if reason or violations else PASS
    if violations and not reason:
        reason = "; ".join(str(v) for v in violations[:4])
    if verdict == FAIL:
        reason += f" (copier logs in {where})"
        # a built-in copier's library bug (known_bugs.py) that explains the failure names it
        reason = known_bugs.label(known_bugs.of(client), client=client, scenario=sc.name,
                                  reason=reason, violations=violations) or reason
    elif own_dir:
        shutil.rmtree(where, ignore_errors=True)
    if trace_dir is not None:  # the verdict as a run of its own, as the consumer catalogue's
        from ..trace.writer import write_scenario_verdict
        write_scenario_verdict(trace_dir, scenario=sc.name, client=client,
                               client_version=client_version, verdict=verdict.lower(),
                               reason=reason, seconds=seconds)
    return Result(scenario=sc.name, client=client, verdict=verdict, seconds=seconds,
                  reason=reason, violations=tuple(violations))


def copier_command(name: str | None, command: str | None
                   ) -> tuple[str, tuple[str, ...], str]:
    """(client name, argv, library version) of a built-in copier or an external
    ``--copier CMD`` (version unknown: "")."""
    if command:
        return "external", tuple(shlex.split(command)), ""
    name = name or "confluent-kafka"
    if name in NODE_COPIERS:
        from .clients.node import KAFKAJS_VERSION, NodeMissing, kafkajs_command
        try:
            return name, tuple(kafkajs_command(script=NODE_COPIERS[name])), KAFKAJS_VERSION
        except NodeMissing as exc:
            raise KeyError(f"the {name} copier: {exc}") from None
    if name not in COPIERS:
        have = ", ".join([*COPIERS, *NODE_COPIERS])
        raise KeyError(f"no built-in copier {name!r} (have: {have})")
    from importlib import metadata
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        raise KeyError(f"the {name} copier needs {name}, which is not installed") from None
    return name, COPIERS[name], version


def markdown() -> str:
    """The catalogue as the reference page's table (docs/reference/conformance-scenarios.md) (``--transactions --list --markdown``)."""
    rows = ["| scenario | what it checks | Kafka's test |", "| --- | --- | --- |"]
    rows += [f"| `{sc.name}` | {sc.summary} | `{sc.kafka_test}` |"
             for sc in TXN_CATALOGUE.values()]
    return "\n".join(rows)


def run_cli(args) -> int:
    """``kafka-emu conformance --transactions``: the transactions catalogue against a built-in
    copier (``--client``) or an external one (``--copier CMD``); the same lines, summary,
    JUnit XML and exit codes as the consumer catalogue."""
    from . import runner
    if args.list and getattr(args, "markdown", False):
        print(markdown())
        return 0
    if args.list:
        for sc in TXN_CATALOGUE.values():
            print(f"{sc.name:50} {sc.summary}\n{'':50} from {sc.kafka_test}")
        return 0
    try:
        name, argv, version = copier_command(args.client, args.copier)
        unknown = [n for n in args.scenarios if n not in TXN_CATALOGUE]
        if unknown:
            raise KeyError(f"unknown transactions scenario(s): {', '.join(unknown)}")
    except KeyError as exc:
        print(f"kafka-emu conformance: error: {exc.args[0]}", file=sys.stderr)
        return 2
    chosen = [TXN_CATALOGUE[n] for n in args.scenarios] or list(TXN_CATALOGUE.values())
    print(f"kafka-emu conformance: transactions, copier {name} {version}".rstrip()
          + f", {len(chosen)} scenario(s)", flush=True)
    logs = args.trace_dir / "client-logs" / name if args.trace_dir else None
    results = []
    for sc in chosen:
        results.append(run_txn_scenario(sc, argv, client=name, client_version=version,
                                        workdir=logs, trace_dir=args.trace_dir))
        print(results[-1].line(), flush=True)
    failed = sum(r.verdict == runner.FAIL for r in results)
    print(f"{len(results) - failed} passed, {failed} failed in "
          f"{sum(r.seconds for r in results):.1f}s")
    if args.junit_xml:
        runner.junit_xml(results, args.junit_xml, suite=f"kafka-emu transactions {name}")
    return 1 if failed else 0
