"""The report's share-group tables (kafka_emu/report/share.py) over a real trace: a
confluent-kafka ShareConsumer (explicit acknowledgement, delivery count limit 2) accepts most
records, releases one once (a redelivery), rejects one, and keeps releasing one until the
broker archives it at the limit (a poison record); a second consumer's lock runs out by the
emulator's clock. Spark's tables are checked against what happened and, row for row, against
DuckDB's SQL."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kafka_emu.report import share
from kafka_emu.testing.emulator import make_config, run_in_thread

pytest.importorskip("confluent_kafka")
SETTINGS = {"group.share.heartbeat.interval.ms": "100", "group.share.delivery.count.limit": "2"}
RELEASE_ONCE, REJECTED, POISON = 1, 2, 3


def _run(emu) -> None:
    from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
    from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry,
                                       ConfigResource, ResourceType)
    admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
    for fut in admin.incremental_alter_configs([ConfigResource(
            ResourceType.GROUP, "sg", incremental_configs=[ConfigEntry(
                "share.auto.offset.reset", "earliest",
                incremental_operation=AlterConfigOpType.SET)])]).values():
        fut.result(30)
    p = Producer({"bootstrap.servers": emu.bootstrap_servers, "linger.ms": 0})
    for i in range(6):
        p.produce("t", value=b"%d" % i)
        p.flush(10)
    c = ShareConsumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": "sg",
                       "client.id": "worker-1", "share.acknowledgement.mode": "explicit"})
    c.subscribe(["t"])
    seen: dict[int, int] = {}
    deadline = time.monotonic() + 60
    # done when every record is finished: 0, 4, 5 accepted, 1 accepted on its redelivery,
    # 2 rejected, 3 released twice (archived at the limit)
    while time.monotonic() < deadline and not (seen.get(POISON, 0) >= 2
                                               and seen.get(RELEASE_ONCE, 0) >= 2
                                               and len(seen) == 6):
        for m in c.poll(0.2):
            if m.error():
                continue
            seen[m.offset()] = m.delivery_count()
            kind = AcknowledgeType.ACCEPT
            if m.offset() == RELEASE_ONCE and m.delivery_count() == 1 or m.offset() == POISON:
                kind = AcknowledgeType.RELEASE
            elif m.offset() == REJECTED:
                kind = AcknowledgeType.REJECT
            c.acknowledge(m, kind)
        c.commit_sync()
    c.close()
    assert seen.get(POISON) == 2 and seen.get(RELEASE_ONCE) == 2, seen
    # a second consumer takes a new record and never acknowledges it: its lock runs out
    p.produce("t", value=b"6")
    p.flush(10)
    d = ShareConsumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": "sg",
                       "client.id": "worker-2", "share.acknowledgement.mode": "explicit"})
    d.subscribe(["t"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not [m for m in d.poll(0.2) if not m.error()]:
        pass
    emu.expire_share_locks("sg")
    d.close()


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("share-trace")
    with run_in_thread(make_config(SETTINGS, topics={"t": 1}), trace_dir=str(where),
                       trace_labels={"client": "confluent-kafka"}) as emu:
        _run(emu)
    return where


def _spark_tables(spark, trace: Path) -> dict[str, list[dict]]:
    from pyspark.sql import functions as F

    from kafka_emu.report.spark import struct_type
    lines = spark.read.schema(struct_type()).json(str(trace))
    runs = lines.where(F.col("kind") == "run_start").select("run", "labels")
    return share.tables(lines, runs)


def _duckdb_tables(trace: Path) -> dict[str, list[dict]]:
    duckdb = pytest.importorskip("duckdb")
    events = [json.loads(line) for f in sorted(trace.rglob("*.jsonl*")) if f.is_file()
              for line in f.read_text().splitlines() if line.strip()]
    client = {e["run"]: (e.get("labels") or {}).get("client", "") for e in events
              if e["kind"] == "run_start"}
    ids: dict[tuple, str] = {}
    for e in events:
        if e["kind"] == "request_handled" and e.get("member_id") and e.get("client_id"):
            key = (e["run"], e.get("group_id"), e["member_id"])
            ids[key] = max(ids.get(key, ""), e["client_id"])
    con = duckdb.connect()
    con.execute("CREATE TABLE changed (run VARCHAR, at_ms BIGINT, group_id VARCHAR, "
                "topic VARCHAR, partition INTEGER, action VARCHAR, member_id VARCHAR, "
                "first_offset BIGINT, last_offset BIGINT, delivery_count INTEGER, "
                "ack_type INTEGER, records BIGINT, client VARCHAR, client_id VARCHAR)")
    con.executemany("INSERT INTO changed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (e["run"], e["at_ms"], e["group_id"], e["topic"], e["partition"], e["action"],
         e.get("member_id"), e["first_offset"], e["last_offset"], e["delivery_count"],
         e.get("ack_type"), e["last_offset"] - e["first_offset"] + 1, client.get(e["run"], ""),
         ids.get((e["run"], e["group_id"], e.get("member_id")), ""))
        for e in events if e["kind"] == share.KIND])
    out = {}
    for name, sql in share.DUCKDB_SQL.items():
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description]
        out[name] = [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    return out


@pytest.fixture(scope="module")
def tables(spark, trace):
    return _spark_tables(spark, trace)


def test_redeliveries_count_what_came_back(tables):
    (row,) = tables["share_redeliveries"]
    assert (row["client"], row["group_id"], row["topic"]) == ("confluent-kafka", "sg", "t")
    # 7 first deliveries; offsets 1 and 3 delivered twice
    assert (row["acquired"], row["redelivered"], row["max_delivery_count"]) == (9, 2, 2)
    assert row["lock_expired"] == 1  # worker-2's record
    assert row["released"] >= 2  # the release acknowledgements of 1 and 3


def test_the_poison_record_is_named_with_its_topic_and_client(tables):
    (by_topic,) = tables["share_poison_by_topic"]
    assert by_topic == {"client": "confluent-kafka", "topic": "t", "client_id": "worker-1",
                        "poison_records": 1, "rejected_records": 1}
    (run,) = tables["share_poison_records"]
    assert (run["partition"], run["first_offset"], run["last_offset"]) == (0, POISON, POISON)
    assert (run["delivery_count"], run["client_id"], run["records"]) == (2, "worker-1", 1)


def test_spark_equals_duckdb_row_for_row(tables, trace):
    assert tables == _duckdb_tables(trace)


def test_section_renders_each_table_and_nothing_without_share_groups(tables):
    page = share.section(tables)
    assert page.count("<table") == 3 and "worker-1" in page
    assert share.section({name: [] for name in tables}) == ""
