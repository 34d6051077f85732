"""Wire-level benchmark (issue 14): server CPU per request against the ceilings of its shape.

Not a test: it prints tables and ratios measured in one run and always exits 0.

Every server runs as its own process and is driven over raw sockets by this one (selectors, no
client library) with identical pre-encoded frames, so the only thing that differs is the server:
- kafka-emu: ``python -m kafka_emu serve`` (timeline off; one row with the default timeline on);
- bare trio, per response: a trio server of kafka-emu's shape (one task per connection, frames
  split out of each read, one ``send_all`` per response of a fixed answer) -- the ceiling of that
  shape;
- bare trio, coalesced: the same, all answers to one read in one ``send_all``;
- librdkafka's mock cluster (bench/_mock_cluster.py) in a process of its own.

The figure is the server's CPU time per answered request (the sum of its threads' run time from
/proc/PID/task/*/schedstat, nanosecond resolution), so the load on a shared machine moves it far
less than wall time would. Two ratios, each bare-trio µs / kafka-emu µs (1.0 = as cheap as trio
itself): "ceiling" against the bare server with one ``send_all`` per response, issue 14's "shape"
and its target (>= 0.8) for both loads; "coalesced", for information, against the bare server
that writes all answers to one read at once (pipelined, that server's few µs per request are
less than kafka-emu's own decode, coordinator and encode work, so it is no target). Load:
"pipelined" is 8 connections x 16 requests in flight, "one at a time" 16 connections x 1 in
flight. Requests: Heartbeat v4 and a
one-partition OffsetCommit v8 from the members of a classic group of 10, 100 and 1000 members,
formed over the wire first (JoinGroup v5, SyncGroup v3, one connection per member; an initial
rebalance delay so that they land in one generation; the leader's SyncGroup is sent last, after
a pause, because the mock completes the sync at the leader's and refuses any later one). Every
64th answer is decoded and must carry no error, so only the success path is measured.

Own work: kafka-emu's per-request path -- frame in, response frame out: header and body decoded,
handler, coordinator, response encoded -- run in this process with no socket and no scheduler
(``connection._process`` on a broker whose 100-member group was formed through the same path),
as process CPU per request, the best of many short rounds. It is the part of the server's CPU
per request that is kafka-emu's own; the rest is the connection loop, trio and the kernel. The
server rows also give the kernel's share of the server's CPU (utime/stime from /proc).

Then: DescribeGroups v5 of a 1000-member group (kafka-emu; the mock has no DescribeGroups); group
formation at 1000 and 5000 members (server CPU and wall time, first JoinGroup to last SyncGroup
answer, the initial delay and the pause before the leader's SyncGroup included); memory at 5000 (server RSS growth per idle connection that
has had one ApiVersions answered, per idle member of a formed group, per group holding one
committed offset). The mock takes part up to 1000 members: it stops accepting connections
promptly somewhere below 5000.

    python bench/bench_wire.py [--quick]       BENCH_WIRE_WINDOW_S (default 1.0) per cell
"""

from __future__ import annotations

import argparse
import os
import selectors
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
HERE_ROOT = os.path.dirname(HERE) + os.sep
sys.path.insert(0, HERE)

from _proc_cpu import cpu_ns  # noqa: E402
from kafka_emu.protocol import BY_NAME  # noqa: E402
from kafka_emu.protocol.codec import read_from  # noqa: E402
from kafka_emu.protocol.headers import (ResponseHeader, encode_request,  # noqa: E402
                                        response_header_version)
from kafka_emu.protocol.primitives import Reader  # noqa: E402

WINDOW_S = float(os.environ.get("BENCH_WIRE_WINDOW_S", "1.0"))
WARMUP_S = 0.3
TARGET_RATIO = 0.8
DELAY_MS = 400  # initial rebalance delay: every join of the formation lands in one generation
PIPELINED, ONE_AT_A_TIME = (8, 16), (16, 1)  # (connections, in flight per connection)
MEMORY_DELAY_MS = 3000
GROUP_SIZES = (10, 100, 1000)
FORMATION_SIZES = (1000, 5000)
MOCK_MAX_MEMBERS = 1000
TOPIC = "bench"

API_VERSIONS, JOIN, SYNC = BY_NAME["ApiVersions"], BY_NAME["JoinGroup"], BY_NAME["SyncGroup"]
HEARTBEAT, COMMIT, DESCRIBE = BY_NAME["Heartbeat"], BY_NAME["OffsetCommit"], BY_NAME["DescribeGroups"]
V_JOIN, V_SYNC, V_HEARTBEAT, V_COMMIT, V_DESCRIBE = 5, 3, 4, 8, 5
MEMBER_ID_REQUIRED, REBALANCE_IN_PROGRESS = 79, 27
# a consumer-protocol assignment v0 of no partitions (the mock refuses empty bytes)
EMPTY_ASSIGNMENT = b"\x00\x00" b"\x00\x00\x00\x00" b"\xff\xff\xff\xff"


