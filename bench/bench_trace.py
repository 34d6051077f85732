"""Trace writer benchmark (issues 10 and 40): what tracing costs the request path.

The server CPU per request of ``kafka-emu serve`` (a subprocess, so the load generator here does
not share its interpreter) with tracing off and on (plain JSON Lines, and with gzip;
``BENCH_TRACE_CONFIGS`` picks among off, seam only, on (jsonl), on (gzip), and the diagnostic
"off (busy)": untraced, with a process beside it as busy as the trace encoder -- see
``NEIGHBOUR`` below; ``BENCH_TRACE_PIN=1`` pins the server to a CPU of its own, see ``PIN``),
measured in the same
run and printed as ratios to "off". The load: one member joins a group over the wire, then four
connections each keep 64 pipelined requests in flight for WINDOW_S seconds. Each configuration
is measured ROUNDS times, interleaved (every configuration once per round), and compared by the
medians and by the median of each round's own ratio ("paired": drift in the machine's load
cancels). The figure is the server's CPU time per request, exact from ``/proc/PID/schedstat``
(not wall time: on a shared machine that swings with other load), with what explains a
difference that instruction counts do not show: user and system time, minor page faults,
context switches; the trace encoder process's CPU is counted apart, and with the server's as
the machine's whole cost. Target: tracing costs the request path at most 10% (server CPU ratio
>= 0.90). Not a test: it prints and always exits 0.

Every request kind a consumer group sends, in one run (issue 40, item 3): Heartbeat,
one-partition OffsetCommit, Fetch, JoinGroup and SyncGroup (see ``KIND`` below for what each
request is); ``--kind NAME`` measures one of them. ``BENCH_TRACE_COMMIT=moving`` commits a new
offset each time (``MOVING_COMMITS``), as a consuming member does. Each connection sends its next IN_FLIGHT
requests once all its previous ones are answered (``LOCKSTEP``). Only the window's requests
are counted: every server is first left to finish what it loads while idle (``until_idle``,
broker/warm.py), then a priming round of the kind is sent and server and encoder are left to go
idle again (``settle``) -- loading and first-use costs inside the window used to move the
figures more than tracing did.

``--callgrind`` counts instructions instead of time (see "instruction counts under callgrind"
below; valgrind must be installed): deterministic on a busy machine, but blind to cache misses,
the kernel's share and what other processes (the encoder among them) cost the server's caches,
so both figures are worth having.
"""

from __future__ import annotations

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


# OffsetCommit's offset: 0 every time (BENCH_TRACE_COMMIT=same, the default: an idle partition),
# or moving (BENCH_TRACE_COMMIT=moving: a consuming member's commits, each a new offset, cycling
# through more offsets than the trace encoder keeps decoded frames for, so that none of its
# commits' frames was seen before -- what a commit costs the encoder in a real run)
MOVING_COMMITS = os.environ.get("BENCH_TRACE_COMMIT", "same") == "moving"
_MOVING_POOL = 5000  # (> frame_rows._DECODED_LIMIT)


