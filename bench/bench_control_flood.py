"""Control endpoint flood benchmark (issue 33): 10,000 connections opened at once against the
HTTP control endpoint on loopback, and what the Kafka port feels meanwhile.

Run with ``.venv/bin/python bench/bench_control_flood.py`` (``--connections``, ``--beats``).
Not a test: it prints fractions and ratios measured in this run and always exits 0.

The server is ``kafka-emu serve --control-port 0`` in a subprocess. A child process opens
``--connections`` connections to the control port as fast as trio can start them (all at once,
each sending ``GET /health`` and reading the status line, each bounded by ``CONNECTION_S``, the
whole flood by ``FLOOD_S``) and counts the answers: 200 (served), 503 (over the endpoint's
connection limit: a clear refusal), closed unanswered (no request was read within the
endpoint's keep-alive timeout, 2 s, counted from the accept: under the flood the generator's
own tasks, or the server's loop, can lag that long), and no answer (refused, reset or timed
out -- what the issue saw for 63% of them). Meanwhile this process heartbeats a Stable group's member on the Kafka
port (Heartbeat v4, one every ``PACE_MS``, as a client would, rather than back to back, which
would itself load the server's one loop) and compares p50/p99 during the flood with the same
pacing before it. The server's CPU seconds for the flood are printed too.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_hardening import Client, heartbeat_ms, p, stable_member, stop_server  # noqa: E402

CONNECTIONS = 10_000
CONNECTION_S = 30.0  # one connection: connect, ask, read the status line
FLOOD_S = 90.0  # the whole flood
PACE_MS = 5.0


def paced_beats(client: Client, member: tuple[str, int], count: int) -> list[float]:
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        times += heartbeat_ms(client, *member, 1)
        time.sleep(max(0.0, PACE_MS / 1000 - (time.perf_counter() - t0)))
    return times


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server() -> tuple[subprocess.Popen, str, int, int]:
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                             "--control-port", "0", "--log-level", "WARNING"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    host, _, port = proc.stdout.readline().strip().rpartition(":")
    control = proc.stdout.readline().strip().rsplit(":", 1)[1]
    proc.stdout.readline()  # control-token: /health needs none
    return proc, host, int(port), int(control)


def flood(host: str, port: int, count: int, results) -> None:
    """In a child process: ``count`` connections at once; puts the tally on ``results``."""
    import trio

    tally = {"200": 0, "503": 0, "closed unanswered": 0, "other": 0, "no answer": 0}
    request = b"GET /health HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n" % (
        host.encode(), port)

    async def one() -> None:
        key = "no answer"
        with trio.move_on_after(CONNECTION_S):
            try:
                stream = await trio.open_tcp_stream(host, port)
                async with stream:
                    await stream.send_all(request)
                    head = b""
                    while b"\r\n" not in head:
                        chunk = await stream.receive_some(4096)
                        if not chunk:
                            break
                        head += chunk
                    status = head.split(b" ", 2)[1].decode() if head.count(b" ") >= 2 else ""
                    key = (status if status in ("200", "503") else "other" if head
                           else "closed unanswered")
            except (OSError, trio.BrokenResourceError):
                pass
        tally[key] += 1

    async def main() -> None:
        with trio.move_on_after(FLOOD_S):
            async with trio.open_nursery() as nursery:
                for _ in range(count):
                    nursery.start_soon(one)
        tally["no answer"] += count - sum(tally.values())  # cut off by FLOOD_S

    t0 = time.perf_counter()
    trio.run(main)
    tally["seconds"] = time.perf_counter() - t0
    results.put(tally)


def raise_nofile(need: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=CONNECTIONS)
    parser.add_argument("--beats", type=int, default=1000, help="heartbeats before the flood")
    args = parser.parse_args()
    limit = raise_nofile(args.connections + 500)  # the server and the child inherit it
    count = min(args.connections, limit - 500)
    if count < args.connections:
        print(f"(open-file limit {limit}: {count} connections instead)")
    proc, host, port, control = start_server()
    try:
        client = Client(host, port)
        member = stable_member(client)
        heartbeat_ms(client, *member, 200)  # warm
        before = paced_beats(client, member, args.beats)
        cpu_before = cpu_s(proc.pid)
        results: multiprocessing.Queue = multiprocessing.get_context("fork").Queue()
        child = multiprocessing.get_context("fork").Process(
            target=flood, args=(host, control, count, results))
        during: list[float] = []
        child.start()
        done = threading.Event()

        def watch() -> None:
            child.join()
            done.set()

        threading.Thread(target=watch, daemon=True).start()
        while not done.is_set():
            during += paced_beats(client, member, 20)
        tally = results.get(timeout=FLOOD_S + 30)
        flood_cpu = cpu_s(proc.pid) - cpu_before
        alive = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                f"http://{host}:{control}/health"], capture_output=True,
                               text=True, timeout=30).stdout if _has_curl() else "(no curl)"
        client.close()
    finally:
        stop_server(proc)
    answered = tally["200"] + tally["503"]
    print(f"== {count} connections at once to the control endpoint on loopback "
          f"({tally['seconds']:.1f} s for all; the server spent {flood_cpu:.1f} CPU s)")
    for key in ("200", "503", "closed unanswered", "other", "no answer"):
        print(f"  {key:>17}: {tally[key]:6d}  {tally[key] / count:6.1%}")
    print(f"  answered (200 or 503): {answered / count:.1%}; served: {tally['200'] / count:.1%}; "
          f"/health afterwards: {alive}")
    print(f"== Heartbeat v4 on the Kafka port, one per {PACE_MS:g} ms: {len(before)} beats before "
          f"vs {len(during)} during the flood")
    for name, values in (("before", before), ("during", during)):
        print(f"  {name:>6}: p50 {p(values, 50):7.3f} ms   p99 {p(values, 99):7.3f} ms   "
              f"max {max(values):7.3f} ms")
    print(f"  ratio during/before: p50 {p(during, 50) / p(before, 50):.2f}, "
          f"p99 {p(during, 99) / p(before, 99):.2f}, median "
          f"{statistics.median(during) / statistics.median(before):.2f}")
    return 0


def _has_curl() -> bool:
    import shutil
    return shutil.which("curl") is not None


if __name__ == "__main__":
    raise SystemExit(main())