# -- processes -----------------------------------------------------------------------------

BARE = r"""
import sys, trio
from functools import partial
COALESCE = sys.argv[1] == "1"
BODY = bytes.fromhex(sys.argv[2])          # the answer after its correlation id
SIZE = (4 + len(BODY)).to_bytes(4, "big")

async def connection(stream):
    buf = bytearray()
    try:
        while True:
            data = await stream.receive_some(65536)
            if not data:
                return
            buf += data
            pos, out = 0, []
            while len(buf) - pos >= 4:
                size = int.from_bytes(buf[pos:pos + 4], "big")
                if len(buf) - pos - 4 < size:
                    break
                answer = SIZE + buf[pos + 8:pos + 12] + BODY
                pos += 4 + size
                if COALESCE:
                    out.append(answer)
                else:
                    await stream.send_all(answer)
            del buf[:pos]
            if out:
                await stream.send_all(b"".join(out))
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        pass

async def main():
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, connection, 0, host="127.0.0.1"))
        print("127.0.0.1:%d" % listeners[0].socket.getsockname()[1], flush=True)

trio.run(main)
"""

MOCK = r"""
import sys
sys.path.insert(0, sys.argv[1])
from _mock_cluster import MockCluster
mock = MockCluster(brokers=1, topics={sys.argv[2]: 1}, initial_rebalance_delay_ms=int(sys.argv[3]))
print(mock.bootstrap_servers.split(",")[0], flush=True)
sys.stdin.read()   # until the driver closes our stdin
mock.close()
"""


class Server:
    """A server process: its address, CPU time and RSS; closed as a context manager."""

    def __init__(self, name: str, args: list[str]) -> None:
        self.name = name
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline().strip()
        if not line:
            raise RuntimeError(f"{name} did not start")
        host, _, port = line.rpartition(":")
        self.address = (host, int(port))

    def cpu_ns(self) -> int:
        return cpu_ns(self.proc.pid)

    def user_system_ticks(self) -> tuple[int, int]:
        """(utime, stime) of the whole process in clock ticks (/proc/PID/stat)."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return int(fields[11]), int(fields[12])

    def settle(self, limit_s: float = 10.0) -> None:
        """Wait until the server is quiet (under 2% of a core over 0.1 s): a reading taken while
        it is still answering would catch requests half-way through."""
        deadline = time.monotonic() + limit_s
        before = self.cpu_ns()
        while time.monotonic() < deadline:
            time.sleep(0.1)
            now = self.cpu_ns()
            if now - before < 2_000_000:
                return
            before = now

    def rss_kb(self, field: str = "VmRSS:") -> int:
        self.settle()
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
        return 0

    def rss_peak_kb(self) -> int:
        """The most RSS the process has had (VmHWM)."""
        return self.rss_kb("VmHWM:")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def emu(timeline: bool = False, delay_ms: int = DELAY_MS) -> Server:
    return Server("kafka-emu" + (" (timeline on)" if timeline else ""),
                  _emu_args(timeline, delay_ms))


def _emu_args(timeline: bool = False, delay_ms: int = DELAY_MS) -> list[str]:
    args = [sys.executable, "-m", "kafka_emu", "serve", "--port", "0", "--log-level", "ERROR",
            "--topic", f"{TOPIC}:1", "-c", f"group.initial.rebalance.delay.ms={delay_ms}",
            "-c", "connections.max.idle.ms=3600000"]
    if not timeline:
        args += ["-c", "emu.timeline.max.events=0"]
    return args


def bare(coalesce: bool, body: bytes) -> Server:
    return Server(f"bare trio, {'coalesced' if coalesce else 'per response'}",
                  [sys.executable, "-c", BARE, "1" if coalesce else "0", body.hex()])


def mock(delay_ms: int = DELAY_MS) -> Server:
    return Server("librdkafka mock", [sys.executable, "-c", MOCK, HERE, TOPIC, str(delay_ms)])


# -- the driver ----------------------------------------------------------------------------

class Link:
    """One non-blocking client connection: frames out, whole response frames in."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.sock = socket.create_connection(address, timeout=10)  # the mock stops accepting
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.inbuf = bytearray()
        self.outbuf = bytearray()
        self.tag = None  # whatever the user of the link keeps with it

    def send(self, data: bytes) -> None:
        """Queue ``data``; ``pump`` writes each link's queue in one send per round, as a
        pipelining client does (a send per frame would hand the server one frame per read)."""
        self.outbuf += data

    def flush(self) -> None:
        try:
            while self.outbuf:
                n = self.sock.send(self.outbuf)
                del self.outbuf[:n]
        except BlockingIOError:
            pass

    def receive(self) -> list[bytes]:
        try:
            data = self.sock.recv(1 << 18)
        except BlockingIOError:
            return []
        if not data:
            raise ConnectionError("server closed the connection")
        buf = self.inbuf
        buf += data
        frames, pos = [], 0
        while len(buf) - pos >= 4:
            (size,) = struct.unpack_from(">i", buf, pos)
            if len(buf) - pos - 4 < size:
                break
            frames.append(bytes(buf[pos + 4:pos + 4 + size]))
            pos += 4 + size
        del buf[:pos]
        return frames

    def close(self) -> None:
        self.sock.close()


