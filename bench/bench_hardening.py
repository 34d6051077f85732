"""Hardening benchmark (issue 8): idle connections must not cost the hot path, and service comes
back quickly after the open-file limit.

Run with ``make bench`` (or ``.venv/bin/python bench/bench_hardening.py``). Not a test: it prints
figures and ratios measured in this run, and always exits 0; a missed target is printed as
"target missed". The server is ``kafka-emu serve`` in a subprocess, so the load generator here
does not share its interpreter.

1. Heartbeat latency under idle connections: two servers side by side, one holding 5,000 idle
   connections (each connected and answered once, so its task, its connections.max.idle.ms
   deadline and its buffers exist), the other none; a member of a Stable group on each
   heartbeats (Heartbeat v4, one request in flight, TCP_NODELAY), alternating between the two in
   blocks of 100 so both see the same machine load. Reported: p50 and p99 of each and the ratio
   p99(5,000 idle) / p99(none). Target: ratio <= 2 (the idle sweep is per-connection deadlines
   in trio's timer heap, nothing that walks all connections per request).
2. Recovery after the descriptor limit: a server started with RLIMIT_NOFILE lowered to 128 is
   handed more connections than it has descriptors for, until it logs that it cannot accept;
   then every one is closed at once, and we time how long until an ApiVersions round trip on a
   new connection succeeds. Target: <= 2 s (the paused listener retries with a backoff capped
   at 1 s).
"""

from __future__ import annotations

import argparse
import os
import resource
import select
import socket
import statistics
import struct
import subprocess
import sys
import time

from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.codec import read_from
from kafka_emu.protocol.headers import ResponseHeader, encode_request, response_header_version
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from kafka_emu.protocol.primitives import Reader

IDLE = 5000
TARGET_RATIO = 2.0
TARGET_RECOVERY_S = 2.0
LOW_NOFILE = 128
JOIN, SYNC, HEARTBEAT = BY_NAME["JoinGroup"], BY_NAME["SyncGroup"], BY_NAME["Heartbeat"]
API_VERSIONS = BY_NAME["ApiVersions"]
_API_VERSIONS_V0 = encode_request(API_VERSIONS, 0, 1, "bench", ApiVersionsRequest())


def _verdict(ok: bool) -> str:
    return "ok" if ok else "target missed"


def start_server(*args: str, nofile: int | None = None) -> tuple[subprocess.Popen, str, int]:
    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                             "--log-level", "INFO", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=limit)
    host, _, port = proc.stdout.readline().strip().rpartition(":")
    return proc, host, int(port)


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


