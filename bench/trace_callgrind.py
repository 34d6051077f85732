"""bench_trace.py's ``--callgrind``: instructions per request instead of time.

Wall and CPU time swing with other load on a shared machine; instructions executed do not.
``bench_trace.py --callgrind`` starts each configuration's server under valgrind's callgrind
tool (with ``--trace-children=yes``, so the trace encoder is counted on its own), sends WARMUP
requests of the kind measured, zeroes the counters of the server and the encoder, sends exactly
REQUESTS (pipelined as bench_trace sends them), waits for their trace lines to reach the file,
and dumps the counters: instructions per request in the server (what the request path pays)
and in the encoder. The trace's flush interval is the writer's own, in the instrumented
server's slowed time, so a flush's fixed cost is spread over far fewer requests than at full
speed.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tempfile
import time

import bench_trace as bt

CG_REQUESTS = int(os.environ.get("BENCH_TRACE_CG_REQUESTS", "4000"))
CG_WARMUP = int(os.environ.get("BENCH_TRACE_CG_WARMUP", "1500"))
# any of: off, seam only, seam (batches), on (jsonl), on (gzip)
CG_CONFIGS = os.environ.get("BENCH_TRACE_CG_CONFIGS", "off,seam only,on (jsonl)").split(",")


def _callgrind_totals(path: str) -> int:
    with open(path) as f:
        for line in f:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise ValueError(f"no totals in {path}")


def _control(option: str, pid: int) -> None:
    subprocess.run(["callgrind_control", option, str(pid)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)


def callgrind_run(extra: list[str] | None, out_dir: str, name: str,
                  trace_dir: str | None) -> tuple[float, float]:
    """(instructions per request in the server, in the encoder) for one configuration."""
    target = ([sys.executable, "-c", bt.SEAM_ONLY] if extra is None else
              [sys.executable, "-c", bt.SEAM_ONLY, "batches"] if extra == ["batches"] else
              [sys.executable, "-m", "kafka_emu", "serve", "--port", "0", "--log-level",
               "WARNING", "--topic", f"{bt.TOPIC}:1", *extra])
    prefix = os.path.join(out_dir, name.replace(" ", "_").replace("(", "").replace(")", ""))
    args = ["valgrind", "--tool=callgrind", "--trace-children=yes",
            f"--callgrind-out-file={prefix}.%p", *target]
    # a fixed hash seed: string hashes steer dict and set probing, and so the counts, by a few
    # per cent from one seed to another
    env = os.environ | {"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env)
    try:
        host, port = proc.stdout.readline().strip().rsplit(":", 1)
        bt.until_idle(proc.pid, busy_s=0.02)  # (valgrind's own work while the server waits)
        setup = bt._setup(host, int(port))
        bt.send_heartbeats(host, int(port), setup, CG_WARMUP)
        # (so the warm-up's flushes are not counted; the setup's own joins and sync are lines too)
        setup_lines = {"JoinGroup": 2, "SyncGroup": 1}.get(bt.KIND, 0)
        _wait_for_lines(trace_dir, setup_lines + CG_WARMUP)
        encoders = bt._children(proc.pid)
        for pid in (proc.pid, *encoders):
            _control("--zero", pid)
        bt.send_heartbeats(host, int(port), setup, CG_REQUESTS)
        _wait_for_lines(trace_dir, setup_lines + CG_WARMUP + CG_REQUESTS)
        counts = []
        for pid in (proc.pid, *encoders):
            for old in _dumps(prefix, pid):
                os.remove(old)
            _control("--dump", pid)
            counts.append(sum(_callgrind_totals(p) for p in _dumps(prefix, pid)))
        return counts[0] / CG_REQUESTS, sum(counts[1:]) / CG_REQUESTS
    finally:
        proc.terminate()
        proc.wait(timeout=120)


def _dumps(prefix: str, pid: int) -> list[str]:
    folder, base = os.path.split(prefix)
    return [os.path.join(folder, f) for f in os.listdir(folder)
            if f.startswith(f"{base}.{pid}.")]


def _wait_for_lines(trace_dir: str | None, heartbeats: int) -> None:
    """Until that many heartbeats' lines are in the trace (with none: a moment, the same
    settling time as a traced run's last flush)."""
    time.sleep(0.5)
    deadline = time.monotonic() + 300
    while trace_dir is not None and time.monotonic() < deadline and _heartbeat_lines(
            trace_dir) < heartbeats:
        time.sleep(0.1)


def _heartbeat_lines(trace_dir: str) -> int:
    count = 0
    for folder, _, files in os.walk(trace_dir):
        for f in files:
            path = os.path.join(folder, f)
            opener = gzip.open if f.endswith(".gz") else open
            try:
                with opener(path, "rb") as fh:
                    count += fh.read().count(b'"api":"%s"' % bt.KIND.encode())
            except (EOFError, OSError):  # a gzip member being written
                pass
    return count


def callgrind_main(kind: str) -> int:
    bt.KIND = kind
    print(f"== instructions per {bt.KIND} under callgrind ({CG_REQUESTS} pipelined, "
          f"after {CG_WARMUP}; {bt.CONNECTIONS} connections x {bt.IN_FLIGHT} in flight)")
    print(f"  {'tracing':<19} {'server':>9} {'ratio':>6}   {'encoder':>9} {'with encoder':>13}"
          f" {'ratio':>6}")
    keep = os.environ.get("BENCH_TRACE_CG_OUT")  # keep the counts there (callgrind_annotate)
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = keep or tmp
        os.makedirs(out_dir, exist_ok=True)
        base = None
        for i, name in enumerate(CG_CONFIGS):
            traced = name.startswith("on")
            trace_dir = os.path.join(out_dir, f"trace-{i}") if traced else None
            quiet = ["-c", "emu.timeline.max.events=0"]
            extra = (None if name == "seam only" else ["batches"] if name == "seam (batches)"
                     else quiet if not traced else
                     [*quiet, "--trace-dir", trace_dir,
                      *(["--trace-compress", "gzip"] if "gzip" in name else [])])
            server, encoder = callgrind_run(extra, out_dir, f"{name}-{i}", trace_dir)
            base = base or server
            verdict = "" if trace_dir is None else (
                "  ok" if base / server >= bt.TARGET_RATIO else "  target missed")
            print(f"  {name:<19} {server / 1e3:8.1f}k {base / server:6.3f}   "
                  f"{encoder / 1e3:8.1f}k {(server + encoder) / 1e3:12.1f}k "
                  f"{base / (server + encoder):6.3f}{verdict}", flush=True)
    print("  (throughput ratio = instructions off / instructions on; 'with encoder' adds the "
          "trace\n  encoder process's instructions, the machine's whole cost of tracing)")
    return 0
