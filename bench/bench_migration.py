"""How long does a rolling upgrade between the group protocols take on kafka-emu, end to end?

Three confluent-kafka consumers share a 6-partition topic. Each run, against a fresh emulator
(kafka-emu's defaults, ``group.consumer.migration.policy`` bidirectional as Kafka 4.x):

- ``classic restart``: each classic member in turn is closed and replaced by a new classic one
  (a rolling restart that migrates nothing, the baseline);
- ``upgrade``: each classic member in turn is replaced by a ``group.protocol=consumer`` one (the
  first converts the group to a consumer group);
- ``rollback``: each consumer-protocol member in turn is replaced by a classic one (the last
  leaving converts the group back).

A step's time runs from the close until the three clients own the six partitions once between
them; a phase's time is its three steps. The median of N runs per phase. A run whose clients are
ever seen owning a partition twice is counted as failed and left out.

    python bench/bench_migration.py [--runs 5]

Not a test: it prints a table and always exits 0. The machine's load moves the figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from confluent_kafka import Consumer  # noqa: E402

from kafka_emu.testing import make_config, run_in_thread  # noqa: E402

TOPIC = "t"
PARTITIONS = 6


def consumer(bootstrap: str, protocol: str, n: int) -> Consumer:
    conf = {"bootstrap.servers": bootstrap, "group.id": "g", "client.id": f"m{n}",
            "group.protocol": protocol, "enable.auto.commit": False,
            "auto.offset.reset": "earliest"}
    if protocol == "classic":
        conf.update({"session.timeout.ms": 10_000, "heartbeat.interval.ms": 300})
    c = Consumer(conf)
    c.subscribe([TOPIC])
    return c


def settle(members: list[Consumer], timeout: float = 60.0) -> bool:
    """Poll until the members own the six partitions once between them; False on an overlap."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        owned = []
        for c in members:
            c.poll(0.01)
            owned.append({tp.partition for tp in c.assignment()})
        flat = [p for o in owned for p in o]
        if len(flat) != len(set(flat)):
            raise RuntimeError(f"a partition owned twice: {owned}")
        if all(owned) and sorted(flat) == list(range(PARTITIONS)):
            return True
    raise RuntimeError("did not settle")


def run_once() -> dict[str, float]:
    config = make_config(topics={TOPIC: PARTITIONS})
    times: dict[str, float] = {}
    with run_in_thread(config) as emu:
        n = 0
        members = []
        for _ in range(3):
            n += 1
            members.append(consumer(emu.bootstrap_servers, "classic", n))
        settle(members)
        try:
            for phase, protocol in (("classic restart", "classic"), ("upgrade", "consumer"),
                                    ("rollback", "classic")):
                started = time.monotonic()
                for _ in range(3):
                    members.pop(0).close()
                    n += 1
                    members.append(consumer(emu.bootstrap_servers, protocol, n))
                    settle(members)
                times[phase] = time.monotonic() - started
        finally:
            for c in members:
                c.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    phases = ("classic restart", "upgrade", "rollback")
    got: dict[str, list[float]] = {p: [] for p in phases}
    failed = 0
    for _ in range(args.runs):
        try:
            for phase, seconds in run_once().items():
                got[phase].append(seconds)
        except RuntimeError as exc:
            failed += 1
            print(f"run failed: {exc}", file=sys.stderr)
    print(f"{'phase':18} {'median':>8} {'min':>8} {'max':>8}   (3 steps each, {args.runs} runs, "
          f"{failed} failed)")
    for phase in phases:
        xs = got[phase]
        if xs:
            print(f"{phase:18} {statistics.median(xs):7.2f}s {min(xs):7.2f}s {max(xs):7.2f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