def pump(links: list[Link], on_frame: Callable[[Link, bytes], None], until: Callable[[], bool],
         limit_s: float = 120.0) -> None:
    sel = selectors.DefaultSelector()
    for link in links:
        sel.register(link.sock, selectors.EVENT_READ, link)
    deadline = time.monotonic() + limit_s
    try:
        while not until():
            for link in links:
                if link.outbuf:
                    link.flush()
            if time.monotonic() > deadline:
                raise TimeoutError("no progress within the time limit")
            for key, _ in sel.select(timeout=0.5):
                link = key.data
                for frame in link.receive():
                    on_frame(link, frame)
    finally:
        sel.close()


def request(api, version: int, body, correlation_id: int = 1) -> bytes:
    return encode_request(api, version, correlation_id, "bench-wire", body)


def decode(api, version: int, frame: bytes):
    r = Reader(frame)
    read_from(ResponseHeader, response_header_version(api, version), r)
    return read_from(api.response, version, r)


def call(address: tuple[str, int], api, version: int, body):
    link = Link(address)
    got: list[bytes] = []
    link.send(request(api, version, body))
    pump([link], lambda _, f: got.append(f), lambda: bool(got), 30)
    link.close()
    return decode(api, version, got[0])


# -- group formation -------------------------------------------------------------------------

class Group:
    def __init__(self, group_id: str, links: list[Link], members: list[str], generation: int,
                 wall_s: float, cpu_s: float) -> None:
        self.group_id, self.links, self.members = group_id, links, members
        self.generation, self.wall_s, self.cpu_s = generation, wall_s, cpu_s

    def close(self) -> None:
        for link in self.links:
            link.close()


def form_group(server: Server, group_id: str, n: int, links: list[Link] | None = None) -> Group:
    """N members join over N connections and sync in one generation (see DELAY_MS)."""
    from kafka_emu.protocol.messages.join_group import JoinGroupRequestProtocol
    from kafka_emu.protocol.messages.sync_group import SyncGroupRequestAssignment
    links = links or [Link(server.address) for _ in range(n)]
    protocols = [JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01\x00\x00\x00\x01"
                                                                  b"\x00\x05bench\x00\x00\x00\x00")]

    def join(link: Link, member_id: str) -> None:
        link.tag = ["join", member_id, -1]
        link.send(request(JOIN, V_JOIN, JOIN.request(
            group_id=group_id, session_timeout_ms=300_000, rebalance_timeout_ms=120_000,
            member_id=member_id, group_instance_id=None, protocol_type="consumer",
            protocols=protocols)))

    synced: dict[Link, int] = {}
    joined: dict[Link, int] = {}  # generation each member joined
    leader: dict[int, tuple[Link, bytes]] = {}  # the leader's SyncGroup, held back

    def on_frame(link: Link, frame: bytes) -> None:
        step, member_id, _ = link.tag
        if step == "join":
            r = decode(JOIN, V_JOIN, frame)
            if r.error_code == MEMBER_ID_REQUIRED or (r.error_code == REBALANCE_IN_PROGRESS):
                join(link, r.member_id or member_id)
                return
            if r.error_code:
                raise RuntimeError(f"JoinGroup failed: error {r.error_code}")
            assignments = [SyncGroupRequestAssignment(member_id=m.member_id,
                                                      assignment=EMPTY_ASSIGNMENT)
                           for m in r.members]  # only the leader has members
            link.tag = ["sync", r.member_id, r.generation_id]
            sync = request(SYNC, V_SYNC, SYNC.request(
                group_id=group_id, generation_id=r.generation_id, member_id=r.member_id,
                group_instance_id=None, assignments=assignments))
            if assignments:
                leader[r.generation_id] = (link, sync)
            else:
                link.send(sync)
            joined[link] = r.generation_id
            in_generation = sum(1 for g in joined.values() if g == r.generation_id)
            if in_generation == n and r.generation_id in leader:
                # The leader syncs last: the mock completes the sync at the leader's SyncGroup
                # and refuses (INVALID_REQUEST) any SyncGroup that arrives after it.
                for other in joined:
                    other.flush()
                time.sleep(0.2 + n / 2000)
                leader_link, frame = leader.pop(r.generation_id)
                leader_link.send(frame)
        else:
            # SyncGroup v3: correlation id, throttle time, error code, assignment. Only the
            # error code is read: the mock answers an empty assignment as null bytes.
            (error_code,) = struct.unpack_from(">h", frame, 8)
            if error_code == REBALANCE_IN_PROGRESS:
                joined.pop(link, None)
                join(link, member_id)
                return
            if error_code:
                raise RuntimeError(f"SyncGroup failed: error {error_code}")
            synced[link] = link.tag[2]

    cpu0, t0 = server.cpu_ns(), time.perf_counter()
    for link in links:
        join(link, "")
    pump(links, on_frame, lambda: len(synced) == n, limit_s=60 + n / 25)
    wall, cpu = time.perf_counter() - t0, (server.cpu_ns() - cpu0) / 1e9
    generations = set(synced.values())
    if len(generations) != 1:
        raise RuntimeError(f"members synced in several generations: {sorted(generations)}")
    return Group(group_id, links, [link.tag[1] for link in links], generations.pop(), wall, cpu)


