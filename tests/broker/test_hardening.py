"""Nothing a client does stops the server, and the server's resources stay bounded (issue #8).

Each test is named for what broke or what is bounded: resets before the connection task starts,
idle connections, slow frames, parked requests of clients that have gone, connection caps.
"""

from __future__ import annotations

import logging
import socket
import struct

import trio

from kafka_emu.broker.events import ConnectionClosed
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from kafka_emu.testing import run_in_thread
from kafka_emu.testing.wire import WireClient

from test_server import JOIN, join_as_new_member, join_request

API_VERSIONS = BY_NAME["ApiVersions"]
FETCH = BY_NAME["Fetch"]


def reset_connection(host: str, port: int) -> None:
    """Connect and close with SO_LINGER 0: the peer sees an RST, not a FIN (a killed client)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.connect((host, port))
    s.close()


def api_versions_sync(host: str, port: int) -> int:
    from kafka_emu.protocol.headers import encode_request
    from kafka_emu.protocol import decode
    from kafka_emu.protocol.messages.api_versions import ApiVersionsResponse
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(encode_request(API_VERSIONS, 0, 7, "hardening", ApiVersionsRequest()))
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = s.recv(65536)
            assert chunk, "connection closed"
            data += chunk
    return decode(ApiVersionsResponse, 0, data[8:]).error_code


def test_connect_and_reset_a_thousand_times_leaves_run_in_thread_serving():
    with run_in_thread() as emu:
        for _ in range(1000):
            reset_connection(emu.host, emu.port)
        assert api_versions_sync(emu.host, emu.port) == ErrorCode.NONE
        assert emu.unexpected_errors() == []


async def test_idle_connection_is_closed_after_connections_max_idle_ms(start_broker, autojump_clock):
    seen = []
    bound = await start_broker({"connections.max.idle.ms": 5000}, observer=seen.append)
    client = await WireClient.connect(bound.host, bound.port)
    await client.request(API_VERSIONS, 0, ApiVersionsRequest())
    start = trio.current_time()
    assert await client.receive_frame() is None  # the broker closed it
    assert 5 <= trio.current_time() - start < 6
    closed = [e for e in seen if isinstance(e, ConnectionClosed)]
    assert "connections.max.idle.ms" in closed[-1].reason


async def test_busy_connection_is_not_idle(start_broker, autojump_clock):
    bound = await start_broker({"connections.max.idle.ms": 5000})
    client = await WireClient.connect(bound.host, bound.port)
    for _ in range(5):  # 20 s of traffic, never 5 s apart
        await trio.sleep(4)
        resp = await client.request(API_VERSIONS, 0, ApiVersionsRequest())
        assert resp.error_code == ErrorCode.NONE


async def test_slowloris_frame_is_timed_out(start_broker, autojump_clock):
    seen = []
    bound = await start_broker({"emu.frame.read.timeout.ms": 2000}, observer=seen.append)
    client = await WireClient.connect(bound.host, bound.port)
    start = trio.current_time()
    await client.send_raw(struct.pack(">i", 100) + b"\x00\x12")  # a frame that never completes
    for _ in range(10):  # a byte a second keeps it from being idle, not from timing out
        await trio.sleep(0.5)
        try:
            await client.send_raw(b"\x00")
        except trio.BrokenResourceError:
            break
    assert await client.receive_frame() is None
    assert trio.current_time() - start < 3
    assert "emu.frame.read.timeout.ms" in [e for e in seen if isinstance(e, ConnectionClosed)][-1].reason


def _fetch_request(topic: str) -> FetchRequest:
    return FetchRequest(replica_id=-1, max_wait_ms=600_000, min_bytes=1, max_bytes=1 << 20,
                        topics=[FetchTopic(topic=topic, partitions=[
                            FetchPartition(partition=0, fetch_offset=0,
                                           partition_max_bytes=1 << 20)])])


async def test_long_poll_fetch_is_released_when_its_client_goes(start_broker):
    closed = trio.Event()
    reasons = []

    def observe(event):
        if isinstance(event, ConnectionClosed):
            reasons.append(event.reason)
            closed.set()

    bound = await start_broker(topics={"quiet": 1}, observer=observe)
    client = await WireClient.connect(bound.host, bound.port)
    await client.send(FETCH, 11, _fetch_request("quiet"))
    await trio.sleep(0.05)
    await client.aclose()
    with trio.fail_after(30):  # a hang guard: the long poll itself would wait 600 s
        await closed.wait()
    assert reasons == ["closed by peer while its request was parked"]
    assert bound.broker.topics._watches == {}  # its partitions are no longer watched


async def test_parked_join_is_forgotten_when_its_client_goes(start_broker):
    closed = trio.Event()
    bound = await start_broker({"group.initial.rebalance.delay.ms": 600_000},
                               observer=lambda e: isinstance(e, ConnectionClosed) and closed.set())
    client = await WireClient.connect(bound.host, bound.port)
    member = await join_as_new_member(client)
    await client.send(JOIN, 5, join_request(member_id=member))
    while not bound.broker.pending:
        await trio.sleep(0.01)
    await client.aclose()
    with trio.fail_after(30):
        await closed.wait()
    assert bound.broker.pending == {}


async def test_parked_sync_is_forgotten_when_its_client_goes(start_broker, autojump_clock):
    from kafka_emu.protocol.messages.sync_group import SyncGroupRequest
    reasons = []
    closed = trio.Event()

    def observe(event):
        if isinstance(event, ConnectionClosed):
            reasons.append(event.reason)
            closed.set()

    # a 3 s initial delay lets both members into the first generation
    bound = await start_broker({"group.initial.rebalance.delay.ms": 3000}, observer=observe)
    a = await WireClient.connect(bound.host, bound.port)
    b = await WireClient.connect(bound.host, bound.port)
    ids = [await join_as_new_member(a), await join_as_new_member(b)]
    joined = {}

    async def join(client, member_id):
        joined[member_id] = await client.request(JOIN, 5, join_request(member_id=member_id))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(join, a, ids[0])
        nursery.start_soon(join, b, ids[1])
    leader = joined[ids[0]].leader
    follower, follower_id = (b, ids[1]) if leader == ids[0] else (a, ids[0])
    await follower.send(BY_NAME["SyncGroup"], 5, SyncGroupRequest(
        group_id="g", generation_id=1, member_id=follower_id, protocol_type="consumer",
        protocol_name="range", assignments=[]))  # parks until the leader syncs
    while not bound.broker.pending:
        await trio.sleep(0.01)
    await follower.aclose()
    with trio.fail_after(30):
        await closed.wait()
    assert reasons == ["closed by peer while its request was parked"]
    assert bound.broker.pending == {}


async def test_responses_before_a_parked_request_are_not_held_back(start_broker):
    bound = await start_broker({"group.initial.rebalance.delay.ms": 600_000})
    client = await WireClient.connect(bound.host, bound.port)
    member = await join_as_new_member(client)
    # pipelined in one write: an ApiVersions answered at once, then a JoinGroup that parks
    from kafka_emu.protocol.headers import encode_request
    await client.send_raw(encode_request(API_VERSIONS, 0, 91, "w", ApiVersionsRequest())
                          + encode_request(JOIN, 5, 92, "w", join_request(member_id=member)))
    with trio.fail_after(30):
        resp = await client.receive(API_VERSIONS, 0, 91)
    assert resp.error_code == ErrorCode.NONE


async def test_max_connections_holds_back_accepting_until_one_closes(start_broker):
    bound = await start_broker({"max.connections": 2})
    first = await WireClient.connect(bound.host, bound.port)
    second = await WireClient.connect(bound.host, bound.port)
    assert (await first.request(API_VERSIONS, 0, ApiVersionsRequest())).error_code == 0
    assert (await second.request(API_VERSIONS, 0, ApiVersionsRequest())).error_code == 0
    third = await WireClient.connect(bound.host, bound.port)  # queued in the listen backlog
    cid = await third.send(API_VERSIONS, 0, ApiVersionsRequest())
    with trio.move_on_after(0.3) as waited:
        await third.receive(API_VERSIONS, 0, cid)
    assert waited.cancelled_caught  # not served while two are open
    await first.aclose()
    with trio.fail_after(30):
        assert (await third.receive(API_VERSIONS, 0, cid)).error_code == 0


async def test_max_connections_per_ip_closes_the_extra_connection(start_broker):
    bound = await start_broker({"max.connections.per.ip": 1})
    first = await WireClient.connect(bound.host, bound.port)
    assert (await first.request(API_VERSIONS, 0, ApiVersionsRequest())).error_code == 0
    second = await WireClient.connect(bound.host, bound.port)
    assert await second.receive_frame() is None
    await first.aclose()
    third = await WireClient.connect(bound.host, bound.port)
    with trio.fail_after(30):
        assert (await third.request(API_VERSIONS, 0, ApiVersionsRequest())).error_code == 0


async def test_repeated_bad_frames_are_logged_once_per_second(start_broker, caplog):
    bound = await start_broker()
    caplog.set_level(logging.WARNING, logger="kafka_emu")
    for _ in range(50):
        client = await WireClient.connect(bound.host, bound.port)
        await client.send_raw(struct.pack(">ihhi", 10, 9999, 0, 1) + b"\x00\x00")  # unknown key
        assert await client.receive_frame() is None
    lines = [r for r in caplog.records if "unknown api key" in r.getMessage()]
    assert 1 <= len(lines) <= 3, [r.getMessage() for r in lines]
    assert "127.0.0.1" in lines[0].getMessage()


def _start_cli(*args, preexec_fn=None):
    import subprocess
    import sys
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=preexec_fn)
    host, _, port = proc.stdout.readline().strip().rpartition(":")
    return proc, host, int(port)


def _stop_cli(proc) -> str:
    import signal
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    return err


def test_connect_and_reset_a_thousand_times_leaves_serve_serving():
    proc, host, port = _start_cli()
    try:
        for _ in range(1000):
            reset_connection(host, port)
        assert api_versions_sync(host, port) == ErrorCode.NONE
    finally:
        err = _stop_cli(proc)
    assert "Traceback" not in err


def _stderr_until(proc, text: str, timeout: float = 30) -> str:
    """Read the server's stderr until ``text`` appears. Raw reads of the pipe: a buffered
    readline() may pull two lines into Python's buffer, where select() no longer sees the second
    (that made this wait time out when the server logged two lines at once)."""
    import os
    import select
    import time
    seen = b""
    end = time.monotonic() + timeout
    while text.encode() not in seen and time.monotonic() < end:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if ready:
            chunk = os.read(proc.stderr.fileno(), 1 << 16)
            if not chunk:
                break
            seen += chunk
    assert text.encode() in seen, seen
    return seen.decode(errors="replace")


def test_file_descriptor_limit_pauses_accepting_and_recovers():
    import resource

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    proc, host, port = _start_cli("--log-level", "INFO", preexec_fn=low_limit)
    held = []
    first_lines = ""
    try:
        for _ in range(80):  # more than the server has descriptors for
            held.append(socket.create_connection((host, port), timeout=10))
        first_lines = _stderr_until(proc, "cannot accept connections")
        for s in held:
            s.close()
        held.clear()
        code = None
        for _ in range(100):  # the paused listener retries at most a second apart
            try:
                code = api_versions_sync(host, port)
                break
            except (ConnectionError, AssertionError, socket.timeout):
                continue
        assert code == ErrorCode.NONE
    finally:
        for s in held:
            s.close()
        err = first_lines + _stop_cli(proc)
    assert err.count("cannot accept connections") == 1, err
    assert err.count("accepting connections again") == 1, err
    assert "Traceback" not in err


async def test_invalid_utf8_in_a_string_is_served_with_replacement_characters(start_broker):
    from kafka_emu.protocol.messages.find_coordinator import FindCoordinatorResponse
    bound = await start_broker()
    client = await WireClient.connect(bound.host, bound.port)
    # FindCoordinator v0 by hand: header (key 10, v0, correlation 5, client id "w\xff"), key "g\xff"
    body = struct.pack(">hhih", 10, 0, 5, 2) + b"w\xff" + struct.pack(">h", 2) + b"g\xff"
    await client.send_raw(struct.pack(">i", len(body)) + body)
    resp = await client.receive(BY_NAME["FindCoordinator"], 0, 5)
    assert isinstance(resp, FindCoordinatorResponse) and resp.error_code == ErrorCode.NONE
