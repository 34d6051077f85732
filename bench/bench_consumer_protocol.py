"""Which group.consumer.heartbeat.interval.ms should kafka-emu default to? Measured, not guessed.

A consumer-protocol (KIP-848) member learns of a new target assignment only from the answer to
its next heartbeat, so a group forms and recovers in a few heartbeat intervals: Kafka's default of
5000 ms makes three consumers take seconds to share a topic where the classic protocol takes a
fraction of one. This bench times, in one run and against a fresh emulator each time:

- ``form``: three confluent-kafka consumers subscribe at once to a 6-partition topic; the time
  from the subscribes until every one owns a share and the shares cover the six partitions once;
- ``recover``: one of them closes (it leaves the group); the time until the other two own the six.

Once with ``group.protocol=classic`` (client defaults, kafka-emu's default
group.initial.rebalance.delay.ms) and once per candidate heartbeat interval with
``group.protocol=consumer`` (``default``: kafka-emu's, nothing set); the median of N runs per
cell, and the ratio to the classic median.
With node and @platformatic/kafka installed (tests/integration/node), the same shape runs with
that client's consumer protocol (its ``group848`` scenario: form, one leaves, recover, close) and
its wall time is reported per interval too. Every run must end with each partition owned once;
a run that does not is counted as failed and left out of the medians.

    python bench/bench_consumer_protocol.py [--runs 10] [--intervals default,5000,1000,500,250,100]

The default of 250 ms was chosen with ``--runs 10 --intervals 5000,1000,500,250,100,50``
(confluent-kafka 2.16.1 / librdkafka 2.16.0, 2 shared cores; classic 0.28 s to form, 3.01 s to
recover, the latter paced by librdkafka's classic heartbeat.interval.ms of 3000):

    interval   form    recover   @platformatic/kafka group848 wall (incl. node start)
    5000       5.05 s  4.99 s    11.58 s
    1000       1.07    0.99       3.27
    500        0.56    0.49       1.99
    250        0.31    0.25       1.79
    100        0.19    0.11       1.49
    50         0.10    0.04       1.57

250 is the largest candidate within 1.5x of the classic protocol's formation (the issue's target
is 2x); 500 sits at 2.0x. Formation takes about one interval plus 60 ms: the first member owns
everything until its next heartbeat tells it to give partitions up. A run of the default
afterwards (``--intervals default,5000``): classic 0.29 / 3.00 s, default 0.31 / 0.24 s (1.1x
classic to form), 5000 ms 5.04 / 5.01 s (17.6x); @platformatic/kafka 1.59 s at the default.

Not a test: it prints a table and always exits 0. The machine's load moves the figures; compare
rows of one run, not runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kafka_emu.testing import make_config, run_in_thread  # noqa: E402

NODE_DIR = ROOT / "tests" / "integration" / "node"
TOPIC = "jobs"
NODE_TOPIC = "group-topic"  # the one platformatic.mjs's group848 scenario consumes
PARTITIONS = 6
LIMIT_S = 30.0


def _owned(consumers) -> list[set[int]]:
    return [{tp.partition for tp in c.assignment()} for c in consumers]


def _settled(consumers) -> bool:
    shares = _owned(consumers)
    every = [p for share in shares for p in share]
    return all(shares) and sorted(every) == list(range(PARTITIONS))


def _wait(consumers, deadline: float) -> bool:
    while time.monotonic() < deadline:
        for c in consumers:
            c.poll(0.01)
        if _settled(consumers):
            return True
    return False


def confluent_run(bootstrap: str, protocol: str) -> dict:
    from confluent_kafka import Consumer
    conf = {"bootstrap.servers": bootstrap, "group.id": "workers", "group.protocol": protocol,
            "auto.offset.reset": "earliest", "enable.auto.commit": False}
    consumers = [Consumer(conf) for _ in range(3)]
    try:
        start = time.monotonic()
        for c in consumers:
            c.subscribe([TOPIC])
        if not _wait(consumers, start + LIMIT_S):
            return {"ok": False, "why": f"form: {_owned(consumers)}"}
        formed = time.monotonic() - start
        leaver, rest = consumers[0], consumers[1:]
        start = time.monotonic()
        leaver.close()
        consumers = rest
        if not _wait(rest, start + LIMIT_S):
            return {"ok": False, "why": f"recover: {_owned(rest)}"}
        return {"ok": True, "form": formed, "recover": time.monotonic() - start}
    finally:
        for c in consumers:
            c.close()


def platformatic_run(bootstrap: str) -> dict:
    start = time.monotonic()
    proc = subprocess.run(["node", "platformatic.mjs", "group848", bootstrap], cwd=NODE_DIR,
                          capture_output=True, text=True, timeout=120)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        return {"ok": False, "why": (proc.stderr or proc.stdout)[-300:]}
    return {"ok": True, "wall": wall}


DEFAULT = 0  # the --intervals entry "default": kafka-emu's own, nothing set


def settings_for(interval: int | None) -> dict:
    if interval is None or interval == DEFAULT:
        return {}
    # min and max widened so every candidate is allowed whatever the defaults are
    return {"group.consumer.heartbeat.interval.ms": interval,
            "group.consumer.min.heartbeat.interval.ms": 1,
            "group.consumer.max.heartbeat.interval.ms": max(15000, interval)}


def cell(runs: int, interval: int | None, client: str) -> list[dict]:
    results = []
    for _ in range(runs):
        config = make_config(settings_for(interval),
                             topics={TOPIC: PARTITIONS, NODE_TOPIC: PARTITIONS})
        try:
            with run_in_thread(config) as emu:
                if client == "platformatic":
                    results.append(platformatic_run(emu.bootstrap_servers))
                else:
                    protocol = "classic" if interval is None else "consumer"
                    results.append(confluent_run(emu.bootstrap_servers, protocol))
        except Exception as exc:  # noqa: BLE001 -- a failed run is a data point
            results.append({"ok": False, "why": repr(exc)[:300]})
    return results


def median(results: list[dict], key: str) -> float | None:
    values = [r[key] for r in results if r.get("ok")]
    return statistics.median(values) if values else None


def fmt(value: float | None, base: float | None = None) -> str:
    if value is None:
        return "     -"
    text = f"{value:6.2f}"
    if base:
        text += f" ({value / base:4.1f}x)"
    return text


def label(interval: int) -> str:
    return "consumer, default" if interval == DEFAULT else f"consumer, {interval} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--intervals", default="default,5000,1000,500,250,100")
    parser.add_argument("--json", action="store_true", help="also print every run as JSON")
    args = parser.parse_args()
    intervals = [DEFAULT if x == "default" else int(x) for x in args.intervals.split(",") if x]
    node = shutil.which("node") is not None and (NODE_DIR / "node_modules").is_dir()

    classic = cell(args.runs, None, "confluent")
    base_form, base_recover = median(classic, "form"), median(classic, "recover")
    print(f"confluent-kafka, 3 consumers, {PARTITIONS} partitions, median of {args.runs} (s)")
    print(f"{'protocol':<24}{'ok':>6}  {'form':<14}{'recover':<14}")
    ok = sum(r["ok"] for r in classic)
    print(f"{'classic':<24}{ok:>3}/{args.runs}  {fmt(base_form):<14}{fmt(base_recover):<14}")
    rows = {}
    for interval in intervals:
        results = cell(args.runs, interval, "confluent")
        rows[interval] = results
        ok = sum(r["ok"] for r in results)
        print(f"{label(interval):<24}{ok:>3}/{args.runs}  "
              f"{fmt(median(results, 'form'), base_form):<14}"
              f"{fmt(median(results, 'recover'), base_recover):<14}", flush=True)
        if args.json:
            print(json.dumps(results))
    failed = [r["why"] for rs in [classic, *rows.values()] for r in rs if not r["ok"]]
    for why in failed[:5]:
        print("  failed:", why)
    if not node:
        print("(node or tests/integration/node/node_modules missing: @platformatic/kafka skipped)")
        return 0
    print("\n@platformatic/kafka group848 (form, one leaves, recover, close), wall s incl. node start")
    for interval in intervals:
        results = cell(args.runs, interval, "platformatic")
        ok = sum(r["ok"] for r in results)
        print(f"{label(interval):<24}{ok:>3}/{args.runs}  {fmt(median(results, 'wall'))}",
              flush=True)
        for r in results:
            if not r["ok"]:
                print("  failed:", r["why"])
                break
    return 0


if __name__ == "__main__":
    sys.exit(main())