def member_frames(api_name: str, group: Group) -> list[bytes]:
    frames = []
    for i, member_id in enumerate(group.members):
        if api_name == "Heartbeat":
            frames.append(request(HEARTBEAT, V_HEARTBEAT, HEARTBEAT.request(
                group_id=group.group_id, generation_id=group.generation, member_id=member_id,
                group_instance_id=None), i))
        else:
            from kafka_emu.protocol.messages.offset_commit import (
                OffsetCommitRequestPartition as P, OffsetCommitRequestTopic as T)
            frames.append(request(COMMIT, V_COMMIT, COMMIT.request(
                group_id=group.group_id, generation_id_or_member_epoch=group.generation,
                member_id=member_id, group_instance_id=None, topics=[T(name=TOPIC, partitions=[
                    P(partition_index=0, committed_offset=i, committed_metadata="")])]), i))
    return frames


def errors_of(api_name: str, frame: bytes) -> set[int]:
    if api_name == "Heartbeat":
        return {decode(HEARTBEAT, V_HEARTBEAT, frame).error_code}
    r = decode(COMMIT, V_COMMIT, frame)
    return {p.error_code for t in r.topics for p in t.partitions}


# -- load ----------------------------------------------------------------------------------

def load(server: Server, frames: list[bytes], shape: tuple[int, int],
         check: Callable[[bytes], set[int]] | None = None, window_s: float = WINDOW_S) -> float:
    """Server CPU µs per answered request under ``shape`` = (connections, in flight each)."""
    connections, depth = shape
    links = [Link(server.address) for _ in range(connections)]
    state = {"next": 0, "answered": 0, "phase": "warm", "errors": set()}

    def send_one(link: Link) -> None:
        i = state["next"]
        state["next"] = i + 1
        link.send(frames[i % len(frames)])

    def on_frame(link: Link, frame: bytes) -> None:
        state["answered"] += 1
        if check is not None and state["answered"] % 64 == 1:
            state["errors"] |= check(frame)
        send_one(link)

    for link in links:
        for _ in range(depth):
            send_one(link)
    try:
        end = time.monotonic() + WARMUP_S
        pump(links, on_frame, lambda: time.monotonic() >= end)
        cpu0, answered0 = server.cpu_ns(), state["answered"]
        ticks0 = server.user_system_ticks()
        end = time.monotonic() + window_s
        pump(links, on_frame, lambda: time.monotonic() >= end)
        cpu, answered = server.cpu_ns() - cpu0, state["answered"] - answered0
        user, system = (b - a for a, b in zip(ticks0, server.user_system_ticks()))
        kernel_share[server.name] = system / max(user + system, 1)
    finally:
        for link in links:
            link.close()
    if state["errors"] - {0}:
        raise RuntimeError(f"{server.name} answered with errors {sorted(state['errors'])}")
    return cpu / 1000 / max(answered, 1)


# the kernel's share of a server's CPU in its latest load() window, by server name
kernel_share: dict[str, float] = {}


# -- own work: the request path in this process ------------------------------------------------

