"""What observation costs per request, counted in machine instructions (issue 9 / 14 item 3).

Time on a shared machine swings more than the effect being measured, so this counts the
instructions the server process executes under valgrind's callgrind, which does not depend on
the machine's load. For each configuration a ``kafka-emu serve`` process runs under callgrind; a
classic group of MEMBERS members forms over the wire (bench_wire's driver), then WARM pipelined
Heartbeats (CONNECTIONS connections each writing IN_FLIGHT at once, in lock-step rounds) fill
the timeline, the counters are zeroed, MEASURED more are answered, and the counters are dumped: instructions per request is
that dump's total over MEASURED. The ratio "throughput vs off" is off's count over the
configuration's (instructions are what a CPU-bound server spends its time on).

Configurations: ``off`` (emu.timeline.max.events=0, nothing observing), ``on`` (the timeline
recording, its default size), and with ``--trace`` also ``trace`` (timeline off, traces written).

    python bench/callgrind_observe.py [--configs off,on] [--warm 6000] [--measured 4000]

Takes a few minutes (the interpreter under valgrind runs ~50x slower). Not a test: it prints
and exits 0; ``--profile DIR`` keeps the callgrind files for callgrind_annotate.
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

from bench_wire import TOPIC, Link, Server, form_group, member_frames, pump  # noqa: E402

MEMBERS = 100
CONNECTIONS, IN_FLIGHT = 8, 16
TARGET_RATIO = 0.90

CONFIGS = {
    # (the timeline records only while a control endpoint could read it)
    "off": ["--control-port", "0", "-c", "emu.timeline.max.events=0"],
    "on": ["--control-port", "0"],  # the timeline at its default size
    "trace": ["--control-port", "0", "-c", "emu.timeline.max.events=0", "--trace-dir", "{tmp}"],
}


def _serve(extra: list[str], out_dir: str, seed: str) -> Server:
    args = ["valgrind", "--tool=callgrind", "--quiet",
            f"--callgrind-out-file={out_dir}/callgrind.out.%p",
            sys.executable, "-m", "kafka_emu", "serve", "--port", "0", "--log-level", "ERROR",
            "--topic", f"{TOPIC}:1", "-c", "group.initial.rebalance.delay.ms=3000",
            "-c", "connections.max.idle.ms=3600000", "-c", "group.max.session.timeout.ms=3600000",
            *extra]
    # str hashes steer dict and set probing: counts move by several per cent between hash
    # seeds, so every configuration of one run uses the same seed
    os.environ["PYTHONHASHSEED"] = seed
    try:
        return Server("kafka-emu under callgrind", args)
    finally:
        del os.environ["PYTHONHASHSEED"]


def _answer(server: Server, frames: list[bytes], total: int) -> None:
    """Answer ``total`` requests in lock-step rounds: each of CONNECTIONS connections writes
    IN_FLIGHT requests at once, and the next round starts when every answer is in. So every
    read the server makes holds the same batch of requests whatever the timing, and the count
    per request does not move with how reads happened to split (a free-running pipeline's
    did, by about a per cent)."""
    links = [Link(server.address) for _ in range(CONNECTIONS)]
    state = {"answered": 0}

    def on_frame(link: Link, frame: bytes) -> None:
        state["answered"] += 1

    sent = 0
    try:
        while sent < total:
            for link in links:
                batch = [frames[(sent + i) % len(frames)] for i in range(IN_FLIGHT)]
                link.send(b"".join(batch))
                sent += IN_FLIGHT
            pump(links, on_frame, lambda: state["answered"] >= sent, limit_s=600)
    finally:
        for link in links:
            link.close()


def _control(pid: int, option: str) -> None:
    subprocess.run(["callgrind_control", option, str(pid)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _total(path: str) -> int:
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError(f"no total in {path}")


def measure(name: str, warm: int, measured: int, keep: str | None, seed: str = "0") -> float:
    """Instructions per Heartbeat of configuration ``name``."""
    out_dir = tempfile.mkdtemp(prefix="cg-")
    trace_dir = tempfile.mkdtemp(prefix="cg-trace-")
    try:
        extra = [a.replace("{tmp}", trace_dir) for a in CONFIGS[name]]
        with _serve(extra, out_dir, seed) as server:
            group = form_group(server, "bench-cg", MEMBERS)
            # session 300 s (form_group): no member expires while valgrind runs slowly
            frames = member_frames("Heartbeat", group)
            _answer(server, frames, warm)
            time.sleep(0.5)  # let the deferred delivery and any flush run before zeroing
            _control(server.proc.pid, "--zero")
            _answer(server, frames, measured)
            _control(server.proc.pid, "--dump")
            group.close()
            dumps = sorted(glob.glob(f"{out_dir}/callgrind.out.*.*"), key=os.path.getmtime)
            if not dumps:
                raise RuntimeError("callgrind wrote no dump")
            total = _total(dumps[-1])
            if keep:
                os.makedirs(keep, exist_ok=True)
                shutil.copy(dumps[-1], os.path.join(keep, f"callgrind.{name}"))
        return total / measured
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
        shutil.rmtree(trace_dir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="off,on", help=f"of {', '.join(CONFIGS)}")
    parser.add_argument("--warm", type=int, default=6000)
    parser.add_argument("--measured", type=int, default=4000)
    parser.add_argument("--profile", metavar="DIR", help="keep the callgrind files here")
    parser.add_argument("--seed", default="0", help="PYTHONHASHSEED of the servers (default 0)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing measured")
        return 0
    names = args.configs.split(",")
    results = {name: measure(name, args.warm, args.measured, args.profile, args.seed)
               for name in names}
    print(f"== instructions per pipelined Heartbeat ({MEMBERS} members, {CONNECTIONS} connections x "
          f"{IN_FLIGHT} in flight; {args.measured} counted after {args.warm}; callgrind, "
          f"PYTHONHASHSEED={args.seed})")
    base = results.get("off")
    for name, value in results.items():
        ratio = "" if base is None else f"  throughput vs off {base / value:.3f}"
        verdict = ""
        if base is not None and name != "off":
            verdict = "  ok" if base / value >= TARGET_RATIO else "  target missed"
        print(f"  {name:<6} {value / 1000:7.1f}k{ratio}{verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
