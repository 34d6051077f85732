"""The trace writer: what a run writes, a run killed mid-way, and directories it cannot use."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
import trio

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.headers import encode_request
from kafka_emu.protocol.messages import consumer_protocol as cp
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator, run_in_thread
from kafka_emu.testing.wire import WireClient
from kafka_emu.trace import TraceError, TraceWriter, schema

JOIN, SYNC, HEARTBEAT = BY_NAME["JoinGroup"], BY_NAME["SyncGroup"], BY_NAME["Heartbeat"]
VALIDATOR = jsonschema.Draft202012Validator(json.loads(schema.SCHEMA_FILE.read_text()))


def read_trace(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f]


def spy_on_the_writer(emu, extra_sink: bool = False) -> list:
    """What the observer seam hands the trace writer (its only sink) from now on, as it hands it
    over: a row's tag, or an event object's class. With ``extra_sink``, a row sink subscribes
    beside it, so that the request path makes rows rather than records by frames."""
    observation = emu._bound.broker.observation
    seen: list = []
    sink, _, writer_many, *rest = observation._sinks[-1]
    assert writer_many is not None

    def spy(events):
        seen.extend(e[0] if type(e) is tuple else type(e) for e in events)
        writer_many(events)
    observation._sinks[-1] = (sink, True, spy, *rest)
    observation._rebuild()
    if extra_sink:
        observation.subscribe(lambda event: None, rows=True)
    return seen


def only_file(trace_dir: Path) -> Path:
    files = sorted(trace_dir.glob("date=*/run=*.jsonl*"))
    assert len(files) == 1, files
    return files[0]


async def _one_member_group(bound):
    client = await WireClient.connect(bound.host, bound.port, "trace-test")
    await client.request(BY_NAME["ApiVersions"], 3, ApiVersionsRequest(
        client_software_name="trace-test", client_software_version="1.2"))
    subscription = cp.encode_subscription(cp.ConsumerProtocolSubscription(topics=["orders"]), 0)
    join = JoinGroupRequest(group_id="g", session_timeout_ms=6000, rebalance_timeout_ms=9000,
                            member_id="", group_instance_id=None, protocol_type="consumer",
                            protocols=[JoinGroupRequestProtocol(name="range",
                                                                metadata=subscription)])
    first = await client.request(JOIN, 5, join)
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    joined = await client.request(JOIN, 5, attrs_evolve(join, member_id=first.member_id))
    assert joined.error_code == 0
    assignment = cp.encode_assignment(cp.ConsumerProtocolAssignment(
        assigned_partitions=[cp.TopicPartition(topic="orders", partitions=[0, 1])]), 0)
    synced = await client.request(SYNC, 5, SyncGroupRequest(
        group_id="g", generation_id=1, member_id=first.member_id, protocol_type="consumer",
        protocol_name="range",
        assignments=[SyncGroupRequestAssignment(member_id=first.member_id,
                                                assignment=assignment)]))
    assert synced.error_code == 0
    for _ in range(3):
        hb = await client.request(HEARTBEAT, 4, HeartbeatRequest(
            group_id="g", generation_id=1, member_id=first.member_id))
        assert hb.error_code == 0
    await client.aclose()
    return first.member_id


def attrs_evolve(value, **changes):
    import attrs
    return attrs.evolve(value, **changes)


@pytest.mark.parametrize("compress", [None, "gzip"])
async def test_a_run_writes_its_events_as_schema_valid_lines(tmp_path, compress):
    config = make_config(topics={"orders": 3})
    async with open_emulator(config, trace_dir=tmp_path, trace_labels={"client": "wire"},
                             trace_compress=compress) as emu:
        member = await _one_member_group(emu._bound)
        await trio.sleep(0.05)
    path = only_file(tmp_path)
    assert path.name.endswith(".jsonl.gz" if compress else ".jsonl")
    assert path.parent.name.startswith("date=") and path.name.startswith("run=")
    records = read_trace(path)
    for record in records:
        VALIDATOR.validate(record)
    assert [r["seq"] for r in records] == list(range(len(records)))
    assert len({r["run"] for r in records}) == 1
    start, end = records[0], records[-1]
    assert start["kind"] == "run_start" and start["labels"] == {"client": "wire"}
    assert start["schema_version"] == schema.SCHEMA_VERSION and start["port"] == emu.port
    assert start["broker_api_versions"]["JoinGroup"] == 9
    assert end["kind"] == "run_end" and end["dropped"] == 0 and end["events"] == len(records) - 1
    requests = [r for r in records if r["kind"] == "request_handled"]
    assert [r["api"] for r in requests] == ["ApiVersions", "JoinGroup", "JoinGroup", "SyncGroup",
                                            "Heartbeat", "Heartbeat", "Heartbeat"]
    joins = [r for r in requests if r["api"] == "JoinGroup"]
    assert joins[0]["error_code"] == ErrorCode.MEMBER_ID_REQUIRED
    assert joins[1]["session_timeout_ms"] == 6000 and joins[1]["rebalance_timeout_ms"] == 9000
    assert all(r["client_software_name"] == "trace-test" for r in requests[1:])
    subscribed = next(r for r in records if r["kind"] == "member_subscribed")
    assert subscribed["member_id"] == member and subscribed["metadata"]["topics"] == ["orders"]
    distributed = next(r for r in records if r["kind"] == "assignments_distributed")
    assert distributed["assignments"] == [{"member_id": member, "raw": None, "topics": [
        {"topic": "orders", "partitions": [0, 1]}]}]
    known = [r for r in records if r["kind"] == "topics_known"]
    assert known and known[0]["seq"] < distributed["seq"]
    assert {"topic": "orders", "count": 3} in known[0]["topic_partitions"]
    assert {"state_changed", "generation_changed", "member_added", "connection_opened",
            "connection_closed"} <= {r["kind"] for r in records}


def test_run_in_thread_traces_too(tmp_path):
    with run_in_thread(trace_dir=tmp_path / "t", trace_labels={"k": "v"}) as emu:
        with socket.create_connection((emu.host, emu.port)) as s:
            s.sendall(encode_request(BY_NAME["ApiVersions"], 0, 1, "sync", ApiVersionsRequest()))
            s.recv(65536)
    records = read_trace(only_file(tmp_path / "t"))
    assert records[0]["labels"] == {"k": "v"}
    assert any(r["kind"] == "request_handled" and r["client_id"] == "sync" for r in records)


def test_an_unwritable_directory_is_an_error_before_serving(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(TraceError, match="cannot write traces to .*a-file"):
        TraceWriter(blocker / "traces").open()
    with pytest.raises(TraceError):
        with run_in_thread(trace_dir=blocker):
            pass


def test_cli_unwritable_trace_dir_is_one_line_and_exit_2(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    proc = subprocess.run([sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                           "--trace-dir", str(blocker)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "cannot write traces to" in proc.stderr


@pytest.mark.parametrize("compress", [None, "gzip"])
def test_a_run_killed_mid_way_leaves_every_written_line_readable(tmp_path, compress):
    args = [sys.executable, "-m", "kafka_emu", "serve", "--port", "0", "--trace-dir",
            str(tmp_path), "--trace-label", "case=kill"]
    if compress:
        args += ["--trace-compress", compress]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=os.environ | {"PYTHONUNBUFFERED": "1"})
    try:
        host, port = proc.stdout.readline().strip().rsplit(":", 1)
        with socket.create_connection((host, int(port))) as s:
            deadline = time.monotonic() + 60
            sent = 0
            first_size = None  # run_start alone is written at once; wait for flushed requests
            while time.monotonic() < deadline:
                for _ in range(50):
                    sent += 1
                    s.sendall(encode_request(BY_NAME["ApiVersions"], 0, sent, "kill-test",
                                             ApiVersionsRequest()))
                    s.recv(65536)
                path = next(iter(tmp_path.glob("date=*/run=*")), None)
                if path is not None:
                    size = path.stat().st_size
                    first_size = size if first_size is None else first_size
                    if size > first_size + 1000:
                        break
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)  # no chance to flush or write run_end
            proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    records = read_trace(only_file(tmp_path))  # raises if any line or gzip member is torn
    assert records[0]["kind"] == "run_start" and records[0]["labels"] == {"case": "kill"}
    assert first_size is not None and sent > 0
    assert records[-1]["kind"] != "run_end"
    assert sum(r["kind"] == "request_handled" for r in records) >= 10
    for record in records:
        VALIDATOR.validate(record)


def test_scenario_verdicts_are_runs_of_their_own(tmp_path):
    from kafka_emu.trace import write_scenario_verdict
    path = write_scenario_verdict(tmp_path, scenario="static-rejoin", client="aiokafka",
                                  client_version="0.12.0", verdict="fail", reason="no rejoin",
                                  seconds=1.5)
    records = read_trace(path)
    for record in records:
        VALIDATOR.validate(record)
    assert [r["kind"] for r in records] == ["run_start", "scenario_verdict", "run_end"]
    assert records[1]["verdict"] == "fail" and records[1]["client_version"] == "0.12.0"
    assert records[0]["labels"]["scenario"] == "static-rejoin"


async def test_an_encoder_that_dies_idle_is_replaced_by_formatting_here_and_nothing_is_lost(
        tmp_path):
    """Lines are formatted in a child process (trace/encoder.py). If it dies with nothing in its
    pipe, the run goes on: the emulator keeps serving, formats later lines itself, and the file
    has every event."""
    async with open_emulator(make_config(topics={"orders": 3}), trace_dir=tmp_path) as emu:
        writer = emu._bound.broker.observation.sinks[-1].__self__
        assert isinstance(writer, TraceWriter) and writer._feed is not None
        await _one_member_group(emu._bound)
        with trio.fail_after(60):  # the encoder has written them (it starts in a fresh Python)
            while b"\"api\":\"Heartbeat\"" not in writer.path.read_bytes():
                await trio.sleep(0.1)
        writer._feed.encoder.process.kill()
        writer._feed.encoder.process.wait()
        client = await WireClient.connect(emu.host, emu.port, "after")  # still serving
        for _ in range(3):
            await client.request(BY_NAME["ApiVersions"], 3, ApiVersionsRequest(
                client_software_name="after", client_software_version="1"))
        await client.aclose()
        with trio.fail_after(60):  # the death noticed at a flush: formatted here from then on
            while writer._feed is not None:
                await trio.sleep(writer.flush_interval_s)
    records = read_trace(only_file(tmp_path))
    assert records[0]["kind"] == "run_start" and records[-1]["kind"] == "run_end"
    assert [r["seq"] for r in records] == list(range(len(records)))
    end = records[-1]
    assert (end["events"], end["written"], end["dropped"]) == (len(records) - 1,
                                                                len(records) - 1, 0)
    apis = [(r["api"], r["client_id"]) for r in records if r["kind"] == "request_handled"]
    assert [api for api, _ in apis][:7] == [
        "ApiVersions", "JoinGroup", "JoinGroup", "SyncGroup", "Heartbeat", "Heartbeat",
        "Heartbeat"]
    assert apis.count(("ApiVersions", "after")) == 3


def test_the_encoder_process_writes_what_this_process_would(tmp_path):
    """A batch through marshal and the child formats to the very lines formatted here."""
    import marshal
    from kafka_emu.trace.encoder import HEADER, format_lines, message
    sys.path.insert(0, str(Path(__file__).parents[1] / "broker"))
    from test_observe_rows import _sample
    from kafka_emu.broker.event_rows import event_row
    items = [event_row(_sample(cls)) for cls in schema.event_classes()]
    items.append({"kind": "topics_known", "at_ms": 5, "topic_partitions": [
        {"topic": "t", "count": 2}]})
    data = message(10, items)
    first, carried = marshal.loads(data[HEADER.size:])
    assert format_lines(first, carried, "r") == format_lines(10, items, "r")
    out = tmp_path / "out.jsonl"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        from kafka_emu.trace.writer import ENCODER_MAIN
        done = subprocess.run([sys.executable, "-c", ENCODER_MAIN, str(fd), "r", ""],
                              input=data, pass_fds=(fd,), capture_output=True, timeout=120)
    finally:
        os.close(fd)
    from kafka_emu.trace.appender import Acks
    acks = Acks(0)
    acks.feed(done.stdout)
    assert done.returncode == 0 and (acks.written, acks.lost) == (len(items), 0), done.stderr
    assert out.read_text() == format_lines(10, items, "r")


async def test_a_bug_in_a_flush_is_recorded_and_the_run_goes_on(tmp_path, monkeypatch):
    """The writer's flush runs as a task of the emulator's nursery: a bug in one used to end the
    emulator's loop. It is logged and recorded (the fixture re-raises it), the emulator serves
    on, the next interval flushes again, and the file has every event."""
    async with open_emulator(make_config(topics={"orders": 3}), trace_dir=tmp_path) as emu:
        broker = emu._bound.broker
        writer = broker.observation.sinks[-1].__self__
        assert isinstance(writer, TraceWriter)
        real_drain, failed = writer._drain, []

        def drain_failing_once():
            if not failed:
                failed.append(True)
                raise RuntimeError("a bug in a flush")
            real_drain()
        monkeypatch.setattr(writer, "_drain", drain_failing_once)
        with trio.fail_after(10):
            while not failed:
                await trio.sleep(writer.flush_interval_s)
        await _one_member_group(emu._bound)  # still serving
        await trio.sleep(3 * writer.flush_interval_s)  # flushed again since
        assert [str(e) for e in broker.unexpected] == ["a bug in a flush"]
        broker.unexpected.clear()  # seen: not for the fixture to raise
    records = read_trace(only_file(tmp_path))
    assert [r["seq"] for r in records] == list(range(len(records)))
    end = records[-1]
    assert end["kind"] == "run_end" and end["dropped"] == 0
    assert [r["api"] for r in records if r["kind"] == "request_handled"] == [
        "ApiVersions", "JoinGroup", "JoinGroup", "SyncGroup", "Heartbeat", "Heartbeat",
        "Heartbeat"]