def own_work(rounds: int = 60, per_round: int = 1000, members: int = 100) -> dict[str, float]:
    """kafka-emu's own CPU µs per Heartbeat and per one-partition OffsetCommit, in process."""
    import trio

    from kafka_emu.broker import connection
    from kafka_emu.broker.config import BrokerConfig
    from kafka_emu.broker.context import ConnectionInfo
    from kafka_emu.broker.request_facts import answer_parked
    from kafka_emu.broker.state import Broker, Pending
    from kafka_emu.protocol.messages.join_group import JoinGroupRequestProtocol
    from kafka_emu.protocol.messages.sync_group import SyncGroupRequestAssignment

    class Conn:  # what _process reads of a connection
        def __init__(self, i: int) -> None:
            self.id, self.peer, self.out = i, "127.0.0.1:1", []
            self.auth = None  # a PLAINTEXT connection: no SASL gate

    def answer(api, version: int, frame: bytearray):
        return decode(api, version, bytes(frame[4:]))

    async def process(broker, conn, info, frame: bytes):
        """``connection._process``, waiting for a parked JoinGroup/SyncGroup and answering it as
        the connection's loop does (``serve_connection``)."""
        out = await connection._process(broker, conn, info, frame)
        if out.__class__ is Pending:
            await out.done.wait()
            out = answer_parked(broker, conn, out)
        return out

    async def run() -> dict[str, float]:
        broker = Broker(BrokerConfig.from_kafka({"group.initial.rebalance.delay.ms": "200",
                                                 "emu.timeline.max.events": "0"}))
        broker.topics.create(TOPIC, 1)
        info = ConnectionInfo("127.0.0.1", 1, "127.0.0.1", 9092)
        protocols = [JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01\x00\x00\x00\x01"
                                                                      b"\x00\x05bench\x00\x00\x00\x00")]
        joined: dict[str, int] = {}

        async def member(i: int) -> None:
            conn, member_id = Conn(i), ""
            while True:
                r = answer(JOIN, V_JOIN, await process(broker, conn, info, request(
                    JOIN, V_JOIN, JOIN.request(
                        group_id="own", session_timeout_ms=300_000, rebalance_timeout_ms=60_000,
                        member_id=member_id, group_instance_id=None, protocol_type="consumer",
                        protocols=protocols))[4:]))
                if r.error_code != MEMBER_ID_REQUIRED:
                    break
                member_id = r.member_id
            assignments = [SyncGroupRequestAssignment(member_id=m.member_id,
                                                      assignment=EMPTY_ASSIGNMENT)
                           for m in r.members]
            s = answer(SYNC, V_SYNC, await process(broker, conn, info, request(
                SYNC, V_SYNC, SYNC.request(group_id="own", generation_id=r.generation_id,
                                           member_id=r.member_id, group_instance_id=None,
                                           assignments=assignments))[4:]))
            if r.error_code or s.error_code:
                raise RuntimeError(f"formation failed: {r.error_code} {s.error_code}")
            joined[r.member_id] = r.generation_id

        async with trio.open_nursery() as nursery:
            nursery.start_soon(broker.run_timers)
            for i in range(members):
                nursery.start_soon(member, i)
            while len(joined) < members:
                await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
        group = Group("own", [], list(joined), next(iter(joined.values())), 0.0, 0.0)
        conn, figures = Conn(0), {}
        for api_name in ("Heartbeat", "OffsetCommit"):
            frames = [f[4:] for f in member_frames(api_name, group)]
            if errors_of(api_name, bytes(await connection._process(broker, conn, info,
                                                                   frames[0]))[4:]) - {0}:
                raise RuntimeError(f"{api_name} answered with an error")
            best = float("inf")
            for _ in range(rounds):
                t0 = time.process_time_ns()
                for k in range(per_round):
                    await connection._process(broker, conn, info, frames[k % members])
                best = min(best, (time.process_time_ns() - t0) / per_round / 1000)
            figures[api_name] = best
        return figures

    return trio.run(run)


def print_own_work(figures: dict[str, float], rounds: int) -> None:
    print(f"== own work per request, in process (frame in -> response frame out, no socket; best of "
          f"{rounds} rounds, 100-member group): Heartbeat v{V_HEARTBEAT} "
          f"{figures['Heartbeat']:.1f} µs (target <= 8), one-partition OffsetCommit v{V_COMMIT} "
          f"{figures['OffsetCommit']:.1f} µs (target <= 15)")


# -- report --------------------------------------------------------------------------------

def _ratio(ceiling: float | None, value: float | None) -> str:
    return f"{ceiling / value:5.2f}" if ceiling and value else "  n/a"


