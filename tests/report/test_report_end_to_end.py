"""End to end: confluent-kafka, kafka-python and aiokafka consumer groups and a wire client
driven into protocol violations, each against kafka-emu with tracing on; then the
``kafka-emu report`` command; the Parquet tables must say what the test saw happen.

The report's page is then opened in headless Chromium (tests/report/test_report_page.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import trio

from kafka_emu.broker.events import RequestHandled
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.protocol.messages.offset_commit import (OffsetCommitRequest,
                                                       OffsetCommitRequestPartition,
                                                       OffsetCommitRequestTopic)
from kafka_emu.protocol.messages.sync_group import SyncGroupRequest
from kafka_emu.testing import make_config, run_in_thread
from kafka_emu.testing.wire import WireClient

from integration.helpers import HEARTBEAT_MS, SESSION_TIMEOUT_MS, wait_until

TOPIC = "orders"
JOIN, SYNC, HEARTBEAT = BY_NAME["JoinGroup"], BY_NAME["SyncGroup"], BY_NAME["Heartbeat"]
COMMIT = BY_NAME["OffsetCommit"]


class Seen:
    """What the test observes through the same seam the writer uses: requests per client/API."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.requests: Counter = Counter()

    def __call__(self, event) -> None:
        if isinstance(event, RequestHandled):
            name = event.client_software_name or self.label
            self.requests[name, event.api] += 1


def _run(trace_dir: Path, label: str, body) -> Seen:
    seen = Seen(label)
    with run_in_thread(make_config(topics={TOPIC: 3}), observer=seen, trace_dir=trace_dir,
                       trace_labels={"client": label}) as emu:
        body(emu)
    return seen


def confluent(emu) -> None:
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": "g-confluent",
                  "session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": HEARTBEAT_MS,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([TOPIC])
    try:
        wait_until(lambda: c.assignment(), tick=lambda: c.poll(0.1), timeout=60,
                   message="confluent-kafka assignment")
    finally:
        c.close()


