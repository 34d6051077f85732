"""One request at a time, counted in machine instructions: kafka-emu against the bare trio server
of its shape (issue 40, item 4).

``bench_wire.py`` times the same load (16 connections x 1 request in flight) by server CPU,
which on the shared two-core machine swings by a third between runs (the bare server's own
figure moved 21-32 µs). This counts instead the instructions the server process executes under
valgrind's callgrind, which the machine's load does not move: a ``kafka-emu serve`` (timeline
off) with a classic group of MEMBERS members formed over the wire (bench_wire's driver), and the
bare trio server of bench_wire (one task per connection, one ``send_all`` per response of a fixed
answer the size of kafka-emu's), each under callgrind; WARM requests, then the counters zeroed,
MEASURED requests, the counters dumped. The ratio is the bare server's count over kafka-emu's
(1.0: as cheap as trio itself). Both the server's idle loading (broker/warm.py) and the group's
formation finish before the counters are zeroed.

    python bench/callgrind_wire.py [--api OffsetCommit,Heartbeat] [--measured 3000]

Takes a few minutes (about 50x slower under valgrind). Not a test: prints and exits 0;
``--keep DIR`` keeps the callgrind files for callgrind_annotate.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_wire import (BARE, ONE_AT_A_TIME, TOPIC, Link, Server, errors_of,  # noqa: E402
                        form_group, member_frames, pump)

MEMBERS = 100
TARGET_RATIO = 0.8


def _callgrind(out_dir: str, name: str, command: list[str]) -> Server:
    # a fixed hash seed: string hashes steer dict probing, and so the counts, by a few per cent
    os.environ["PYTHONHASHSEED"] = os.environ.get("PYTHONHASHSEED", "0")
    return Server(name, ["valgrind", "--tool=callgrind", "--quiet",
                         f"--callgrind-out-file={out_dir}/{name}.%p", *command])


def _control(option: str, pid: int) -> None:
    subprocess.run(["callgrind_control", option, str(pid)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)


def _quiet(server: Server, limit_s: float = 600.0) -> None:
    """Until the server uses under 2% of a core: its idle loading (warm.py) is done."""
    deadline = time.monotonic() + limit_s
    before = server.cpu_ns()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = server.cpu_ns()
        if now - before < 10_000_000:
            return
        before = now


def one_at_a_time(server: Server, frames: list[bytes], count: int) -> None:
    """Exactly ``count`` requests over ONE_AT_A_TIME's connections, one in flight on each."""
    connections, _ = ONE_AT_A_TIME
    links = [Link(server.address) for _ in range(connections)]
    state = {"sent": 0, "answered": 0}

    def send(link: Link) -> None:
        if state["sent"] < count:
            link.send(frames[state["sent"] % len(frames)])
            state["sent"] += 1

    def on_frame(link: Link, frame: bytes) -> None:
        state["answered"] += 1
        send(link)

    for link in links:
        send(link)
    try:
        pump(links, on_frame, lambda: state["answered"] >= count, limit_s=1800)
    finally:
        for link in links:
            link.close()


def counted(server: Server, out_dir: str, frames: list[bytes], warm: int, measured: int) -> float:
    """Instructions per request in ``server`` over ``measured`` requests after ``warm``."""
    one_at_a_time(server, frames, warm)
    time.sleep(0.5)
    _control("--zero", server.proc.pid)
    one_at_a_time(server, frames, measured)
    return dumped_instructions(out_dir, server.name, server.proc.pid) / measured


def dumped_instructions(out_dir: str, name: str, pid: int) -> int:
    """Instructions counted since the last ``--zero``: callgrind dumps them now (older dumps
    of this process removed first) and its totals are summed."""
    for old in glob.glob(f"{out_dir}/{name}.{pid}.*"):
        os.remove(old)
    _control("--dump", pid)
    total = 0
    for path in glob.glob(f"{out_dir}/{name}.{pid}.*"):
        with open(path) as f:
            total += next(int(line.split()[1]) for line in f
                          if line.startswith(("totals:", "summary:")))
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--api", default="OffsetCommit,Heartbeat")
    parser.add_argument("--warm", type=int, default=1500)
    parser.add_argument("--measured", type=int, default=3000)
    parser.add_argument("--keep", metavar="DIR")
    args = parser.parse_args()
    apis = args.api.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = args.keep or tmp
        os.makedirs(out_dir, exist_ok=True)
        emu_args = [sys.executable, "-m", "kafka_emu", "serve", "--port", "0", "--log-level",
                    "ERROR", "--topic", f"{TOPIC}:1", "-c", "group.initial.rebalance.delay.ms=3000",
                    "-c", "connections.max.idle.ms=3600000",
                    "-c", "group.max.session.timeout.ms=3600000", "-c", "emu.timeline.max.events=0"]
        figures: dict[str, dict[str, float]] = {}
        with _callgrind(out_dir, "emu", emu_args) as server:
            _quiet(server)
            group = form_group(server, "bench", MEMBERS)
            _quiet(server)
            answers: dict[str, bytes] = {}
            for api in apis:
                frames = member_frames(api, group)
                got: list[bytes] = []
                link = Link(server.address)
                link.send(frames[0])
                pump([link], lambda _, f: got.append(f), lambda: bool(got), 300)
                link.close()
                if errors_of(api, got[0]) - {0}:
                    raise RuntimeError(f"{api} answered with an error")
                answers[api] = got[0][4:]  # (the bare server's answer: the same size)
                figures.setdefault(api, {})["kafka-emu"] = counted(
                    server, out_dir, frames, args.warm, args.measured)
            group.close()
        for api in apis:
            frames = member_frames(api, group)
            with _callgrind(out_dir, f"bare-{api}", [sys.executable, "-c", BARE, "0",
                                                     answers[api].hex()]) as server:
                _quiet(server)
                figures[api]["bare trio"] = counted(server, out_dir, frames, args.warm,
                                                    args.measured)
    connections, depth = ONE_AT_A_TIME
    print(f"== thousands of instructions per request, {connections} connections x {depth} in "
          f"flight (callgrind, {args.measured} after {args.warm}, {MEMBERS}-member group)")
    for api in apis:
        emu, bare = figures[api]["kafka-emu"], figures[api]["bare trio"]
        verdict = "ok" if bare / emu >= TARGET_RATIO else "target missed"
        print(f"  {api:<13} kafka-emu {emu / 1e3:7.1f}k   bare trio {bare / 1e3:7.1f}k   "
              f"ratio {bare / emu:.3f}  ({verdict}: >= {TARGET_RATIO})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