def wire_table(sizes: tuple[int, ...], *, with_mock: bool) -> dict:
    results: dict = {}
    shapes = {"pipelined": PIPELINED, "one at a time": ONE_AT_A_TIME}
    servers = [emu()] + ([mock()] if with_mock else [])
    try:
        for size in sizes:
            groups = {}
            for server in servers:
                try:
                    groups[server.name] = form_group(server, f"bench-{size}", size)
                except Exception as exc:  # noqa: BLE001 - one server's failure, reported, not fatal
                    print(f"  ({server.name}: no group of {size}: {exc})")
            for api_name in ("Heartbeat", "OffsetCommit"):
                for shape_name, shape in shapes.items():
                    for server in servers:
                        group = groups.get(server.name)
                        if group is None:
                            continue
                        frames = member_frames(api_name, group)
                        check = (lambda f, a=api_name: errors_of(a, f))
                        try:
                            results[(server.name, api_name, shape_name, size)] = load(
                                server, frames, shape, check)
                        except Exception as exc:  # noqa: BLE001 - one server's failure, reported, not fatal
                            print(f"  ({server.name} {api_name} {shape_name} {size}: {exc})")
            for group in groups.values():
                group.close()
        # the default timeline (on) for one cell: what observation costs, for comparison
        with emu(timeline=True) as server:
            group = form_group(server, "bench-100", 100)
            results[(server.name, "Heartbeat", "pipelined", 100)] = load(
                server, member_frames("Heartbeat", group), PIPELINED)
            group.close()
    finally:
        for server in servers:
            server.close()
    # the bare servers answer every frame with kafka-emu's answer to it
    sample: dict[str, bytes | None] = {"Heartbeat": None, "OffsetCommit": None}
    with emu() as server:
        group = form_group(server, "sample", 1)
        for api_name in sample:
            link = Link(server.address)
            got: list[bytes] = []
            link.send(member_frames(api_name, group)[0])
            pump([link], lambda _, f: got.append(f), lambda: bool(got), 30)
            sample[api_name] = got[0][4:]  # after the correlation id
            link.close()
        group.close()
    for coalesce in (False, True):
        for api_name, body in sample.items():
            with bare(coalesce, body) as server:
                frames = [request(HEARTBEAT if api_name == "Heartbeat" else COMMIT,
                                  V_HEARTBEAT if api_name == "Heartbeat" else V_COMMIT,
                                  (HEARTBEAT.request(group_id="bench-100", generation_id=1,
                                                     member_id="m", group_instance_id=None)
                                   if api_name == "Heartbeat" else
                                   COMMIT.request(group_id="bench-100", topics=[])))]
                for shape_name, shape in shapes.items():
                    results[(server.name, api_name, shape_name, None)] = load(server, frames,
                                                                              shape)
    return results


def print_wire(results: dict, sizes: tuple[int, ...]) -> None:
    print(f"== server CPU µs per request (Heartbeat v{V_HEARTBEAT}, one-partition OffsetCommit "
          f"v{V_COMMIT}; pipelined {PIPELINED[0]} conns x {PIPELINED[1]}, one at a time "
          f"{ONE_AT_A_TIME[0]} conns x 1; {WINDOW_S:g} s per cell)")
    print(f"  {'request':<13} {'load':<14} {'members':>7} {'kafka-emu':>9} {'bare/rsp':>8} "
          f"{'bare/coal':>9} {'mock':>7}  {'ceiling ratio':>13} {'coalesced':>9} "
          f"{'mock ratio':>10}")
    for api_name in ("Heartbeat", "OffsetCommit"):
        for shape_name in ("pipelined", "one at a time"):
            per = results.get(("bare trio, per response", api_name, shape_name, None))
            coal = results.get(("bare trio, coalesced", api_name, shape_name, None))
            # the target's ceiling, for both loads: issue 14's shape, one send_all per response
            for size in sizes:
                e = results.get(("kafka-emu", api_name, shape_name, size))
                m = results.get(("librdkafka mock", api_name, shape_name, size))
                ok = e is not None and per is not None and per / e >= TARGET_RATIO
                print(f"  {api_name:<13} {shape_name:<14} {size:>7} {_f(e):>9} {_f(per):>8} "
                      f"{_f(coal):>9} {_f(m):>7}  {_ratio(per, e):>7} "
                      f"{'ok' if ok else 'missed':<5} {_ratio(coal, e):>9} {_ratio(m, e):>10}")
    print(f"  ceiling ratio: bare/rsp / kafka-emu (target >= {TARGET_RATIO}); coalesced: "
          "bare/coal / kafka-emu (information only)")
    shares = ", ".join(f"{name} {share:.0%}" for name, share in kernel_share.items())
    print(f"  kernel share of server CPU in each server's last window: {shares}")
    on = results.get(("kafka-emu (timeline on)", "Heartbeat", "pipelined", 100))
    off = results.get(("kafka-emu", "Heartbeat", "pipelined", 100))
    if on and off:
        print(f"  Heartbeat pipelined, 100 members, timeline on: {on:.1f} µs "
              f"(throughput per CPU s {off / on:.2f} of timeline off; target >= 0.90)")


