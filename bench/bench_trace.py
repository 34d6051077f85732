"""Trace writer benchmark (issue 10): what tracing costs the request path.

Heartbeat throughput of ``kafka-emu serve`` (a subprocess, so the load generator here does not
share its interpreter) with tracing off, with only the observer seam on (a sink that does
nothing: the cost of building the events, which any observer pays), with tracing on (plain JSON
Lines) and on with gzip, measured in the same run and printed as ratios to "off". The load: one
member joins a group over the wire, then four connections each keep 64 pipelined Heartbeats in
flight for WINDOW_S seconds. Each configuration is measured ROUNDS times interleaved and the
medians compared. Three figures per configuration: heartbeats per second of wall time,
heartbeats per second of the server's own CPU time (from /proc; on a shared machine the wall
figure swings with other load, the CPU figure much less), and per second of the CPU of the
server and the trace encoder process it starts (which formats the lines off the request path).
Target: tracing costs the request path at most 10% (server CPU ratio >= 0.90). Not a test: it
prints and always exits 0.

The same for one-partition OffsetCommits (v8, the member's, offset 0 each time), after the
Heartbeats: ``--kind Heartbeat`` or ``--kind OffsetCommit`` measures one of them (issue 40: a
traced commit kept 0.48 of the untraced throughput while its row was made on the request path).

``--callgrind`` counts instructions instead of time (see "instruction counts under callgrind"
below; valgrind must be installed): deterministic on a busy machine, but blind to cache misses
and the kernel's share, so both figures are worth having.
"""

from __future__ import annotations

import gzip
import os
import selectors
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import attrs

from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.codec import read_from
from kafka_emu.protocol.headers import ResponseHeader, encode_request, response_header_version
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.protocol.messages.offset_commit import (OffsetCommitRequest,
                                                       OffsetCommitRequestPartition,
                                                       OffsetCommitRequestTopic)
from kafka_emu.protocol.messages.sync_group import SyncGroupRequest
from kafka_emu.protocol.primitives import Reader

WINDOW_S = float(os.environ.get("BENCH_TRACE_WINDOW_S", "3"))
ROUNDS = int(os.environ.get("BENCH_TRACE_ROUNDS", "3"))
CONNECTIONS, IN_FLIGHT = 4, 64
WARMUP = 2000  # heartbeats before each measured window
TARGET_RATIO = 0.90
JOIN, SYNC, HEARTBEAT = BY_NAME["JoinGroup"], BY_NAME["SyncGroup"], BY_NAME["Heartbeat"]
COMMIT = BY_NAME["OffsetCommit"]
# the request kind measured: "Heartbeat" or "OffsetCommit" (one partition, v8, offset 0 each
# time: what a consumer committing after each poll of an idle partition sends); --kind
KIND = "Heartbeat"
TOPIC = "t"  # (every server is started with it, one partition, for the commits)


def request_frame(member: str, generation: int) -> bytes:
    """One request of the kind measured, as a member of the group sends it."""
    if KIND == "OffsetCommit":
        return encode_request(COMMIT, 8, 1, "bench-trace", OffsetCommitRequest(
            group_id="bench", generation_id_or_member_epoch=generation, member_id=member,
            topics=[OffsetCommitRequestTopic(name=TOPIC, partitions=[
                OffsetCommitRequestPartition(partition_index=0, committed_offset=0,
                                             committed_metadata="")])]))
    return encode_request(HEARTBEAT, 4, 1, "bench-trace", HeartbeatRequest(
        group_id="bench", generation_id=generation, member_id=member))