class Client:
    """A blocking one-request-at-a-time client."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.correlation_id = 0
        self.buf = b""

    def request(self, api, version: int, body):
        self.correlation_id += 1
        self.sock.sendall(encode_request(api, version, self.correlation_id, "bench", body))
        while len(self.buf) < 4 or len(self.buf) < 4 + int.from_bytes(self.buf[:4], "big"):
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk
        size = int.from_bytes(self.buf[:4], "big")
        frame, self.buf = self.buf[4:4 + size], self.buf[4 + size:]
        reader = Reader(frame)
        header = read_from(ResponseHeader, response_header_version(api, version), reader)
        assert header.correlation_id == self.correlation_id
        return read_from(api.response, version, reader)

    def close(self) -> None:
        self.sock.close()


# -- 1: heartbeat latency with and without idle connections -------------------------------------

def stable_member(client: Client) -> tuple[str, int]:
    def join(member_id: str):
        return client.request(JOIN, 5, JoinGroupRequest(
            group_id="bench", session_timeout_ms=60_000, rebalance_timeout_ms=60_000,
            member_id=member_id, protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")]))

    first = join("")
    joined = join(first.member_id)
    assert joined.error_code == 0, joined
    synced = client.request(SYNC, 3, SyncGroupRequest(
        group_id="bench", generation_id=joined.generation_id, member_id=joined.member_id,
        assignments=[SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"")]))
    assert synced.error_code == 0, synced
    return joined.member_id, joined.generation_id


def heartbeat_ms(client: Client, member: str, generation: int, count: int) -> list[float]:
    request = HeartbeatRequest(group_id="bench", generation_id=generation, member_id=member)
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        resp = client.request(HEARTBEAT, 4, request)
        times.append((time.perf_counter() - t0) * 1000)
        assert resp.error_code == 0, resp
    return times


def open_idle(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` connections, each answered once (so the server has set each one up)."""
    socks = []
    for _ in range(count):
        s = socket.create_connection((host, port), timeout=30)
        s.sendall(_API_VERSIONS_V0)
        socks.append(s)
    for s in socks:
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = s.recv(1 << 16)
            if not chunk:
                raise ConnectionError("an idle connection was closed by the server")
            data += chunk
    return socks


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def bench_idle(beats: int, idle: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = idle + 200
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < need:
        idle = resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 200
        print(f"(open-file limit {hard}: holding {idle} idle connections instead)")
    # two servers side by side, one holding the idle connections; heartbeats alternate between
    # them in blocks, so both see the same machine load
    loaded_proc, host, loaded_port = start_server()  # both inherit the raised limit
    plain_proc, _, plain_port = start_server()
    try:
        loaded_client, plain_client = Client(host, loaded_port), Client(host, plain_port)
        loaded_member = stable_member(loaded_client)
        plain_member = stable_member(plain_client)
        t0 = time.perf_counter()
        socks = open_idle(host, loaded_port, idle)
        setup_s = time.perf_counter() - t0
        heartbeat_ms(loaded_client, *loaded_member, 200)  # warm both
        heartbeat_ms(plain_client, *plain_member, 200)
        loaded, plain = [], []
        block = 100
        for _ in range(max(1, beats // block)):
            loaded += heartbeat_ms(loaded_client, *loaded_member, block)
            plain += heartbeat_ms(plain_client, *plain_member, block)
        for s in socks:
            s.close()
        loaded_client.close()
        plain_client.close()
    finally:
        stop_server(loaded_proc)
        stop_server(plain_proc)
    ratio = p(loaded, 99) / p(plain, 99)
    print(f"== Heartbeat v4 latency, {len(plain)} beats per server, alternating in blocks of "
          f"{block} ({idle} idle connections set up in {setup_s:.1f} s)")
    for name, values in (("no idle", plain), (f"{idle} idle", loaded)):
        print(f"  {name:>10}: p50 {p(values, 50):6.3f} ms   p99 {p(values, 99):6.3f} ms")
    print(f"  p99 ratio {idle} idle / none: {ratio:.2f}  (target <= {TARGET_RATIO:.1f}: "
          f"{_verdict(ratio <= TARGET_RATIO)})")


# -- 2: recovery after the open-file limit ------------------------------------------------------

def api_versions_ok(host: str, port: int, timeout: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(_API_VERSIONS_V0)
            data = b""
            while len(data) < 10:
                chunk = s.recv(1 << 16)
                if not chunk:
                    return False
                data += chunk
        return struct.unpack_from(">ih", data, 4) == (1, 0)
    except OSError:
        return False


def wait_for_line(proc: subprocess.Popen, text: str, timeout: float) -> bool:
    """Raw reads of stderr: a buffered readline() can hide a second line from select()."""
    end = time.monotonic() + timeout
    seen = b""
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stderr], [], [], 0.2)
        if ready:
            chunk = os.read(proc.stderr.fileno(), 1 << 16)
            if not chunk:
                return False
            seen += chunk
            if text.encode() in seen:
                return True
    return False


def bench_fd_limit(rounds: int) -> None:
    times = []
    for _ in range(rounds):
        proc, host, port = start_server(nofile=LOW_NOFILE)
        held = []
        try:
            for _ in range(LOW_NOFILE + 40):  # more than the server has descriptors for
                held.append(socket.create_connection((host, port), timeout=10))
            if not wait_for_line(proc, "cannot accept connections", 30):
                raise RuntimeError("the server never reached its descriptor limit")
            t0 = time.perf_counter()
            for s in held:
                s.close()
            held.clear()
            while not api_versions_ok(host, port, timeout=2.0):
                if time.perf_counter() - t0 > 30:
                    raise RuntimeError("service did not come back within 30 s")
            times.append(time.perf_counter() - t0)
        finally:
            for s in held:
                s.close()
            stop_server(proc)
    worst = max(times)
    print(f"== Recovery after RLIMIT_NOFILE={LOW_NOFILE} was exhausted, {rounds} rounds")
    print("  seconds from closing the clients to the next ApiVersions answer: "
          + ", ".join(f"{t:.2f}" for t in times))
    print(f"  worst {worst:.2f} s  (target <= {TARGET_RECOVERY_S:.1f} s: "
          f"{_verdict(worst <= TARGET_RECOVERY_S)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beats", type=int, default=2000, help="heartbeats per phase")
    parser.add_argument("--idle", type=int, default=IDLE, help="idle connections")
    parser.add_argument("--fd-rounds", type=int, default=3)
    args = parser.parse_args()
    bench_idle(args.beats, args.idle)
    bench_fd_limit(args.fd_rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
