"""The report's authentication tables (kafka_emu/report/auth.py) over a real trace: over
SASL_PLAINTEXT with ACLs on, alice's confluent-kafka producer logs in with a wrong SCRAM
password, bob's PLAIN login is failed once by a fault rule and then his producer is refused the
topic (no ACL lets him), and the super user produces. Spark's tables are checked against what
happened and, row for row, against DuckDB's SQL."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kafka_emu.report import auth
from kafka_emu.testing.emulator import make_config, run_in_thread

pytest.importorskip("confluent_kafka")
SETTINGS = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            "emu.sasl.users": "alice:alice-secret,bob:bob-secret,admin:admin-secret",
            "connection.failed.authentication.delay.ms": "0",
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:admin"}


def _conf(emu, user, mechanism, password=None):
    return {"bootstrap.servers": emu.listeners["SASL_PLAINTEXT"],
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": mechanism,
            "sasl.username": user, "sasl.password": password or f"{user}-secret"}


def _run(emu) -> int:
    from confluent_kafka import Producer
    errors = []
    alice = Producer({**_conf(emu, "alice", "SCRAM-SHA-256", "wrong"), "error_cb": errors.append})
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        alice.poll(0.2)
    assert errors, "alice's failed login"
    del alice
    rule = emu.add_fault("error", api="SaslAuthenticate", principal="User:bob",
                         error="SASL_AUTHENTICATION_FAILED", message="bob is locked out")
    outcome = []
    bob = Producer({**_conf(emu, "bob", "PLAIN"), "reconnect.backoff.ms": 100,
                    "message.timeout.ms": 20000})
    bob.produce("orders", b"b", on_delivery=lambda err, msg: outcome.append(err))
    bob.flush(30)
    assert outcome and outcome[0] is not None, outcome  # refused: no ACL lets bob write
    admin = Producer(_conf(emu, "admin", "PLAIN"))
    admin.produce("orders", b"a")
    assert admin.flush(30) == 0
    return rule


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> tuple[Path, int]:
    where = tmp_path_factory.mktemp("auth-trace")
    with run_in_thread(make_config(SETTINGS, topics={"orders": 1}), trace_dir=str(where),
                       trace_labels={"client": "confluent-kafka"}) as emu:
        rule = _run(emu)
    return where, rule


def _trace_files(trace: Path) -> list[str]:
    return sorted(str(f) for f in trace.rglob("*.jsonl") if f.is_file())


def _duckdb_tables(trace: Path) -> dict[str, list[dict]]:
    duckdb = pytest.importorskip("duckdb")
    events = [json.loads(line) for f in _trace_files(trace)
              for line in Path(f).read_text().splitlines() if line.strip()]
    con = duckdb.connect()
    con.execute('CREATE TABLE failed (run VARCHAR, listener VARCHAR, mechanism VARCHAR, '
                '"user" VARCHAR, error_code BIGINT, reason VARCHAR, reauthentication BOOLEAN, '
                'peer VARCHAR)')
    con.executemany("INSERT INTO failed VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
        (e["run"], e["listener"], e.get("mechanism"), e.get("user"), e["error_code"],
         e["reason"], e["reauthentication"], e["peer"])
        for e in events if e["kind"] == auth.FAILED])
    con.execute("CREATE TABLE denied (run VARCHAR, principal VARCHAR, api VARCHAR, "
                "operation VARCHAR, resource_type VARCHAR, resource_name VARCHAR, "
                "error_code BIGINT, client_id VARCHAR)")
    con.executemany("INSERT INTO denied VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
        (e["run"], e["principal"], e["api"], e["operation"], e["resource_type"],
         e.get("resource_name"), e["error_code"], e.get("client_id"))
        for e in events if e["kind"] == auth.DENIED])
    out = {}
    for name, sql in auth.DUCKDB_SQL.items():
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description]
        out[name] = [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    return out


@pytest.fixture(scope="module")
def tables(spark, trace):
    from pyspark.sql import functions as F

    from kafka_emu.report.spark import struct_type
    lines = spark.read.schema(struct_type()).json(_trace_files(trace[0]))
    runs = lines.where(F.col("kind") == "run_start").select("run", "labels")
    return auth.tables(lines, runs)


def test_failed_logins_by_listener_mechanism_user_and_reason(tables, trace):
    rows = tables["failed_logins"]
    by_user = {(r["mechanism"], r["user"]): r for r in rows}
    alice = by_user[("SCRAM-SHA-256", "alice")]
    assert alice["listener"] == "SASL_PLAINTEXT" and alice["error_code"] == 58
    assert alice["failed"] >= 1 and alice["reauthentications"] == 0
    bob = by_user[("PLAIN", "bob")]
    assert bob["reason"] == f"fault rule {trace[1]}: bob is locked out"
    assert (bob["failed"], bob["runs"], bob["peers"]) == (1, 1, 1)
    assert {u for _, u in by_user} == {"alice", "bob"}  # admin never failed


def test_denied_requests_by_principal(tables):
    rows = tables["denied_requests"]
    assert rows and {r["principal"] for r in rows} == {"User:bob"}  # the super user: never
    assert {(r["resource_type"], r["resource_name"], r["error_code"]) for r in rows} == {
        ("TOPIC", "orders", 29)}
    assert {r["operation"] for r in rows} <= {"DESCRIBE", "WRITE"}
    assert all(r["denied"] >= 1 and r["client_ids"] == 1 for r in rows)


def test_spark_equals_duckdb_row_for_row(tables, trace):
    assert tables == _duckdb_tables(trace[0])


def test_section_renders_both_tables_and_nothing_without_failures(tables):
    page = auth.section(tables)
    assert page.count("<table") == 2 and "bob is locked out" in page
    assert "SASL_AUTHENTICATION_FAILED (58)" in page and "TOPIC_AUTHORIZATION_FAILED (29)" in page
    assert auth.section({name: [] for name in tables}) == ""


def test_the_report_job_gives_the_same_rows_and_draws_the_section(spark, trace, tables,
                                                                   tmp_path):
    from kafka_emu.report import job
    out = tmp_path / "report"
    results = job.run(spark, _trace_files(trace[0]), out)
    for name, rows in tables.items():
        assert results[name] == rows, name
    page = (out / "report.html").read_text()
    assert '<section id="authentication">' in page and "bob is locked out" in page
