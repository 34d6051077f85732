"""The report's transaction tables (kafka_emu/report/transactions.py) over a real trace: a
confluent-kafka transactional producer commits three transactions and aborts one, then one is
timed out by the control plane and one fenced by a second producer with the same id. Spark's
tables are checked against what happened and, row for row, against DuckDB's SQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_emu.report import transactions as tx
from kafka_emu.testing.emulator import make_config, run_in_thread

pytest.importorskip("confluent_kafka")
TIMEOUT = 30


def _run(emu) -> None:
    from confluent_kafka import Producer
    from kafka_emu.control.ops.transactions import IdParams, expire_transaction

    def producer(txn_id: str) -> Producer:
        p = Producer({"bootstrap.servers": emu.bootstrap_servers, "transactional.id": txn_id})
        p.init_transactions(TIMEOUT)
        return p
    a = producer("app-a")
    for i in range(4):
        a.begin_transaction()
        a.produce("t", value=b"%d" % i)
        a.flush(TIMEOUT)  # sent, so the partition is in the transaction (aborts too)
        a.commit_transaction(TIMEOUT) if i < 3 else a.abort_transaction(TIMEOUT)
    b = producer("app-b")
    b.begin_transaction()
    b.produce("t", value=b"x")
    b.flush(TIMEOUT)  # the partition is in the transaction
    emu._call(lambda: expire_transaction(emu.broker, IdParams(transactional_id="app-b")))
    c = producer("app-c")
    c.begin_transaction()
    c.produce("t", value=b"y")
    c.flush(TIMEOUT)
    producer("app-c")  # a new life of app-c: its open transaction is fenced and aborted


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("txn-trace")
    with run_in_thread(make_config(topics={"t": 1}), trace_dir=str(where),
                       trace_labels={"client": "confluent-kafka"}) as emu:
        _run(emu)
    return where


def _spark_tables(spark, trace: Path) -> dict[str, list[dict]]:
    from pyspark.sql import functions as F

    from kafka_emu.report.spark import struct_type
    lines = spark.read.schema(struct_type()).json(_trace_files(trace))
    runs = lines.where(F.col("kind") == "run_start").select("run", "labels")
    return tx.tables(lines, runs)


def _trace_files(trace: Path) -> list[str]:
    # the trace files only (a conformance run's directory also holds client logs)
    return sorted(str(f) for f in trace.rglob("*.jsonl") if f.is_file())


def _duckdb_tables(trace: Path) -> dict[str, list[dict]]:
    duckdb = pytest.importorskip("duckdb")
    events = [json.loads(line) for f in _trace_files(trace)
              for line in Path(f).read_text().splitlines() if line.strip()]
    client = {e["run"]: (e.get("labels") or {}).get("client", "") for e in events
              if e["kind"] == "run_start"}
    con = duckdb.connect()
    con.execute("CREATE TABLE ended (run VARCHAR, client VARCHAR, transactional_id VARCHAR, "
                "committed BOOLEAN, cause VARCHAR, duration_ms BIGINT)")
    con.executemany("INSERT INTO ended VALUES (?, ?, ?, ?, ?, ?)",
                    [(e["run"], client.get(e["run"], ""), e["transactional_id"], e["committed"],
                      e["cause"], e["duration_ms"]) for e in events if e["kind"] == tx.KIND])
    out = {}
    for name, sql in tx.DUCKDB_SQL.items():
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description]
        out[name] = [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    return out


@pytest.fixture(scope="module")
def tables(spark, trace):
    return _spark_tables(spark, trace)


def test_per_client_counts_what_each_id_did(tables):
    rows = {r["transactional_id"]: r for r in tables["transactions_per_client"]}
    assert set(rows) == {"app-a", "app-b", "app-c"}
    assert (rows["app-a"]["committed"], rows["app-a"]["aborted"]) == (3, 1)
    assert (rows["app-b"]["committed"], rows["app-b"]["aborted"]) == (0, 1)
    assert (rows["app-c"]["committed"], rows["app-c"]["aborted"]) == (0, 1)
    assert all(r["client"] == "confluent-kafka" for r in rows.values())
    a = rows["app-a"]
    assert 0 <= a["p50_commit_ms"] <= a["p95_commit_ms"] <= a["max_commit_ms"]
    assert rows["app-b"]["p50_commit_ms"] is None  # nothing committed: no time to commit


def test_abort_causes(tables):
    causes = {r["cause"]: r["aborted"] for r in tables["transaction_abort_causes"]}
    assert causes == {"client": 1, "timeout": 1, "fenced": 1}


def test_commit_percentiles(tables):
    (row,) = tables["transaction_commit_percentiles"]
    assert row["client"] == "confluent-kafka" and row["committed"] == 3
    assert row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"] <= row["max_ms"]


def test_spark_equals_duckdb_row_for_row(tables, trace):
    assert tables == _duckdb_tables(trace)


def test_section_renders_each_table_and_nothing_without_transactions(tables):
    page = tx.section(tables)
    assert page.count("<table") == 3 and "app-a" in page and "fenced" in page
    assert tx.section({name: [] for name in tables}) == ""


def test_a_transactions_conformance_run_reads_into_the_tables(spark, tmp_path, capsys):
    """``kafka-emu conformance --transactions --trace-dir``: the scenario's trace (labelled with
    the copier) and its verdict run; the tables see the copiers' commits and the aborts the
    SIGKILLs left (timed out by the kit)."""
    from kafka_emu.cli import main
    assert main(["conformance", "--transactions", "--client", "confluent-kafka", "--scenario",
                 "txn_hard_bounce_clients", "--trace-dir", str(tmp_path)]) == 0
    assert "PASS  txn_hard_bounce_clients" in capsys.readouterr().out
    tables = _spark_tables(spark, tmp_path)
    rows = {r["transactional_id"]: r for r in tables["transactions_per_client"]}
    assert set(rows) == {"copier-0", "copier-1"}
    assert all(r["client"] == "confluent-kafka" and r["committed"] > 0 for r in rows.values())
    assert {r["cause"] for r in tables["transaction_abort_causes"]} <= {"timeout", "fenced"}
    assert tables == _duckdb_tables(tmp_path)
    # and the report job itself: the same rows in its results, the section on its page
    from kafka_emu.report import job
    out = tmp_path / "report"
    results = job.run(spark, _trace_files(tmp_path), out)
    for name, rows in tables.items():
        assert results[name] == rows, name
    page = (out / "report.html").read_text()
    assert '<section id="transactions">' in page and "copier-0" in page