def _f(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else "-"


# -- DescribeGroups, formation, memory -----------------------------------------------------------

def describe_and_formation(sizes: tuple[int, ...], with_mock: bool) -> None:
    print(f"== group formation (JoinGroup v{V_JOIN} + SyncGroup v{V_SYNC}, one connection per "
          f"member, initial rebalance delay {DELAY_MS} ms included in wall time)")
    print(f"  {'server':<16} {'members':>7} {'wall ms':>8} {'server CPU ms':>13} "
          f"{'CPU µs/member':>13}")
    for size in sizes:
        # the mock stops accepting connections well below 5000 (connects then stall for
        # seconds each), so it forms groups of up to MOCK_MAX_MEMBERS only
        for make in ([emu, mock] if with_mock and size <= MOCK_MAX_MEMBERS else [emu]):
            with make() as server:
                try:
                    group = form_group(server, "formation", size)
                except Exception as exc:  # noqa: BLE001 - one server's failure, reported, not fatal
                    print(f"  {server.name:<16} {size:>7} failed: {exc}")
                    continue
                print(f"  {server.name:<16} {size:>7} {group.wall_s * 1000:8.0f} "
                      f"{group.cpu_s * 1000:13.0f} {group.cpu_s * 1e6 / size:13.1f}")
                if server.name == "kafka-emu" and size == 1000:
                    from kafka_emu.protocol.messages.describe_groups import DescribeGroupsRequest
                    frame = request(DESCRIBE, V_DESCRIBE, DescribeGroupsRequest(
                        groups=["formation"], include_authorized_operations=False))
                    got = decode(DESCRIBE, V_DESCRIBE, _one(server, frame))
                    assert len(got.groups[0].members) == size, "DescribeGroups lost members"
                    us = load(server, [frame], (1, 4), window_s=max(WINDOW_S, 1.0))
                    describe_us[size] = us
                group.close()
    for size, us in describe_us.items():
        print(f"== DescribeGroups v{V_DESCRIBE} of a {size}-member group: {us:.0f} µs of server CPU "
              f"per request ({us / size:.2f} µs per member; the mock has no DescribeGroups)")


describe_us: dict[int, float] = {}


def _one(server: Server, frame: bytes) -> bytes:
    link = Link(server.address)
    got: list[bytes] = []
    link.send(frame)
    pump([link], lambda _, f: got.append(f), lambda: bool(got), 30)
    link.close()
    return got[0]


class Traced(Server):
    """kafka-emu under tracemalloc (bench/_traced_serve.py): ``reading()`` is the bytes
    tracemalloc holds, in KB, and with ``frames`` > 0 each reading also leaves a snapshot."""

    def __init__(self, args: list[str], frames: int) -> None:
        import tempfile
        self.dir = tempfile.mkdtemp(prefix="bench-wire-traced-")
        self.frames, self.count = frames, 0
        self.live: list[float] = []
        self.peak: list[float] = []
        super().__init__("kafka-emu (tracemalloc)",
                         [sys.executable, os.path.join(HERE, "_traced_serve.py"),
                          os.path.join(self.dir, "r"), str(frames), *args[3:]])

    def reading(self) -> float:
        """KB held now, garbage included (the ``live`` figure after collecting it is kept in
        ``self.live``, one per reading)."""
        import signal
        path = os.path.join(self.dir, f"r.{self.count}")
        self.count += 1
        self.settle()
        os.kill(self.proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 120
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise TimeoutError("the traced server wrote no reading")
            time.sleep(0.05)
        with open(path) as f:
            held, live, peak = (int(v) / 1024 for v in f.read().split())
        self.live.append(live)
        self.peak.append(peak)
        return held

    def top(self, first: int, second: int, n: int, limit: int = 12) -> None:
        """Where the traced growth from reading ``first`` to ``second`` was allocated, per
        unit of ``n``."""
        import tracemalloc
        old, new = (tracemalloc.Snapshot.load(os.path.join(self.dir, f"r.{i}.snap"))
                    for i in (first, second))
        key = "traceback" if self.frames > 1 else "lineno"
        for stat in new.compare_to(old, key)[:limit]:
            where = " <- ".join(f"{f.filename.rpartition('site-packages/')[2].rpartition(HERE_ROOT)[2]}"
                                f":{f.lineno}" for f in reversed(stat.traceback))
            print(f"      {stat.size_diff / n:6.0f} B {stat.count_diff / n:5.2f} blocks  {where}")

    def close(self) -> None:
        import shutil
        super().close()
        shutil.rmtree(self.dir, ignore_errors=True)


def memory(n: int, with_mock: bool, traced: bool = False, profile_frames: int = 0) -> None:
    """Server growth per idle connection, idle member and group, read as RSS (/proc VmRSS) from
    each server, and with ``traced`` as bytes held under tracemalloc from kafka-emu in a
    separate run (Python's own view: no allocator slack, no interpreter or libc arenas)."""
    print(f"== memory at {n}: server growth (KB) per idle connection (one ApiVersions "
          f"answered), per idle member (formed group), per group holding one committed offset; "
          f"load average {os.getloadavg()[0]:.2f}")
    # A longer initial delay than formation's: on a loaded machine a pause of the server
    # between two joins longer than 400 ms completes the join with the members so far, and the
    # leader, whose SyncGroup the driver holds back, then never rejoins: the formation stalls
    # for the rebalance timeout (seen at 5000 under a load average of 10, before and after).
    makers: list[Callable[[], Server]] = [lambda: emu(delay_ms=MEMORY_DELAY_MS)]
    if with_mock and n <= MOCK_MAX_MEMBERS:
        makers.append(mock)
    if traced or profile_frames:
        makers.append(lambda: Traced(_emu_args(delay_ms=MEMORY_DELAY_MS), profile_frames))
    for make in makers:
        with make() as server:
            _memory_of(server, n)


def _memory_of(server: Server, n: int) -> None:
    traced = isinstance(server, Traced)
    # a phase's growth: its end reading less its start; under tracemalloc a phase starts from
    # the live figure (the reading collects the garbage before it) and ends at the held one
    reading = server.reading if traced else server.rss_kb

    def start() -> float:
        return (reading(), server.live[-1])[1] if traced else reading()
    what = "tracemalloc" if traced else "RSS"
    av = request(API_VERSIONS, 0, API_VERSIONS.request())
    _one(server, av)
    time.sleep(0.2)
    base = start()
    links = [Link(server.address) for _ in range(n)]
    answered = [0]

    def count(_, __) -> None:
        answered[0] += 1
    for link in links:
        link.send(av)
    pump(links, count, lambda: answered[0] == n)
    time.sleep(0.2)
    with_conns = reading()
    per_group = "-"
    if server.name.startswith("kafka-emu"):
        from kafka_emu.protocol.messages.offset_commit import (
            OffsetCommitRequestPartition as P, OffsetCommitRequestTopic as T)
        frames = [request(COMMIT, V_COMMIT, COMMIT.request(
            group_id=f"offsets-{i}", topics=[T(name=TOPIC, partitions=[
                P(partition_index=0, committed_offset=i, committed_metadata="")])]), i)
            for i in range(n)]
        before = start()
        done = [0]

        def counted(_, __) -> None:
            done[0] += 1
        one = Link(server.address)
        one.send(b"".join(frames))
        pump([one], counted, lambda: done[0] == n)
        one.close()
        time.sleep(0.2)
        per_group = f"{(reading() - before) / n:.2f}"
    before_members = start()
    try:
        group = form_group(server, "memory", n, links)
        time.sleep(0.2)
        member = f"{(reading() - before_members) / n:.2f}"
        if not traced:
            # RSS only ever grows in the phases before, so the high-water mark now is the most
            # the formation took: how much of it came back is the difference
            member += f" (peak {(server.rss_peak_kb() - before_members) / n:.2f})"
    except Exception as exc:  # noqa: BLE001 - one server's failure, reported, not fatal
        member, group = f"failed ({exc})", None
    name = "kafka-emu" if traced else server.name
    print(f"  {name:<16} {what:<11} connection {(with_conns - base) / n:6.2f}   member "
          f"{member}   group+offset {per_group}   (targets: connection < 4, member < 2)")
    if traced and group is not None:
        # each phase from the live figure at its start (the collection at a reading frees
        # the garbage before it): held includes the phase's uncollected cycles, live not
        live, peak = server.live, server.peak
        print(f"  {name:<16} {'live (gc)':<11} connection {(live[1] - live[0]) / n:6.2f}   "
              f"member {(live[5] - live[4]) / n:.2f}   group+offset {(live[3] - live[2]) / n:.2f}")
        print(f"  {name:<16} {'peak':<11} connection {(peak[1] - live[0]) / n:6.2f}   "
              f"member {(peak[5] - live[4]) / n:.2f}   group+offset {(peak[3] - live[2]) / n:.2f}"
              "   (the most held at once during the phase)")
    if traced and server.frames:
        print("    per connection, by allocation site (bytes, blocks):")
        server.top(0, 1, n)
        print("    per member:")
        server.top(4, 5, n)
    if group is not None:
        group.close()
    else:
        for link in links:
            link.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 members only, no mock")
    parser.add_argument("--no-mock", action="store_true")
    parser.add_argument("--only", choices=("own", "wire", "formation", "memory"))
    parser.add_argument("--tracemalloc", action="store_true",
                        help="memory: also measure kafka-emu under tracemalloc (a separate run)")
    parser.add_argument("--profile", type=int, default=0, metavar="FRAMES",
                        help="memory: with tracemalloc, list where the growth was allocated "
                             "(tracebacks of FRAMES frames)")
    args = parser.parse_args()
    with_mock = not (args.quick or args.no_mock)
    sizes = (100,) if args.quick else GROUP_SIZES
    if args.only in (None, "own"):
        rounds = 20 if args.quick else 60
        print_own_work(own_work(rounds), rounds)
    if args.only in (None, "wire"):
        print_wire(wire_table(sizes, with_mock=with_mock), sizes)
    if args.only in (None, "formation"):
        describe_and_formation((1000,) if args.quick else FORMATION_SIZES, with_mock)
    if args.only in (None, "memory"):
        memory(1000 if args.quick else 5000, with_mock, args.tracemalloc, args.profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
