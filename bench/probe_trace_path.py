"""Where tracing's cost goes on the request path, per request kind (issue 40, item 3).

A diagnostic for ``bench_trace.py``'s ratios, not a benchmark: for a request kind (``--kind``,
as bench_trace's), it serves the same pipelined requests twice in this process -- untraced, then
with a trace writer attached as ``kafka-emu serve --trace-dir`` attaches it (its encoder is a
process of its own, as there) -- with cProfile enabled in the server's thread only, and prints
the functions whose calls per request differ between the two, with their own time per request
(cProfile's, so inflated; the calls are what to read). The client is a thread of this process
(bench_trace's ``send_heartbeats``), not profiled.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import sys
import tempfile
from functools import partial

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import trio  # noqa: E402

import bench_trace as bt  # noqa: E402


def serve_and_profile(traced: bool, count: int, warmup: int) -> pstats.Stats:
    from kafka_emu.broker.server import serve
    from kafka_emu.testing import make_config
    out: dict = {}

    async def main() -> None:
        config = make_config({"emu.timeline.max.events": 0}, topics={bt.TOPIC: 1})
        with tempfile.TemporaryDirectory() as tmp:
            async with trio.open_nursery() as nursery:
                bound = await nursery.start(partial(serve, config))
                if traced:
                    from kafka_emu.trace.writer import TraceWriter
                    TraceWriter(tmp).open().attach(bound.broker, nursery, config)
                gc.freeze()
                host, port = bound.bootstrap.rsplit(":", 1)
                token = trio.lowlevel.current_trio_token()

                def client() -> None:
                    setup = bt._setup(host, int(port))
                    bt.send_heartbeats(host, int(port), setup, warmup)
                    profiler = cProfile.Profile()
                    trio.from_thread.run_sync(profiler.enable, trio_token=token)
                    bt.send_heartbeats(host, int(port), setup, count)
                    trio.from_thread.run_sync(profiler.disable, trio_token=token)
                    out["stats"] = pstats.Stats(profiler, stream=io.StringIO())
                await trio.to_thread.run_sync(client)
                await trio.sleep(0.5)  # (the writer's last flush)
                nursery.cancel_scope.cancel()
    trio.run(main)
    return out["stats"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kind", default="Fetch", choices=bt.KINDS)
    parser.add_argument("--count", type=int, default=4000)
    parser.add_argument("--top", type=int, default=45)
    args = parser.parse_args()
    bt.KIND = args.kind
    runs = {traced: serve_and_profile(traced, args.count, 1500) for traced in (False, True)}

    def per_request(stats: pstats.Stats) -> dict:
        return {key: (st[1] / args.count, st[2] / args.count * 1e6)
                for key, st in stats.stats.items()}
    off, on = per_request(runs[False]), per_request(runs[True])
    rows = []
    for key in set(off) | set(on):
        c0, t0 = off.get(key, (0.0, 0.0))
        c1, t1 = on.get(key, (0.0, 0.0))
        if abs(c1 - c0) > 0.05 or abs(t1 - t0) > 0.3:
            rows.append((t1 - t0, c0, c1, key))
    rows.sort(reverse=True)
    print(f"== {args.kind}: per request, untraced -> traced (calls, own µs under cProfile)")
    for dt, c0, c1, (path, line, name) in rows[:args.top]:
        print(f"  {dt:+8.2f} µs  calls {c0:6.2f} -> {c1:6.2f}  {name}  "
              f"{path.replace(os.getcwd() + '/', '')}:{line}")
    for label, stats in (("untraced", off), ("traced", on)):
        print(f"  {label}: {sum(t for _, t in stats.values()):.1f} µs own time per request, "
              f"{sum(c for c, _ in stats.values()):.1f} calls")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