def _recv_frame(sock: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        return bytes(buf)
    (size,) = struct.unpack(">i", exactly(4))
    return exactly(size)


def _drop_whole_frames(buf: bytearray) -> int:
    """Remove the complete response frames at the front of ``buf``; how many there were."""
    count = 0
    while len(buf) >= 4:
        (size,) = struct.unpack_from(">i", buf)
        if len(buf) < 4 + size:
            break
        del buf[:4 + size]
        count += 1
    return count


def _call(sock: socket.socket, api, version: int, body, corr: int = 1):
    sock.sendall(encode_request(api, version, corr, "bench-trace", body))
    r = Reader(_recv_frame(sock))
    read_from(ResponseHeader, response_header_version(api, version), r)
    return read_from(api.response, version, r)


def _member(host: str, port: int) -> tuple[str, int]:
    sock = socket.create_connection((host, port))
    join = JoinGroupRequest(group_id="bench", session_timeout_ms=60000,
                            rebalance_timeout_ms=60000, member_id="", group_instance_id=None,
                            protocol_type="consumer",
                            protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")])
    first = _call(sock, JOIN, 5, join)
    joined = _call(sock, JOIN, 5, attrs.evolve(join, member_id=first.member_id))
    _call(sock, SYNC, 3, SyncGroupRequest(group_id="bench", generation_id=joined.generation_id,
                                          member_id=first.member_id, assignments=[]))
    sock.close()
    return first.member_id, joined.generation_id


def _cpu_s(pid: int | None) -> float:
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (the trace encoder)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return found


# Heartbeats per second of CPU of the last measured server and the processes it started (the
# trace encoder, which formats the lines in a process of its own), in its window.
last_with_children = 0.0


def heartbeats_per_s(host: str, port: int, pid: int | None = None) -> tuple[float, float]:
    """(heartbeats per wall second, heartbeats per server CPU second)."""
    member, generation = _member(host, port)
    # warm up first, and let the trace encoder (a fresh Python) finish starting: its start is
    # not what a traced request costs
    send_heartbeats(host, port, member, generation, WARMUP)
    time.sleep(0.5)
    frame = request_frame(member, generation)
    sel = selectors.DefaultSelector()
    socks = [socket.create_connection((host, port)) for _ in range(CONNECTIONS)]
    pending = {}
    for s in socks:
        s.sendall(frame * IN_FLIGHT)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        pending[s] = bytearray()
    done = 0
    children = _children(pid) if pid is not None else []
    children_start = sum(_cpu_s(c) for c in children)
    cpu_start = _cpu_s(pid)
    start = time.perf_counter()
    end = start + WINDOW_S
    while time.perf_counter() < end:
        for key, _ in sel.select(timeout=1):
            s = key.fileobj
            buf = pending[s]
            buf += s.recv(1 << 16)
            answered = _drop_whole_frames(buf)
            if answered:
                done += answered
                s.setblocking(True)
                s.sendall(frame * answered)
                s.setblocking(False)
    elapsed = time.perf_counter() - start
    cpu = _cpu_s(pid) - cpu_start
    global last_with_children
    total = cpu + sum(_cpu_s(c) for c in children) - children_start
    last_with_children = done / total if total > 0 else float("nan")
    for s in socks:
        s.close()
    return done / elapsed, (done / cpu if cpu > 0 else float("nan"))


SEAM_ONLY = """
import sys, trio
from functools import partial
from kafka_emu.broker.server import serve
from kafka_emu.testing import make_config

async def main():
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, make_config(topics={"t": 1})))
        # "batches": the observer also takes the seam's deferred batches whole, as the trace
        # writer does (without, it is called once per event)
        many = (lambda batch: None) if sys.argv[1:] == ["batches"] else None
        bound.broker.observation.subscribe(lambda event: None, rows=True, many=many)
        print(bound.bootstrap, flush=True)
        await trio.sleep_forever()

trio.run(main)
"""


def run(extra: list[str] | None) -> tuple[float, float]:
    args = ([sys.executable, "-c", SEAM_ONLY] if extra is None else
            [sys.executable, "-m", "kafka_emu", "serve", "--port", "0", "--log-level", "WARNING",
             "--topic", f"{TOPIC}:1", *extra])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        host, port = proc.stdout.readline().strip().rsplit(":", 1)
        return heartbeats_per_s(host, int(port), proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# -- instruction counts under callgrind ------------------------------------------------------
#
# Wall and CPU time swing with other load on a shared machine; instructions executed do not.
# ``--callgrind`` starts each configuration's server under valgrind's callgrind tool (with
# ``--trace-children=yes``, so the trace encoder is counted on its own), sends WARMUP
# heartbeats, zeroes the counters of the server and the encoder, sends exactly REQUESTS
# heartbeats (pipelined as above), waits for their trace lines to reach the file, and dumps the
# counters: instructions per request in the server (what the request path pays) and in the
# encoder. The trace's flush interval is the writer's own, in the instrumented server's slowed
# time, so a flush's fixed cost is spread over far fewer requests than at full speed.

CG_REQUESTS = int(os.environ.get("BENCH_TRACE_CG_REQUESTS", "4000"))
CG_WARMUP = int(os.environ.get("BENCH_TRACE_CG_WARMUP", "1500"))
# any of: off, seam only, seam (batches), on (jsonl), on (gzip)
CG_CONFIGS = os.environ.get("BENCH_TRACE_CG_CONFIGS", "off,seam only,on (jsonl)").split(",")


def send_heartbeats(host: str, port: int, member: str, generation: int, count: int) -> None:
    """Send exactly ``count`` heartbeats over CONNECTIONS connections, IN_FLIGHT pipelined on
    each, and return when every one is answered."""
    frame = request_frame(member, generation)
    sel = selectors.DefaultSelector()
    socks = [socket.create_connection((host, port)) for _ in range(CONNECTIONS)]
    sent = answered_all = 0
    pending = {}
    for s in socks:
        n = min(IN_FLIGHT, count - sent)
        s.sendall(frame * n)
        sent += n
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        pending[s] = bytearray()
    while answered_all < count:
        for key, _ in sel.select(timeout=120):
            s = key.fileobj
            buf = pending[s]
            chunk = s.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the server closed a connection")
            buf += chunk
            answered = _drop_whole_frames(buf)
            answered_all += answered
            more = min(answered, count - sent)
            if more:
                s.setblocking(True)
                s.sendall(frame * more)
                s.setblocking(False)
                sent += more
    for s in socks:
        s.close()


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
    target = ([sys.executable, "-c", SEAM_ONLY] if extra is None else
              [sys.executable, "-c", SEAM_ONLY, "batches"] if extra == ["batches"] else
              [sys.executable, "-m", "kafka_emu", "serve", "--port", "0", "--log-level",
               "WARNING", "--topic", f"{TOPIC}:1", *extra])
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
        member, generation = _member(host, int(port))
        send_heartbeats(host, int(port), member, generation, CG_WARMUP)
        _wait_for_lines(trace_dir, CG_WARMUP)  # (so the warm-up's flushes are not counted)
        encoders = _children(proc.pid)
        for pid in (proc.pid, *encoders):
            _control("--zero", pid)
        send_heartbeats(host, int(port), member, generation, CG_REQUESTS)
        _wait_for_lines(trace_dir, CG_WARMUP + CG_REQUESTS)
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
                    count += fh.read().count(b'"api":"%s"' % KIND.encode())
            except (EOFError, OSError):  # a gzip member being written
                pass
    return count


def callgrind_main() -> int:
    print(f"== instructions per {KIND} under callgrind ({CG_REQUESTS} pipelined, "
          f"after {CG_WARMUP}; {CONNECTIONS} connections x {IN_FLIGHT} in flight)")
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
                "  ok" if base / server >= TARGET_RATIO else "  target missed")
            print(f"  {name:<19} {server / 1e3:8.1f}k {base / server:6.3f}   "
                  f"{encoder / 1e3:8.1f}k {(server + encoder) / 1e3:12.1f}k "
                  f"{base / (server + encoder):6.3f}{verdict}", flush=True)
    print("  (throughput ratio = instructions off / instructions on; 'with encoder' adds the "
          "trace\n  encoder process's instructions, the machine's whole cost of tracing)")
    return 0


def main() -> int:
    global KIND
    args = sys.argv[1:]
    kinds = ["Heartbeat", "OffsetCommit"]
    if "--kind" in args:
        kinds = [args[args.index("--kind") + 1]]
    for kind in kinds:
        KIND = kind  # (read by request_frame and the printing)
        (callgrind_main if "--callgrind" in args else timed_main)()
    return 0


def timed_main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        # the control plane's timeline (on by default in serve) off throughout: tracing alone
        quiet = ["-c", "emu.timeline.max.events=0"]
        configs = {"off": quiet, "seam only": None, "on (jsonl)": [*quiet, "--trace-dir", tmp],
                   "on (gzip)": [*quiet, "--trace-dir", tmp, "--trace-compress", "gzip"]}
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
        with_children: dict[str, list[float]] = {name: [] for name in configs}
        for _ in range(ROUNDS):
            for name, extra in configs.items():
                results[name].append(run(extra))
                with_children[name].append(last_with_children)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tmp) for f in fs)
    base_wall = statistics.median(w for w, _ in results["off"])
    base_cpu = statistics.median(c for _, c in results["off"])
    print(f"== {KIND} throughput, tracing off vs on ({CONNECTIONS} connections x "
          f"{IN_FLIGHT} in flight, {WINDOW_S:g} s x {ROUNDS} rounds, medians)")
    print(f"  {'tracing':<19} {'per wall s':>10} {'ratio':>6}   {'per CPU s':>10} {'ratio':>6}"
          f"   {'CPU incl. encoder':>17} {'ratio':>6}")
    base_all = statistics.median(with_children["off"])
    for name, values in results.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        every = statistics.median(with_children[name])
        verdict = "" if name in ("off", "seam only") else (
            "  ok" if cpu / base_cpu >= TARGET_RATIO else "  target missed")
        print(f"  {name:<19} {wall:10.0f} {wall / base_wall:6.2f}   {cpu:10.0f} "
              f"{cpu / base_cpu:6.2f}   {every:17.0f} {every / base_all:6.2f}{verdict}")
    print("  (per CPU s: the server's process, what the request path pays; incl. encoder: with "
          "the\n  trace encoder process it starts, the machine's whole cost of tracing)")
    print(f"  trace bytes written in all rounds: {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
