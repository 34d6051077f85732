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

The same for every request kind a consumer group sends, in one run (issue 40, item 3):
Heartbeat, one-partition OffsetCommit, Fetch, JoinGroup and SyncGroup (see ``KIND`` below for
what each request is); ``--kind NAME`` measures one of them. Each connection sends its next
IN_FLIGHT requests once all its previous ones are answered (``LOCKSTEP``), and every server is
first left to finish what it loads while idle (``until_idle``): both used to move the figures
more than tracing did.

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
import uuid

import attrs

from kafka_emu.log.records import Record, build_batch
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.codec import read_from
from kafka_emu.protocol.headers import ResponseHeader, encode_request, response_header_version
from kafka_emu.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.protocol.messages.offset_commit import (OffsetCommitRequest,
                                                       OffsetCommitRequestPartition,
                                                       OffsetCommitRequestTopic)
from kafka_emu.protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from kafka_emu.protocol.messages.produce import (PartitionProduceData, ProduceRequest,
                                                 TopicProduceData)
from kafka_emu.protocol.messages.sync_group import SyncGroupRequest
from kafka_emu.protocol.primitives import Reader

WINDOW_S = float(os.environ.get("BENCH_TRACE_WINDOW_S", "3"))
ROUNDS = int(os.environ.get("BENCH_TRACE_ROUNDS", "3"))
CONNECTIONS, IN_FLIGHT = 4, 64
WARMUP = 2000  # heartbeats before each measured window
TARGET_RATIO = 0.90
JOIN, SYNC, HEARTBEAT = BY_NAME["JoinGroup"], BY_NAME["SyncGroup"], BY_NAME["Heartbeat"]
COMMIT, FETCH, PRODUCE = BY_NAME["OffsetCommit"], BY_NAME["Fetch"], BY_NAME["Produce"]
METADATA = BY_NAME["Metadata"]
# every request kind a consumer group sends, measured in this order by default (--kind one)
KINDS = ("Heartbeat", "OffsetCommit", "Fetch", "JoinGroup", "SyncGroup")
# the request kind measured (--kind): Heartbeat (v4); OffsetCommit (one partition, v8, offset 0
# each time: what a consumer committing after each poll of an idle partition sends); Fetch (v16,
# by topic id as librdkafka 2.16 and Java 4 consumers send it, no wait, one partition from offset
# 0 holding one small record: the answer carries one batch); JoinGroup (v5, the leader of a
# one-member group rejoining while its group awaits the SyncGroup: answered at once with the
# current generation, as Kafka answers a member whose join response was lost); SyncGroup (v3, the
# member of a stable group: answered at once with its assignment)
KIND = "Heartbeat"
FETCH_VERSION = int(os.environ.get("BENCH_TRACE_FETCH_VERSION", "16"))
TOPIC = "t"  # (every server is started with it, one partition, for the commits and fetches)
_JOIN = JoinGroupRequest(group_id="bench", session_timeout_ms=60000, rebalance_timeout_ms=60000,
                         member_id="", group_instance_id=None, protocol_type="consumer",
                         protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")])


@attrs.frozen
class Setup:
    """What the measured requests need of the server: the member, its generation, the topic's id."""
    member: str
    generation: int
    topic_id: uuid.UUID = uuid.UUID(int=0)


def request_frame(setup: Setup) -> bytes:
    """One request of the kind measured, as a member of the group sends it."""
    member, generation = setup.member, setup.generation
    if KIND == "OffsetCommit":
        return encode_request(COMMIT, 8, 1, "bench-trace", OffsetCommitRequest(
            group_id="bench", generation_id_or_member_epoch=generation, member_id=member,
            topics=[OffsetCommitRequestTopic(name=TOPIC, partitions=[
                OffsetCommitRequestPartition(partition_index=0, committed_offset=0,
                                             committed_metadata="")])]))
    if KIND == "Fetch":
        return encode_request(FETCH, FETCH_VERSION, 1, "bench-trace", FetchRequest(
            max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=0,
            session_epoch=-1, rack_id="", forgotten_topics_data=[],
            topics=[FetchTopic(topic=TOPIC, topic_id=setup.topic_id, partitions=[
                FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])]))
    if KIND == "JoinGroup":
        return encode_request(JOIN, 5, 1, "bench-trace", attrs.evolve(_JOIN, member_id=member))
    if KIND == "SyncGroup":
        return encode_request(SYNC, 3, 1, "bench-trace", SyncGroupRequest(
            group_id="bench", generation_id=generation, member_id=member, assignments=[]))
    return encode_request(HEARTBEAT, 4, 1, "bench-trace", HeartbeatRequest(
        group_id="bench", generation_id=generation, member_id=member))


# How a connection's requests are sent again as they are answered. In lock step (the default), a
# connection sends its next IN_FLIGHT requests in one write once all its previous ones are
# answered, so the server reads batches of IN_FLIGHT whole frames every time. Refilling as
# answers arrive (BENCH_TRACE_LOCKSTEP=0, as before) lets batches fragment, in whatever way the
# timing of a run decides, and never merge again: the per-batch share of each request's cost
# then moved an instruction count by up to a fifth from run to run (a traced run counted fewer
# than an untraced one for Heartbeat, OffsetCommit and JoinGroup alike).
LOCKSTEP = os.environ.get("BENCH_TRACE_LOCKSTEP", "1") != "0"


def _refill(outstanding: int, answered: int) -> int:
    """How many requests a connection sends now, with ``outstanding`` still unanswered after
    ``answered`` more answers."""
    if not LOCKSTEP:
        return answered
    return IN_FLIGHT if outstanding == 0 else 0


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


def _setup(host: str, port: int) -> Setup:
    """Form the group (one member; a JoinGroup's leader left awaiting its SyncGroup) and, for
    Fetch, put one record in the partition and learn the topic's id."""
    sock = socket.create_connection((host, port))
    first = _call(sock, JOIN, 5, _JOIN)
    joined = _call(sock, JOIN, 5, attrs.evolve(_JOIN, member_id=first.member_id))
    if KIND != "JoinGroup":
        _call(sock, SYNC, 3, SyncGroupRequest(generation_id=joined.generation_id,
                                              group_id="bench", member_id=first.member_id,
                                              assignments=[]))
    topic_id = uuid.UUID(int=0)
    if KIND == "Fetch":
        batch = build_batch([Record(value=b"v" * 100, timestamp_ms=1)])
        produced = _call(sock, PRODUCE, 9, ProduceRequest(
            transactional_id=None, acks=1, timeout_ms=30000, topic_data=[
                TopicProduceData(name=TOPIC, partition_data=[
                    PartitionProduceData(index=0, records=batch)])]))
        assert produced.responses[0].partition_responses[0].error_code == 0, produced
        meta = _call(sock, METADATA, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=TOPIC)], allow_auto_topic_creation=False,
            include_topic_authorized_operations=False))
        topic_id = meta.topics[0].topic_id
    sock.close()
    return Setup(first.member_id, joined.generation_id, topic_id)


