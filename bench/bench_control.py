"""Control-plane benchmark (issue 9): what the timeline costs, and what advancing time saves.

1. Heartbeat throughput of ``kafka-emu serve --control-port 0`` (a subprocess) with the
   timeline recording (the default, emu.timeline.max.events=10000) and off (emu.timeline.max.events=0, nothing
   observing), measured interleaved in the same run with bench_trace's load (one member, four
   connections each keeping 64 pipelined Heartbeats in flight) and printed as ratios to "off":
   per wall second and per second of the server's own CPU time. Target: >= 0.90. A third
   configuration, "seam only" (a sink that does nothing), separates the timeline's own cost from
   the cost of building the events at all.
2. A consumer killed with SIGKILL (session.timeout.ms=45000, heartbeat.interval.ms=500): wall
   time from the kill until the survivor owns every partition, using
   ``advance_to_next_deadline(group, kind="session")`` one heartbeat interval after the kill
   (tests/integration/session_expiry.py), against the 45 s the session would take to expire
   on Kafka. Target: < 1.5 s, i.e. >= 30x sooner. Per client: confluent-kafka, kafka-python,
   aiokafka.

Not a test: it prints and always exits 0; a missed target is printed as "target missed".
"""

from __future__ import annotations

import os
import statistics
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "integration"))

from bench_trace import CONNECTIONS, IN_FLIGHT, WINDOW_S  # noqa: E402
from bench_trace import run as run_server  # noqa: E402
import session_expiry  # noqa: E402

from kafka_emu.testing import make_config, run_in_thread  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_CONTROL_ROUNDS", "3"))
TARGET_RATIO = 0.90
TARGET_REASSIGN_S = 1.5


def _verdict(ok: bool) -> str:
    return "ok" if ok else "target missed"


def serve_and_measure(max_events: int | None) -> tuple[float, float]:
    """Heartbeat throughput of a server with that timeline size (None: no timeline, but a sink
    that does nothing on the observer seam -- what building the events costs)."""
    if max_events is None:
        return run_server(None)
    return run_server(["--control-port", "0", "-c", f"emu.timeline.max.events={max_events}"])


def bench_timeline() -> None:
    configs: dict[str, int | None] = {"off": 0, "seam only": None, "on": 10000}
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
    for _ in range(ROUNDS):
        for name, max_events in configs.items():
            results[name].append(serve_and_measure(max_events))
    base_wall = statistics.median(w for w, _ in results["off"])
    base_cpu = statistics.median(c for _, c in results["off"])
    print(f"== heartbeat throughput, timeline off vs on ({CONNECTIONS} connections x {IN_FLIGHT} "
          f"in flight, {WINDOW_S:g} s x {ROUNDS} rounds, medians)")
    print(f"  {'timeline':<9} {'per wall s':>10} {'ratio':>6}   {'per CPU s':>10} {'ratio':>6}")
    on_cpu = statistics.median(c for _, c in results["on"])
    seam_cpu = statistics.median(c for _, c in results["seam only"])
    for name, values in results.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        verdict = "" if name != "on" else f"  {_verdict(cpu / base_cpu >= TARGET_RATIO)}"
        print(f"  {name:<9} {wall:10.0f} {wall / base_wall:6.2f}   {cpu:10.0f} "
              f"{cpu / base_cpu:6.2f}{verdict}")
    print(f"  the timeline's own share (on vs seam only, per CPU s): {on_cpu / seam_cpu:.2f}; the "
          "rest is building the events, which every observer (traces, logs) pays")


def bench_sigkill() -> None:
    session_s = session_expiry.SESSION_MS / 1000
    print(f"== SIGKILL -> survivor owns every partition, session.timeout.ms="
          f"{session_expiry.SESSION_MS}, with advance_to_next_deadline (Kafka: the {session_s:g} s "
          f"session, then the rebalance)")
    for client in session_expiry.CLIENTS:
        topic, group = f"bench-{uuid.uuid4().hex[:8]}", f"bench-group-{uuid.uuid4().hex[:8]}"
        with run_in_thread(make_config(topics={topic: session_expiry.PARTITIONS})) as emu:
            outcome = session_expiry.run(emu, client, group, topic)
        took = outcome.kill_to_reassigned_s
        exact = outcome.expired == [outcome.victim_id]
        print(f"  {client:<13} {took:6.2f} s  ({session_s / took:5.1f}x sooner than "
              f"{session_s:g} s; advance at {outcome.kill_to_advance_s:.2f} s; expired "
              f"{'exactly the killed member' if exact else outcome.expired})  "
              f"{_verdict(took < TARGET_REASSIGN_S and exact)}")


def main() -> int:
    bench_timeline()
    bench_sigkill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
