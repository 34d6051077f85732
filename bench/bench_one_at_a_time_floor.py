"""One request at a time on one connection: what trio itself costs, against librdkafka's mock
(issue 40: the long poll and the ping-pong cells stay at 3-9x the mock).

A driver on one socket sends ApiVersions v0, waits for the answer, and sends the next, REQUESTS
times after a warm-up, to three servers, each its own process, in ROUNDS interleaved rounds:
- a bare trio server (bench/_bare_trio_serve.py) answering every frame with one fixed frame --
  no Kafka work at all: the floor of any trio server of kafka-emu's shape;
- librdkafka's mock cluster (bench/_mock_cluster.py), answering ApiVersions for real;
- ``kafka-emu serve``, answering it for real (it builds its list of APIs for each request: a
  client sends ApiVersions once per connection, so that is left as it is).
Printed: server CPU per request (/proc, all threads), and the bare trio server / the mock. When
that ratio is above 1.5, the issue's aim (1.5x the peer) is out of reach on trio for requests
that come one at a time, whatever kafka-emu's own work costs. Not a test: it prints, exits 0.

    python bench/bench_one_at_a_time_floor.py [--requests 5000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _proc_cpu import cpu_ns  # noqa: E402
from bench_data_path_peers import Server  # noqa: E402

BARE = os.path.join(HERE, "_bare_trio_serve.py")


def _frame(correlation_id: int) -> bytes:
    body = struct.pack(">hhih", 18, 0, correlation_id, 6) + b"driver"  # ApiVersions v0
    return struct.pack(">i", len(body)) + body


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        out += chunk
    return out


def per_request(pid: int, address: str, requests: int) -> float:
    """Server CPU µs per request, one at a time on one connection."""
    host, port = address.split(",")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def call(i: int) -> None:
            sock.sendall(_frame(i))
            size, = struct.unpack(">i", _read_exactly(sock, 4))
            _read_exactly(sock, size)
        for i in range(300):
            call(i)
        time.sleep(0.5)
        before = cpu_ns(pid)
        for i in range(requests):
            call(i)
        return (cpu_ns(pid) - before) / requests / 1e3


def bare(requests: int) -> float:
    proc = subprocess.Popen([sys.executable, BARE], stdout=subprocess.PIPE, text=True)
    try:
        return per_request(proc.pid, proc.stdout.readline().strip(), requests)
    finally:
        proc.kill()
        proc.wait()


def served(kind: str, requests: int) -> float:
    with Server(kind, 1, {"t": 1}) as server:
        if kind != "mock":
            server.settle()
        return per_request(server.proc.pid, server.bootstrap, requests)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    found: dict[str, list[float]] = {"bare trio": [], "mock": [], "kafka-emu": []}
    for _ in range(args.rounds):
        found["bare trio"].append(bare(args.requests))
        found["mock"].append(served("mock", args.requests))
        found["kafka-emu"].append(served("kafka-emu", args.requests))
    print(f"== one ApiVersions at a time on one connection, server CPU per request, "
          f"{args.requests} requests x {args.rounds} rounds, medians "
          f"(load {os.getloadavg()[0]:.1f})")
    medians = {k: statistics.median(v) for k, v in found.items()}
    for name, values in found.items():
        print(f"  {name:<10} {medians[name]:7.1f} µs  ({', '.join(f'{v:.1f}' for v in values)})")
    floor = medians["bare trio"] / medians["mock"]
    print(f"  the bare trio server / the mock: {floor:.2f}x -- "
          + ("above 1.5x: one-at-a-time requests cannot reach the aim on trio" if floor > 1.5
             else "within 1.5x"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
