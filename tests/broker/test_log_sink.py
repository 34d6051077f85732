"""Log lines you can watch: group events at INFO, requests at DEBUG, text or JSON lines."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time

from kafka_emu.admin.connection import BrokerConnection
from kafka_emu.broker.log_sink import LogSink, attach_log_sink
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol.messages.delete_groups import DeleteGroupsRequest
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from kafka_emu.protocol.messages.sync_group import SyncGroupRequest
from kafka_emu.testing import make_config, run_in_thread


def join_and_sync(conn: BrokerConnection, group: str, session_timeout_ms: int) -> str:
    def join(member_id: str):
        return conn.request("JoinGroup", JoinGroupRequest(
            group_id=group, session_timeout_ms=session_timeout_ms, rebalance_timeout_ms=5000,
            member_id=member_id, protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")]))[1]

    joined = join("")
    if joined.error_code == ErrorCode.MEMBER_ID_REQUIRED:
        joined = join(joined.member_id)
    assert joined.error_code == 0, joined
    synced = conn.request("SyncGroup", lambda v: SyncGroupRequest(
        group_id=group, generation_id=joined.generation_id, member_id=joined.member_id,
        assignments=[], protocol_type="consumer" if v >= 5 else None,
        protocol_name="range" if v >= 5 else None))[1]
    assert synced.error_code == 0, synced
    return joined.member_id


def lines(caplog, name: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == name]


def test_group_events_at_info_and_requests_at_debug(caplog):
    caplog.set_level(logging.DEBUG, logger="kafka_emu")
    config = make_config({"group.min.session.timeout.ms": 10})
    with run_in_thread(config) as emu:
        assert emu._call(lambda: attach_log_sink(emu.broker)) is not None
        with BrokerConnection(emu.host, emu.port, client_id="watcher") as conn:
            left = join_and_sync(conn, "g-left", 30000)
            conn.request("LeaveGroup", lambda v: LeaveGroupRequest(
                group_id="g-left", members=[MemberIdentity(member_id=left)]) if v >= 3 else
                LeaveGroupRequest(group_id="g-left", member_id=left))
            expired = join_and_sync(conn, "g-expired", 200)  # and never heartbeats
            deadline = time.monotonic() + 20
            while emu.describe_group("g-expired").state != "Empty":
                assert time.monotonic() < deadline, "the session never expired"
                time.sleep(0.05)
            conn.request("DeleteGroups", DeleteGroupsRequest(groups_names=["g-left"]))

    groups = lines(caplog, "kafka_emu.groups")
    assert f"group g-left: member {left} joined (client watcher)" in groups
    assert any(line.startswith("group g-left: rebalance started: adding new member")
               for line in groups), groups
    assert (f"group g-left: generation 1 completed with 1 member(s), protocol range, "
            f"leader {left}: {left}") in groups
    assert f"group g-left: member {left} left (LeaveGroup)" in groups
    assert (f"group g-expired: member {expired} expired (no heartbeat within its session "
            "timeout)") in groups
    assert "group g-left: deleted (delete_groups)" in groups
    # every INFO line is a group event; no request lines at INFO
    assert all(r.levelno == logging.DEBUG for r in caplog.records
               if r.name == "kafka_emu.requests")
    requests = lines(caplog, "kafka_emu.requests")
    assert any("client watcher: SyncGroup v" in line and f"group g-left member {left} -> NONE"
               in line for line in requests), requests
    assert any("JoinGroup v" in line and "-> MEMBER_ID_REQUIRED in" in line
               for line in requests), requests


def test_no_subscription_when_the_level_needs_no_lines(caplog):
    caplog.set_level(logging.WARNING, logger="kafka_emu")
    with run_in_thread() as emu:
        before = emu._call(lambda: emu.broker.observation.sinks)
        assert emu._call(lambda: attach_log_sink(emu.broker)) is None
        assert emu._call(lambda: emu.broker.observation.sinks) == before
        assert not any(isinstance(s, LogSink) for s in before)


def test_info_level_sink_ignores_requests(caplog):
    caplog.set_level(logging.INFO, logger="kafka_emu")
    from kafka_emu.broker.events import RequestHandled
    sink = LogSink()
    sink(RequestHandled(at_ms=0, connection_id=1, peer="p", api="Fetch", api_key=1, version=4,
                        correlation_id=1, client_id="c", client_software_name=None,
                        client_software_version=None, group_id=None, member_id=None,
                        group_instance_id=None, generation_id=None, latency_ms=0.1,
                        error_code=0))
    assert caplog.records == []


def test_the_sink_names_event_classes_that_exist(caplog):
    # the sink keys its handlers by class name (what a row carries): a renamed event class
    # would otherwise silently stop its lines
    from kafka_emu.broker.event_rows import _event_classes
    caplog.set_level(logging.DEBUG, logger="kafka_emu")
    assert set(LogSink()._handlers) <= set(_event_classes())


def test_cli_json_lines_at_debug():
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                             "--log-level", "debug", "--log-format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        host, _, port = proc.stdout.readline().strip().rpartition(":")
        with BrokerConnection(host, int(port), client_id="json-test") as conn:
            member = join_and_sync(conn, "g-json", 30000)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    records = [json.loads(line) for line in err.splitlines()]  # every line is JSON
    joined = [r for r in records if r.get("event") == "member_joined"]
    assert joined and joined[0]["group_id"] == "g-json" and joined[0]["member_id"] == member
    assert joined[0]["level"] == "INFO" and joined[0]["logger"] == "kafka_emu.groups"
    syncs = [r for r in records if r.get("event") == "request" and r["api"] == "SyncGroup"]
    assert syncs and syncs[0]["client_id"] == "json-test" and syncs[0]["error"] == "NONE"
    assert syncs[0]["member_id"] == member and syncs[0]["latency_ms"] >= 0
    generation = [r for r in records if r.get("event") == "generation_completed"]
    assert generation[0]["members"] == [member] and generation[0]["protocol"] == "range"