def _cpu_s(pid: int | None) -> float:
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def until_idle(pid: int, limit_s: float = 600.0, busy_s: float = 0.005) -> None:
    """Until the server has used less than ``busy_s`` of CPU in 0.2 s: it has finished loading
    what a first group needs while idle (broker/warm.py), about 250 ms of CPU after start, some
    50 times that under callgrind. Measured before that, the loading ran in every gap between
    batches and was counted as the requests' cost (an untraced JoinGroup 199 thousand
    instructions, a traced one, whose run waited longer for its trace lines, 181)."""
    deadline = time.monotonic() + limit_s
    last = _cpu_s(pid)
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = _cpu_s(pid)
        if now - last < busy_s:
            return
        last = now


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
    if pid is not None:
        until_idle(pid, 30.0)
    setup = _setup(host, port)
    # warm up first, and let the trace encoder (a fresh Python) finish starting: its start is
    # not what a traced request costs
    send_heartbeats(host, port, setup, WARMUP)
    time.sleep(0.5)
    frame = request_frame(setup)
    sel = selectors.DefaultSelector()
    socks = [socket.create_connection((host, port)) for _ in range(CONNECTIONS)]
    pending, outstanding = {}, {}
    for s in socks:
        s.sendall(frame * IN_FLIGHT)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        pending[s], outstanding[s] = bytearray(), IN_FLIGHT
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
                outstanding[s] -= answered
                more = _refill(outstanding[s], answered)
                if more:
                    s.setblocking(True)
                    s.sendall(frame * more)
                    s.setblocking(False)
                    outstanding[s] += more
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


def send_heartbeats(host: str, port: int, setup: Setup, count: int) -> None:
    """Send exactly ``count`` requests of the kind measured over CONNECTIONS connections,
    IN_FLIGHT pipelined on each, and return when every one is answered."""
    frame = request_frame(setup)
    sel = selectors.DefaultSelector()
    socks = [socket.create_connection((host, port)) for _ in range(CONNECTIONS)]
    sent = answered_all = 0
    pending, outstanding = {}, {}
    for s in socks:
        n = min(IN_FLIGHT, count - sent)
        s.sendall(frame * n)
        sent += n
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        pending[s], outstanding[s] = bytearray(), n
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
            outstanding[s] -= answered
            more = min(_refill(outstanding[s], answered), count - sent)
            if more:
                s.setblocking(True)
                s.sendall(frame * more)
                s.setblocking(False)
                sent += more
                outstanding[s] += more
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
        until_idle(proc.pid, busy_s=0.02)  # (valgrind's own work while the server waits)
        setup = _setup(host, int(port))
        send_heartbeats(host, int(port), setup, CG_WARMUP)
        # (so the warm-up's flushes are not counted; the setup's own joins and sync are lines too)
        setup_lines = {"JoinGroup": 2, "SyncGroup": 1}.get(KIND, 0)
        _wait_for_lines(trace_dir, setup_lines + CG_WARMUP)
        encoders = _children(proc.pid)
        for pid in (proc.pid, *encoders):
            _control("--zero", pid)
        send_heartbeats(host, int(port), setup, CG_REQUESTS)
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
    kinds = list(KINDS)
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