def kafka_python(emu) -> None:
    from kafka import KafkaConsumer
    c = KafkaConsumer(bootstrap_servers=emu.bootstrap_servers, group_id="g-kafka-python",
                      session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_MS,
                      auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        c.subscribe([TOPIC])  # the default initial delay makes the metadata round trip moot
        wait_until(lambda: c.assignment(), tick=lambda: c.poll(100), timeout=60,
                   message="kafka-python assignment")
    finally:
        c.close()


def aiokafka(emu) -> None:
    from aiokafka import AIOKafkaConsumer

    async def main():
        c = AIOKafkaConsumer(TOPIC, bootstrap_servers=emu.bootstrap_servers,
                             group_id="g-aiokafka", session_timeout_ms=SESSION_TIMEOUT_MS,
                             heartbeat_interval_ms=HEARTBEAT_MS, auto_offset_reset="earliest",
                             enable_auto_commit=False)
        await c.start()
        try:
            deadline = time.monotonic() + 60
            while not c.assignment():
                assert time.monotonic() < deadline, "aiokafka assignment"
                await c.getmany(timeout_ms=100)
        finally:
            await c.stop()
    asyncio.run(main())


def wire_violations(emu) -> None:
    """m1 joins and syncs; m2 joins; m1 is told REBALANCE_IN_PROGRESS on its heartbeat and
    does not rejoin, so the rebalance timeout (1 s) removes it; then m1 commits generation 1
    anyway (UNKNOWN_MEMBER_ID). Two violations: no_rejoin_in_time, stale_after_rejoin."""

    def join(member_id: str = "") -> JoinGroupRequest:
        return JoinGroupRequest(group_id="g-wire", session_timeout_ms=SESSION_TIMEOUT_MS,
                                rebalance_timeout_ms=1000, member_id=member_id,
                                group_instance_id=None, protocol_type="consumer",
                                protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")])

    async def main():
        m1 = await WireClient.connect(emu.host, emu.port, "wire-m1")
        m2 = await WireClient.connect(emu.host, emu.port, "wire-m2")
        id1 = (await m1.request(JOIN, 5, join())).member_id
        first = await m1.request(JOIN, 5, join(id1))
        assert first.error_code == 0 and first.generation_id == 1
        assert (await m1.request(SYNC, 3, SyncGroupRequest(
            group_id="g-wire", generation_id=1, member_id=id1, assignments=[]))).error_code == 0
        id2 = (await m2.request(JOIN, 5, join())).member_id
        async with trio.open_nursery() as nursery:
            result = {}

            async def second():
                result["join"] = await m2.request(JOIN, 5, join(id2))
            nursery.start_soon(second)
            while True:  # until m2's join has started the rebalance
                hb = await m1.request(HEARTBEAT, 4, HeartbeatRequest(
                    group_id="g-wire", generation_id=1, member_id=id1))
                if hb.error_code == ErrorCode.REBALANCE_IN_PROGRESS:
                    break
                await trio.sleep(0.05)
        assert result["join"].generation_id == 2 and len(result["join"].members) == 1
        commit = await m1.request(COMMIT, 8, OffsetCommitRequest(
            group_id="g-wire", generation_id_or_member_epoch=1, member_id=id1,
            topics=[OffsetCommitRequestTopic(name=TOPIC, partitions=[
                OffsetCommitRequestPartition(partition_index=0, committed_offset=1,
                                             committed_metadata=None)])]))
        assert commit.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_MEMBER_ID
        await m1.aclose()
        await m2.aclose()
    trio.run(main)


@pytest.fixture(scope="module")
def end_to_end(tmp_path_factory):
    traces = tmp_path_factory.mktemp("e2e-traces")
    seen = {label: _run(traces, label, body) for label, body in (
        ("confluent-kafka", confluent), ("kafka-python", kafka_python),
        ("aiokafka", aiokafka), ("wire", wire_violations))}
    out = tmp_path_factory.mktemp("e2e-report")
    proc = subprocess.run([sys.executable, "-m", "kafka_emu", "report", str(traces), "--out",
                           str(out), "--master", "local[2]"], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr
    return seen, out, proc


def table(out: Path, name: str) -> list[dict]:
    return pq.read_table(out / "tables" / name).to_pylist()


def test_requests_per_client_and_api_match_what_happened(end_to_end):
    seen, out, _ = end_to_end
    expected = Counter()
    for s in seen.values():
        expected.update(s.requests)
    reported = Counter()
    for row in table(out, "api_versions"):
        reported[row["client_name"], row["api"]] += row["requests"]
    assert reported == expected
    names = {row["client_name"] for row in table(out, "client_matrix")}
    assert len(names) == 4  # three libraries and the wire client, side by side


def test_generations_per_group(end_to_end):
    _, out, _ = end_to_end
    gens = {}
    for row in table(out, "rebalances"):
        gens.setdefault(row["group_id"], []).append((row["generation"], row["members_after"]))
    for group in ("g-confluent", "g-kafka-python", "g-aiokafka"):
        assert gens[group][0] == (1, 1), gens
    assert sorted(gens["g-wire"]) == [(1, 1), (2, 1)]


def test_the_violations_are_the_wire_clients_and_only_those(end_to_end):
    _, out, _ = end_to_end
    rows = table(out, "violations")
    assert sorted((r["kind"], r["group_id"], r["api"]) for r in rows) == [
        ("no_rejoin_in_time", "g-wire", "Heartbeat"),
        ("stale_after_rejoin", "g-wire", "OffsetCommit")]


def test_the_summary_is_one_screen(end_to_end):
    _, _, proc = end_to_end
    lines = proc.stdout.splitlines()
    assert 4 <= len(lines) <= 25
    assert lines[0].startswith("kafka-emu report: 4 runs")
    assert any("no_rejoin_in_time 1" in line and "stale_after_rejoin 1" in line for line in lines)
    # Spark's own noise stays in the log, not the terminal
    assert all(line.startswith("kafka-emu report: ") for line in proc.stderr.splitlines()), \
        proc.stderr


def test_the_page_renders_in_headless_chromium_with_every_plot(end_to_end, tmp_path):
    from .browser import open_page
    _, out, _ = end_to_end
    page = open_page(out / "report.html", screenshot=tmp_path / "report.png")
    assert page["errors"] == []
    assert all(url.startswith(("file:", "data:")) for url in page["requests"]), page["requests"]
    # durations, generations, error heat map, API versions (plotly draws each as SVG)
    assert page["charts"] == 4 and page["svgs"] >= 4
    for chart in page["drawn"]:
        assert chart["w"] > 100 and chart["h"] > 50 and chart["shapes"] > 10, chart
    for name in ("confluent-kafka", "kafka-python", "aiokafka", "wire"):
        assert name in page["text"]
    assert "stale_after_rejoin" in page["text"] and "no_rejoin_in_time" in page["text"]
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_aiokafkas_version_is_found_in_its_client_id(end_to_end):
    """aiokafka sends no KIP-511 software version (its ApiVersions is older than v3), but its
    default client id is "aiokafka-<version>": the report names that version, not "unknown"."""
    import aiokafka
    _, out, _ = end_to_end
    versions = {row["client_name"]: row["client_version"] for row in table(out, "client_matrix")}
    assert versions["aiokafka"] == aiokafka.__version__