def request_frame(setup: Setup, offset: int = 0) -> bytes:
    """One request of the kind measured, as a member of the group sends it."""
    member, generation = setup.member, setup.generation
    if KIND == "OffsetCommit":
        return encode_request(COMMIT, 8, 1, "bench-trace", OffsetCommitRequest(
            group_id="bench", generation_id_or_member_epoch=generation, member_id=member,
            topics=[OffsetCommitRequestTopic(name=TOPIC, partitions=[
                OffsetCommitRequestPartition(partition_index=0, committed_offset=offset,
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


class Frames:
    """The requests a driver sends: ``take(n)`` is the bytes of the next ``n``, one frame again
    and again, or (moving commits) the next frames of a pool of commits of distinct offsets."""

    def __init__(self, setup: Setup) -> None:
        self.one = request_frame(setup)
        self.pool = ([request_frame(setup, offset) for offset in range(_MOVING_POOL)]
                     if KIND == "OffsetCommit" and MOVING_COMMITS else None)
        self.next = 0

    def take(self, n: int) -> bytes:
        if self.pool is None:
            return self.one * n
        at, self.next = self.next, (self.next + n) % len(self.pool)
        return b"".join(self.pool[(at + i) % len(self.pool)] for i in range(n))


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
        # stamped now: a record older than retention.ms (7 days) is deleted by the server's
        # retention check (30 s after its start, then every 5 minutes), and every Fetch after
        # that would be an OFFSET_OUT_OF_RANGE answer with no records
        batch = build_batch([Record(value=b"v" * 100, timestamp_ms=int(time.time() * 1000))])
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


@attrs.frozen
class Usage:
    """What a process has used of the machine so far (``/proc``): its CPU time in nanoseconds
    (``schedstat``: exact, where ``stat``'s user and system times come in 10 ms ticks), of which
    the share spent in the kernel, its minor page faults (memory it touched for the first
    time since the kernel gave it: a heap that grows and shrinks again pays them every time),
    and how often it gave up the CPU to wait (``waits``) or was made to (``preempted``): each
    costs it caches another process has used meanwhile."""
    cpu_ns: int = 0
    sys_s: float = 0.0
    user_s: float = 0.0
    minflt: int = 0
    waits: int = 0
    preempted: int = 0
    queued_ns: int = 0  # runnable but waiting for a CPU (schedstat)

    def __sub__(self, other: "Usage") -> "Usage":
        return Usage(*(a - b for a, b in zip(attrs.astuple(self), attrs.astuple(other))))

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(*(a + b for a, b in zip(attrs.astuple(self), attrs.astuple(other))))


def usage(pid: int | None) -> Usage:
    if pid is None:
        return Usage()
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/schedstat") as f:
            cpu_ns, queued_ns = map(int, f.read().split()[:2])
        with open(f"/proc/{pid}/status") as f:
            status = dict(line.split(":", 1) for line in f if "ctxt_switches" in line)
    except (OSError, ValueError, IndexError):  # (gone)
        return Usage()
    tick = os.sysconf("SC_CLK_TCK")
    return Usage(cpu_ns, int(fields[12]) / tick, int(fields[11]) / tick, int(fields[7]),
                 int(status["voluntary_ctxt_switches"]),
                 int(status["nonvoluntary_ctxt_switches"]), queued_ns)


@attrs.frozen
class Sample:
    """One measured window of one configuration: the requests answered, the wall time, what the
    server and the processes it started (the trace encoder) used meanwhile."""
    requests: int
    wall_s: float
    server: Usage
    encoder: Usage

    def per_request_us(self, of: Usage) -> float:
        return of.cpu_ns / 1e3 / self.requests if self.requests else float("nan")


# The last measured window (``run`` returns only its two rates, as bench_control reads them).
last_sample: Sample | None = None


def settle(pid: int) -> None:
    """Until the server and every process it started are idle: the server's loading while idle
    (``until_idle``) is over and the encoder has written what the priming round sent it."""
    for each in (pid, *_children(pid)):
        until_idle(each, 30.0)


# "off (busy)": the untraced server measured while a process formats JSON lines beside
# it for about half a CPU, as the trace encoder does for a traced one (4.6-11 µs of CPU per
# request). A neighbour that busy costs the untraced server itself some 3-7% of CPU per request
# on a 2-vCPU machine (issue 40 item 3, trace3): that share of "on"'s ratio is the machine's,
# not the recording's, and only a cheaper encoder can give it back.
NEIGHBOUR = False
# BENCH_TRACE_PIN=1, a diagnostic: the server alone on the first CPU, this load generator and
# the trace encoder on the second. Unpinned on a 2-vCPU machine a traced run has three busy
# processes on two CPUs (the server, the load, the encoder) where an untraced one has two, and
# the server is switched out and back in among them: pinned, what is left of the ratio is the
# recording's own work on the server's CPU.
PIN = os.environ.get("BENCH_TRACE_PIN", "0") == "1" and len(os.sched_getaffinity(0)) >= 2
_NEIGHBOUR_SOURCE = """
import json, time
rows = [{"kind": "request_handled", "seq": i, "at_ms": 1700000000000 + i, "api": "Heartbeat",
         "latency_ms": 0.0123 * i, "client_id": "bench", "member_id": "m" * 36}
        for i in range(256)]
while True:  # busy about half the time, in bursts of a pack's lines
    start = time.perf_counter()
    "".join(json.dumps(row) + "\\n" for row in rows)
    time.sleep((time.perf_counter() - start) * 0.8)
"""


def heartbeats_per_s(host: str, port: int, pid: int | None = None) -> tuple[float, float]:
    """(heartbeats per wall second, heartbeats per server CPU second); ``last_sample`` the rest.

    Nothing but the window's requests is counted: the server is first left to finish its idle
    loading (broker/warm.py: ~220 ms of CPU, run whenever the server has been idle for a ms --
    between two batches of a window too, were it still going), then a priming round of WARMUP
    requests of the kind makes what their first ones make (row makers, codec functions, the
    encoder's first lines), and server and encoder are left to go idle again before the
    window opens."""
    if pid is not None:
        until_idle(pid, 30.0)
    setup = _setup(host, port)
    send_heartbeats(host, port, setup, WARMUP)
    if pid is not None:
        settle(pid)
    frames = Frames(setup)
    sel = selectors.DefaultSelector()
    socks = [socket.create_connection((host, port)) for _ in range(CONNECTIONS)]
    pending, outstanding = {}, {}
    for s in socks:
        s.sendall(frames.take(IN_FLIGHT))
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        pending[s], outstanding[s] = bytearray(), IN_FLIGHT
    done = 0
    children = _children(pid) if pid is not None else []
    everywhere = os.sched_getaffinity(0)
    if PIN and pid is not None:
        first, second = sorted(everywhere)[:2]
        os.sched_setaffinity(pid, {first})
        for each in (0, *children):
            os.sched_setaffinity(each, {second})

    def encoders() -> Usage:
        return sum((usage(c) for c in children), Usage())
    neighbour = (subprocess.Popen([sys.executable, "-c", _NEIGHBOUR_SOURCE])
                 if NEIGHBOUR else None)
    try:
        encoder_start, server_start = encoders(), usage(pid)
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
                        s.sendall(frames.take(more))
                        s.setblocking(False)
                        outstanding[s] += more
        elapsed = time.perf_counter() - start
        server = usage(pid) - server_start
    finally:  # (never left running: it would load every later measurement)
        os.sched_setaffinity(0, everywhere)
        if neighbour is not None:
            neighbour.kill()
            neighbour.wait()
    global last_sample
    last_sample = Sample(done, elapsed, server, encoders() - encoder_start)
    for s in socks:
        s.close()
    cpu_s = server.cpu_ns / 1e9
    return done / elapsed, (done / cpu_s if cpu_s > 0 else float("nan"))


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


def send_heartbeats(host: str, port: int, setup: Setup, count: int) -> None:
    """Send exactly ``count`` requests of the kind measured over CONNECTIONS connections,
    IN_FLIGHT pipelined on each, and return when every one is answered."""
    frames = Frames(setup)
    sel = selectors.DefaultSelector()
    socks = [socket.create_connection((host, port)) for _ in range(CONNECTIONS)]
    sent = answered_all = 0
    pending, outstanding = {}, {}
    for s in socks:
        n = min(IN_FLIGHT, count - sent)
        s.sendall(frames.take(n))
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
                s.sendall(frames.take(more))
                s.setblocking(False)
                sent += more
                outstanding[s] += more
    for s in socks:
        s.close()


def main() -> int:
    global KIND
    args = sys.argv[1:]
    kinds = list(KINDS)
    if "--kind" in args:
        kinds = [args[args.index("--kind") + 1]]
    for kind in kinds:
        KIND = kind  # (read by request_frame and the printing)
        if "--callgrind" in args:  # (its module sets its own copy of this one's KIND)
            from trace_callgrind import callgrind_main
            callgrind_main(kind)
        else:
            timed_main()
    return 0


# the configurations measured by time (any of: off, seam only, on (jsonl), on (gzip)); the
# seam alone runs a server of its own (with the timeline), so its figure is not comparable
TIMED_CONFIGS = os.environ.get("BENCH_TRACE_CONFIGS", "off,on (jsonl),on (gzip)").split(",")


def timed_main() -> int:
    global NEIGHBOUR
    with tempfile.TemporaryDirectory() as tmp:
        # the control plane's timeline (on by default in serve) off throughout: tracing alone
        quiet = ["-c", "emu.timeline.max.events=0"]
        every = {"off": quiet, "seam only": None, "off (busy)": quiet,
                 "on (jsonl)": [*quiet, "--trace-dir", tmp],
                 "on (gzip)": [*quiet, "--trace-dir", tmp, "--trace-compress", "gzip"]}
        configs = {name: every[name] for name in TIMED_CONFIGS}
        samples: dict[str, list[Sample]] = {name: [] for name in configs}
        for _ in range(ROUNDS):  # interleaved: every configuration once per round
            for name, extra in configs.items():
                NEIGHBOUR = name == "off (busy)"
                run(extra)
                assert last_sample is not None
                samples[name].append(last_sample)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tmp) for f in fs)
    shape = " (moving offsets)" if KIND == "OffsetCommit" and MOVING_COMMITS else ""
    print(f"== {KIND}{shape}: server CPU per request, tracing off vs on ({CONNECTIONS} "
          f"connections x "
          f"{IN_FLIGHT} in flight, {WINDOW_S:g} s x {ROUNDS} rounds interleaved, medians"
          f"{'; the server pinned to a CPU of its own' if PIN else ''})")
    print(f"  {'tracing':<12} {'server µs':>9} {'user':>6} {'sys':>6} {'faults':>7} {'ratio':>6}"
          f" {'paired':>6} {'waits':>6} {'preempt':>7}   {'encoder µs':>10} {'incl. enc.':>10}"
          f" {'ratio':>6} {'wall/s':>8}")

    def med(values) -> float:
        return statistics.median(values)

    def of(sample: Sample) -> float:
        return sample.per_request_us(sample.server)

    def both(sample: Sample) -> float:
        return sample.per_request_us(sample.server + sample.encoder)
    base = samples[next(iter(configs))]
    for name, values in samples.items():
        server, total = med(of(v) for v in values), med(both(v) for v in values)
        user = med(v.server.user_s * 1e6 / v.requests for v in values)
        system = med(v.server.sys_s * 1e6 / v.requests for v in values)
        faults = med(v.server.minflt / v.requests for v in values)
        waits = med(v.server.waits * 1000 / v.requests for v in values)
        preempted = med(v.server.preempted * 1000 / v.requests for v in values)
        # (each round's traced server against the same round's untraced one: drift cancels)
        paired = med(of(b) / of(v) for b, v in zip(base, values))
        ratio = med(of(v) for v in base) / server
        verdict = "" if name in ("off", "seam only", "off (busy)") else (
            "  ok" if min(ratio, paired) >= TARGET_RATIO else "  target missed")
        print(f"  {name:<12} {server:9.2f} {user:6.2f} {system:6.2f} {faults:7.3f} {ratio:6.2f}"
              f" {paired:6.2f} {waits:6.1f} {preempted:7.1f}   {total - server:10.2f} {total:10.2f} "
              f"{med(both(v) for v in base) / total:6.2f} "
              f"{med(v.requests / v.wall_s for v in values):8.0f}{verdict}", flush=True)
    print("  (server µs: its CPU per request, exact (schedstat); user and sys: the same from 10 ms"
          " ticks;\n  faults: minor page faults per request; waits, preempt: the server's voluntary and\n  involuntary context switches per 1000 requests; ratio: throughput per server CPU s"
          " against off, of\n  the medians; paired: the median of each round's ratio; encoder"
          " µs: the trace encoder\n  process's CPU per request; incl. enc.: the machine's whole"
          " cost, and its ratio)")
    print(f"  trace bytes written in all rounds: {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
