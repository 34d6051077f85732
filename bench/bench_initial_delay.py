"""Which group.initial.rebalance.delay.ms should kafka-emu default to? Measured, not guessed.

For each candidate delay the quickstart's and examples' consumer programs run, unmodified (no
``consumer.topics()`` workaround), N times each against a fresh emulator, with every client the
README and the tutorial name, plus several consumers that start together:

- ``example``: examples/<client>_group.py as a subprocess (two consumers, 20 records): passes when
  it exits 0 having printed 20 distinct (partition, offset) records;
- ``quickstart``: the fixture example's test (examples/test_with_fixture.py) called in-process,
  as pytest would: passes when its assertions hold;
- ``together``: three consumers of one client subscribe at once; passes when each ends up with
  a share of the six partitions.

For every run the broker's own events give the first-join latency (first JoinGroup received to
the first generation's assignments sent) and whether the first generation held every consumer
("one generation"). A row per (scenario, delay): pass rate, one-generation rate, median and
maximum first-join latency.

    python bench/bench_initial_delay.py [--runs 5] [--delays 0,100] [--only SUBSTR]

The defaults keep `make bench` short (a few minutes); the choice of the default delay was made
with ``--runs 30 --delays 0,20,50,100,200`` and then ``--runs 200 --delays 100`` (figures in the
docs/explanation/differences-from-kafka.md). kafka-python 2 runs under .venv-kp2 (the emulator runs in that
interpreter too): ``make test`` and ``make bench`` build it with kafka-python==2.3.3 and
kafka-emu's runtime dependencies (``make .venv-kp2/.installed`` alone); without it the
kafka-python 2 scenarios are skipped with a note saying so. Each cell is a worker process
running its N runs in a row; cells run one at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
KP2 = ROOT / ".venv-kp2" / "bin" / "python"

# scenario name -> (python to run the worker under, kind, client)
SCENARIOS = {
    "example kafka-python 3": ("main", "example", "kafka_python"),
    "example kafka-python 2": ("kp2", "example", "kafka_python"),
    "example aiokafka": ("main", "example", "aiokafka"),
    "example confluent-kafka": ("main", "example", "confluent_kafka"),
    "quickstart kafka-python 3": ("main", "quickstart", "kafka_python"),
    "quickstart kafka-python 2": ("kp2", "quickstart", "kafka_python"),
    "3 together confluent-kafka": ("main", "together", "confluent_kafka"),
    "3 together kafka-python 3": ("main", "together", "kafka_python"),
    "3 together aiokafka": ("main", "together", "aiokafka"),
}
RECORD = re.compile(r"partition=(\d+) offset=(\d+)")


# -- the worker: N runs of one scenario at one delay, one JSON line per run -------------------

def _record(events: list, event: object) -> None:
    events.append((time.monotonic(), event))


def _first_join(events: list, members: int) -> tuple[float | None, bool]:
    """(ms from the first JoinGroup received to the first assignments sent, whether that first
    generation held all ``members``) from (monotonic time, event) pairs."""
    from kafka_emu.broker.events import RequestHandled
    from kafka_emu.coordinator.events import AssignmentsDistributed

    first_join = next((t - e.latency_ms / 1000 for t, e in events
                       if isinstance(e, RequestHandled) and e.api == "JoinGroup"), None)
    first_sync = next(((t, e) for t, e in events if isinstance(e, AssignmentsDistributed)), None)
    if first_join is None or first_sync is None:
        return None, False
    return (first_sync[0] - first_join) * 1000, len(first_sync[1].assignments) == members


def _run_example(client: str, bootstrap: str) -> tuple[bool, str]:
    proc = subprocess.run([sys.executable, str(EXAMPLES / f"{client}_group.py"), bootstrap],
                          capture_output=True, text=True, timeout=90)
    seen = set(RECORD.findall(proc.stdout))
    ok = proc.returncode == 0 and len(seen) == 20 and "consumed 20 messages" in proc.stdout
    return ok, "" if ok else (proc.stdout[-300:] + proc.stderr[-300:])


def _run_quickstart(emu) -> tuple[bool, str]:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import test_with_fixture
    finally:
        sys.path.pop(0)
    try:
        test_with_fixture.test_orders_are_consumed(emu)
    except AssertionError:
        import traceback
        return False, traceback.format_exc()[-300:]
    return True, ""


def _together(client: str, bootstrap: str, topic: str, group: str, n: int = 3) -> tuple[bool, str]:
    """n consumers subscribe at once; each must end up owning part of the 6 partitions."""
    deadline = time.monotonic() + 30
    if client == "confluent_kafka":
        from confluent_kafka import Consumer
        consumers = [Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                               "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
                     for _ in range(n)]
        for c in consumers:
            c.subscribe([topic])
        try:
            while time.monotonic() < deadline:
                for c in consumers:
                    c.poll(0.05)
                if all(c.assignment() for c in consumers) and \
                        sum(len(c.assignment()) for c in consumers) == 6:
                    return True, ""
            return False, f"assignments {[len(c.assignment()) for c in consumers]}"
        finally:
            for c in consumers:
                c.close()
    if client == "kafka_python":
        import threading

        from kafka import KafkaConsumer
        consumers = [KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                   session_timeout_ms=6000, heartbeat_interval_ms=500)
                     for _ in range(n)]
        done = threading.Event()

        def run(c):
            while not done.is_set() and time.monotonic() < deadline:
                c.poll(timeout_ms=50)

        threads = [threading.Thread(target=run, args=(c,)) for c in consumers]
        for t in threads:
            t.start()
        try:
            while time.monotonic() < deadline:
                sizes = [len(c.assignment()) for c in consumers]
                if all(sizes) and sum(sizes) == 6:
                    return True, ""
                time.sleep(0.02)
            return False, f"assignments {[len(c.assignment()) for c in consumers]}"
        finally:
            done.set()
            for t in threads:
                t.join()
            for c in consumers:
                c.close()
    if client == "aiokafka":
        import asyncio

        from aiokafka import AIOKafkaConsumer

        async def main():
            consumers = [AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                          session_timeout_ms=6000, heartbeat_interval_ms=500)
                         for _ in range(n)]
            await asyncio.gather(*(c.start() for c in consumers))
            try:
                while time.monotonic() < deadline:
                    await asyncio.gather(*(c.getmany(timeout_ms=50) for c in consumers))
                    sizes = [len(c.assignment()) for c in consumers]
                    if all(sizes) and sum(sizes) == 6:
                        return True, ""
                return False, f"assignments {[len(c.assignment()) for c in consumers]}"
            finally:
                await asyncio.gather(*(c.stop() for c in consumers))
        return asyncio.run(main())
    raise ValueError(client)


def worker(kind: str, client: str, delay: int, runs: int) -> None:
    sys.path.insert(0, str(ROOT))
    from kafka_emu.testing import make_config, run_in_thread

    members = {"example": 2, "quickstart": 1, "together": 3}[kind]
    topics = {"example": {"orders": 4}, "quickstart": {}, "together": {"jobs": 6}}[kind]
    for _ in range(runs):
        events: list = []
        config = make_config({"group.initial.rebalance.delay.ms": delay}, topics=topics)
        started = time.monotonic()
        try:
            with run_in_thread(config, observer=partial(_record, events)) as emu:
                if kind == "example":
                    ok, why = _run_example(client, emu.bootstrap_servers)
                elif kind == "quickstart":
                    ok, why = _run_quickstart(emu)
                else:
                    ok, why = _together(client, emu.bootstrap_servers, "jobs", "workers")
        except Exception as exc:  # noqa: BLE001 -- a failed run is a data point, not a crash
            ok, why = False, repr(exc)[:300]
        latency, one_generation = _first_join(list(events), members)
        print(json.dumps({"ok": ok, "latency_ms": latency, "one_generation": one_generation,
                          "wall_s": time.monotonic() - started, "why": why}), flush=True)


# -- the driver ------------------------------------------------------------------------------

def run_cell(name: str, delay: int, runs: int) -> list[dict]:
    where, kind, client = SCENARIOS[name]
    python = sys.executable if where == "main" else str(KP2)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([python, __file__, "--worker", kind, client, str(delay), str(runs)],
                          capture_output=True, text=True, env=env, timeout=runs * 120 + 60)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or len(results) != runs:
        sys.stderr.write(f"{name} @ {delay} ms: worker exited {proc.returncode}: "
                         f"{proc.stderr[-1500:]}\n")
    return results


def _kp2_ready() -> bool:
    """Whether .venv-kp2 can run a worker: kafka-python 2 and everything the worker imports
    (the emulator and its runtime dependencies), imported as the worker imports them."""
    if not KP2.exists():
        return False
    probe = subprocess.run([str(KP2), "-c", "import kafka, kafka_emu.testing.emulator; "
                            "assert kafka.__version__.startswith('2.')"],
                           capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return probe.returncode == 0


def row(name: str, delay: int, results: list[dict], runs: int) -> str:
    passed = sum(r["ok"] for r in results)
    one = sum(r["one_generation"] for r in results)
    lat = [r["latency_ms"] for r in results if r["latency_ms"] is not None]
    med = f"{statistics.median(lat):7.1f}" if lat else "      -"
    top = f"{max(lat):7.1f}" if lat else "      -"
    return (f"{name:<28} {delay:>6} {passed:>4}/{runs:<4} {one:>4}/{runs:<4} {med} {top}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--delays", default="0,100")
    ap.add_argument("--only", default="", help="run only scenarios whose name contains this")
    ap.add_argument("--worker", nargs=4, metavar=("KIND", "CLIENT", "DELAY", "RUNS"))
    args = ap.parse_args()
    if args.worker:
        kind, client, delay, runs = args.worker
        worker(kind, client, int(delay), int(runs))
        return 0
    delays = [int(d) for d in args.delays.split(",")]
    names = [n for n in SCENARIOS if args.only in n]
    if any(SCENARIOS[n][0] == "kp2" for n in names) and not _kp2_ready():
        print(f"skipping the kafka-python 2 scenarios: {KP2} needs kafka-python==2.3.3 and "
              "kafka-emu's runtime dependencies (make .venv-kp2/.installed builds it)")
        names = [n for n in names if SCENARIOS[n][0] != "kp2"]
    print(f"{'scenario':<28} {'delay':>6} {'pass':>9} {'one gen':>9} {'med ms':>7} {'max ms':>7}")
    failures = []
    for name in names:
        for delay in delays:
            results = run_cell(name, delay, args.runs)
            print(row(name, delay, results, args.runs), flush=True)
            failures += [(name, delay, r["why"]) for r in results if not r["ok"]]
    for name, delay, why in failures[:20]:
        print(f"  failed: {name} @ {delay} ms: {why.strip()[:200]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
