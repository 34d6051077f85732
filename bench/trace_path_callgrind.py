"""Tracing's cost on the request path, in instructions: the server alone, untraced and traced.

``bench_trace.py --callgrind`` (trace_callgrind.py) runs ``kafka-emu serve`` with the writer's
own flush interval, so a flush's fixed cost falls inside the counted window at a rate that
depends on how slowly the instrumented server runs, and its untraced and traced counts have moved
past each other from run to run (a traced OffsetCommit once counted fewer instructions than an
untraced one). This counts what a request pays itself: the server runs in this file's child
process under callgrind (the trace encoder, a process of its own, natively and not counted), the
trace writer attached as ``serve --trace-dir`` attaches it but with no periodic flush inside the
window (packs still go to the encoder as ``writer.PACK_ROWS`` rows queue, as at full speed);
once the server has finished its idle loading (broker/warm.py: the server says so; judged by
its CPU use, a server starved by a busy machine looked idle while still loading, and the loading
was counted), WARMUP requests of the kind (bench_trace's ``KIND``, lock-step pipelined as
there), the server left to go idle, counters zeroed, REQUESTS more, counters dumped. Each configuration with
PYTHONHASHSEED=0 (string hashes steer dict probing, and so the counts, by a few per cent).

    .venv/bin/python bench/trace_path_callgrind.py [--kind OffsetCommit] [--requests 2000]

Prints instructions per request untraced and traced and their ratio (the issue 40 target:
>= 0.90). Takes a few minutes per kind (the interpreter runs some 50x slower under valgrind).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_trace as bt  # noqa: E402

SERVER = """
import sys, trio
from functools import partial
from kafka_emu.broker.server import serve
from kafka_emu.testing import make_config

async def main(trace_dir):
    config = make_config({"emu.timeline.max.events": 0}, topics={TOPIC: 1})
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, config))
        if trace_dir:
            from kafka_emu.trace.writer import TraceWriter
            TraceWriter(trace_dir, flush_interval_s=3600).open().attach(bound.broker, nursery,
                                                                       config)
        from kafka_emu.broker.warm import warmed
        while not warmed(bound.broker):  # (its idle loading: never inside the window)
            await trio.sleep(0.1)
        print(bound.bootstrap, flush=True)
        await trio.sleep_forever()

trio.run(main, sys.argv[1])
""".replace("TOPIC", repr(bt.TOPIC))


def _total(path: str) -> int:
    with open(path) as f:
        for line in f:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def instructions(traced: bool, requests: int, warmup: int, keep: str | None) -> float:
    """Instructions per request of the server (bt.KIND), traced or not."""
    out = tempfile.mkdtemp(prefix="cg-path-")
    trace_dir = tempfile.mkdtemp(prefix="cg-path-trace-") if traced else ""
    errors = open(os.path.join(out, "stderr"), "w+")  # (a file: a pipe nobody reads can fill)
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--trace-children=no",
         f"--callgrind-out-file={out}/cg.%p", sys.executable, "-c", SERVER, trace_dir],
        stdout=subprocess.PIPE, stderr=errors, text=True,
        env=os.environ | {"PYTHONHASHSEED": "0"})
    try:
        address = proc.stdout.readline().strip()  # type: ignore[union-attr]
        if ":" not in address:
            proc.wait(timeout=60)
            errors.seek(0)
            raise RuntimeError(f"the server did not start: {errors.read()[-2000:]}")
        host, port = address.rsplit(":", 1)
        setup = bt._setup(host, int(port))
        bt.send_heartbeats(host, int(port), setup, warmup)
        time.sleep(1.0)
        bt.until_idle(proc.pid, busy_s=0.02)
        subprocess.run(["callgrind_control", "--zero", str(proc.pid)], check=True,
                       capture_output=True)
        bt.send_heartbeats(host, int(port), setup, requests)
        subprocess.run(["callgrind_control", "--dump", str(proc.pid)], check=True,
                       capture_output=True)
        dumps = [p for p in glob.glob(f"{out}/cg.{proc.pid}.*")]
        if keep:  # for callgrind_annotate
            os.makedirs(keep, exist_ok=True)
            for p in dumps:
                shutil.copy(p, os.path.join(keep, f"{bt.KIND}-{'on' if traced else 'off'}"
                                                  f".{os.path.basename(p)}"))
        return sum(_total(p) for p in dumps) / requests
    finally:
        proc.terminate()
        proc.wait(timeout=120)
        errors.close()
        shutil.rmtree(out, ignore_errors=True)
        if trace_dir:
            shutil.rmtree(trace_dir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kind", default="OffsetCommit", choices=bt.KINDS)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=1500)
    parser.add_argument("--keep", metavar="DIR", help="keep the callgrind files here")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing measured")
        return 0
    bt.KIND = args.kind
    off = instructions(False, args.requests, args.warmup, args.keep)
    on = instructions(True, args.requests, args.warmup, args.keep)
    verdict = "ok" if off / on >= bt.TARGET_RATIO else "target missed"
    print(f"== {args.kind}: server instructions per request ({args.requests} after "
          f"{args.warmup}, {bt.CONNECTIONS} connections x {bt.IN_FLIGHT} in flight, lock step)")
    print(f"  untraced {off / 1e3:.1f}k, traced {on / 1e3:.1f}k: ratio {off / on:.3f}  {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
