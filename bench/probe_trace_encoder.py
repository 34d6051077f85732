"""What the trace encoder running beside the server costs the server's CPU time (issue 40, item 3).

A diagnostic for ``bench_trace.py``'s time figures, not a benchmark. By instruction counts a
traced request costs the server about what an untraced one does (0.93-1.04); by CPU time it
measured less. This measures bench_trace's window (``--kind`` as there) in three configurations,
interleaved, ROUNDS times: tracing off; on; and on with the trace encoder process stopped
(SIGSTOP) for the window -- the server then does all its own tracing work (queueing, packing,
writing to the pipe until it is full, then keeping the messages), but no other process formats
lines meanwhile. What "on" costs beyond "on, encoder stopped" is not work of the server's: it is
what sharing the machine's CPUs and caches with the encoder costs it (on two cores, a third busy
process preempts the server, which then refills its caches). Printed per configuration: the
server's CPU per request (schedstat), its time waiting for a CPU while runnable, its context
switches, and the ratios to "off".

    .venv/bin/python bench/probe_trace_encoder.py [--kind Heartbeat] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_trace as bt  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kind", default="Heartbeat", choices=bt.KINDS)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    bt.KIND = args.kind
    stopping = [False]
    stopped: list[int] = []
    settle, measure = bt.settle, bt.heartbeats_per_s

    def settle_then_stop(pid: int) -> None:
        settle(pid)
        if stopping[0]:
            for child in bt._children(pid):
                os.kill(child, signal.SIGSTOP)
                stopped.append(child)

    def measure_then_continue(*a, **k):
        try:
            return measure(*a, **k)
        finally:
            for child in stopped:
                os.kill(child, signal.SIGCONT)
            stopped.clear()
    bt.settle, bt.heartbeats_per_s = settle_then_stop, measure_then_continue
    quiet = ["-c", "emu.timeline.max.events=0"]
    with tempfile.TemporaryDirectory() as tmp:
        configs = {"off": (quiet, False), "on": ([*quiet, "--trace-dir", tmp], False),
                   "on, encoder stopped": ([*quiet, "--trace-dir", tmp], True)}
        samples: dict[str, list[bt.Sample]] = {name: [] for name in configs}
        for _ in range(args.rounds):
            for name, (extra, stop) in configs.items():
                stopping[0] = stop
                bt.run(extra)
                assert bt.last_sample is not None
                samples[name].append(bt.last_sample)
    print(f"== {args.kind}: server CPU per request with the trace encoder running or stopped "
          f"({args.rounds} rounds interleaved, medians)")
    print(f"  {'tracing':<21} {'server µs':>9} {'ratio':>6} {'paired':>6} {'queued µs':>9}"
          f" {'waits':>6} {'preempt':>7}")
    base = [s.per_request_us(s.server) for s in samples["off"]]
    for name, values in samples.items():
        us = [s.per_request_us(s.server) for s in values]
        print(f"  {name:<21} {statistics.median(us):9.2f} "
              f"{statistics.median(base) / statistics.median(us):6.2f} "
              f"{statistics.median(b / u for b, u in zip(base, us)):6.2f} "
              f"{statistics.median(s.server.queued_ns / 1e3 / s.requests for s in values):9.2f} "
              f"{statistics.median(s.server.waits * 1e3 / s.requests for s in values):6.1f} "
              f"{statistics.median(s.server.preempted * 1e3 / s.requests for s in values):7.1f}")
    print("  (queued µs: runnable but waiting for a CPU, per request; waits, preempt: voluntary "
          "and\n  involuntary context switches per 1000 requests)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
