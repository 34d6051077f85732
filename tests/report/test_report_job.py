"""The report job on hand-built traces with known answers (tests/report/traces.py)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from kafka_emu.report import violations as v

from .traces import T0

EXPECTED_VIOLATIONS = {
    "stale_after_rejoin": {"stale": 1},
    "after_fenced": {"fenced": 1},
    "no_rejoin_in_time": {"norejoin": 1},
    "assignment_overlap": {"overlap": 1},
    "assignment_gap": {"gap": 2},
    "double_fetch": {"double": 1},
    "offset_backwards": {"backwards": 1},
    "heartbeat_too_fast": {"fasthb": 2},
}


def test_every_violation_kind_is_covered_by_a_fixture():
    assert set(EXPECTED_VIOLATIONS) == set(v.KINDS)


@pytest.mark.parametrize("kind", sorted(EXPECTED_VIOLATIONS))
def test_each_violation_is_found_in_its_fixture_and_nowhere_else(report, kind):
    results, _ = report
    found = Counter(row["run"] for row in results["violations"] if row["kind"] == kind)
    assert dict(found) == EXPECTED_VIOLATIONS[kind]


def test_clean_traces_have_no_violations(report):
    results, _ = report
    assert [row for row in results["violations"] if row["run"] in ("clean", "verdicts",
                                                                   "crashed")] == []


def test_violation_rows_name_the_request_that_shows_them(report):
    results, _ = report
    rows = {row["kind"]: row for row in results["violations"]}
    stale = rows["stale_after_rejoin"]
    assert (stale["group_id"], stale["member_id"], stale["api"]) == ("g", "m1", "OffsetCommit")
    assert "told 27" in stale["detail"] and stale["correlation_id"] is not None
    assert rows["after_fenced"]["api"] == "OffsetCommit"
    assert rows["no_rejoin_in_time"]["api"] == "Heartbeat"
    assert "30000 ms later" in rows["no_rejoin_in_time"]["detail"]
    assert "t-1 assigned to m1, m2" in rows["assignment_overlap"]["detail"]
    gaps = sorted(row["detail"] for row in results["violations"] if row["kind"] == "assignment_gap")
    assert [g.split(": ")[1] for g in gaps] == ["subscribed t-2 assigned to nobody",
                                                "subscribed t-3 assigned to nobody"]
    assert "t-0 fetched by m1, m2" in rows["double_fetch"]["detail"]
    assert "committed 5 after 10" in rows["offset_backwards"]["detail"]
    fast = {row["member_id"]: row for row in results["violations"]
            if row["kind"] == "heartbeat_too_fast"}
    assert fast["m1"]["detail"] == \
        "20 heartbeats, median every 10 ms for a session timeout of 10000 ms"
    assert (fast["m1"]["api"], fast["m1"]["at_ms"]) == ("Heartbeat", T0 + 100)  # its first


def test_the_heartbeat_median_is_exact(report):
    """The lower median, as DuckDB's quantile_disc: an approximate percentile is off here."""
    results, _ = report
    (m2,) = [row for row in results["violations"]
             if row["kind"] == "heartbeat_too_fast" and row["member_id"] == "m2"]
    assert m2["detail"] == "1202 heartbeats, median every 101 ms for a session timeout of " \
        "10000 ms"


def test_rebalances_per_generation(report):
    results, _ = report
    clean = [r for r in results["rebalances"] if r["run"] == "clean"]
    assert [(r["generation"], r["duration_ms"], r["members_before"], r["members_after"])
            for r in clean] == [(1, 3200, 0, 2), (2, 150, 2, 1)]
    first, second = clean
    assert first["reason"] == "Adding new member m1" and sorted(first["joined"]) == ["m1", "m2"]
    assert first["started_ms"] == T0 + 1000 and first["stable_ms"] == T0 + 4200
    assert second["left"] == ["m2"] and second["removed"] == [{"member_id": "m2",
                                                               "reason": "left"}]
    assert (first["client_name"], first["client_version"]) == ("kafka-python", "2.0")


def test_rebalance_percentiles_per_client_version(report):
    results, _ = report
    (row,) = [r for r in results["rebalance_percentiles"] if r["client_name"] == "kafka-python"]
    assert row["rebalances"] == 5  # clean x2, overlap, gap, double
    assert (row["p50_ms"], row["p95_ms"], row["p99_ms"], row["max_ms"]) == (3200, 3200, 3200,
                                                                            3200)


def test_client_matrix_and_api_versions(report):
    results, _ = report
    clients = {(r["client_name"], r["client_version"]): r for r in results["client_matrix"]}
    # named by the run's label (no KIP-511 name), its version from its client id
    aio = clients["aiokafka", "0.12.0"]
    assert (aio["requests"], aio["error_responses"], aio["runs"]) == (2, 2, 1)
    kp = clients["kafka-python", "2.0"]
    assert kp["runs"] == 8  # every run with requests but stale (aiokafka)
    versions = {(r["client_name"], r["api"], r["version"]): r for r in results["api_versions"]}
    assert versions["aiokafka", "Heartbeat", 4]["requests"] == 1
    assert versions["aiokafka", "Heartbeat", 4]["broker_max"] == 4
    errors = {(r["client_name"], r["api"], r["error_code"]): r["responses"]
              for r in results["client_errors"]}
    assert errors["aiokafka", "OffsetCommit", 22] == 1  # a per-partition error counts too
    assert errors["kafka-python", "Heartbeat", 82] == 1


def test_conformance_matrix(report):
    results, _ = report
    assert [(r["scenario"], r["client"], r["client_version"], r["verdict"], r["a_reason"])
            for r in results["conformance"]] == [
        ("fenced-stops", "aiokafka", "0.12.0", "fail", "kept committing"),
        ("static-rejoin", "aiokafka", "0.12.0", "pass", None)]


def test_a_torn_last_line_is_skipped(report):
    results, _ = report
    crashed = [r for r in results["runs"] if r["run"] == "crashed"]
    assert crashed and crashed[0]["events"] == 2 and not crashed[0]["ended_cleanly"]


def test_outputs_on_disk(report):
    _, out = report
    for table in ("client_matrix", "rebalances", "violations", "conformance"):
        assert list((out / "tables" / table).glob("*.parquet")), table
        assert list((out / "csv" / table).glob("*.csv")), table
    page = (out / "report.html").read_text()
    # one file: the charting library and the data inline, nothing fetched (no src=, no link)
    assert all(f"id='chart-{c}'" in page for c in ("durations", "generations", "errors",
                                                   "versions"))
    assert "id='report-data'" in page and "Plotly" in page
    assert not re.search(r"<(script|img|link|iframe)[^>]*(src|href)=", page)


def test_run_filters(spark, fixture_traces):
    from kafka_emu.report.load import load
    def runs(**kw):
        return sorted(r["run"] for r in load(spark, [str(fixture_traces)], **kw).runs.collect())
    assert runs(since="2026-11-19") == ["crashed"]
    assert "crashed" not in runs(until="2026-11-18")
    assert runs(labels=[("suite", "a")]) == ["clean"]


def test_tables_longer_than_the_driver_takes_are_sampled_and_counted_whole(
        spark, fixture_traces, report, tmp_path, monkeypatch):
    """With room for 3 rows a table, the page and the summary still count every run, event and
    violation, and the worst runs' generations are all drawn: those figures come from the whole
    tables, and the collected rows are a sample the page names as one."""
    import io
    from kafka_emu.report import job
    whole, _ = report
    monkeypatch.setattr(job, "MAX_COLLECT", 3)
    results = job.run(spark, [str(fixture_traces)], tmp_path)
    assert len(results["violations"]) <= 3 < len(whole["violations"])
    assert results["violation_kinds"] == sorted(
        ({"kind": k, "count": n} for k, n in Counter(r["kind"] for r in whole["violations"])
         .items()), key=lambda r: r["kind"])
    assert results["run_events"] == [{"runs": len(whole["runs"]),
                                      "events": sum(r["events"] for r in whole["runs"])}]
    worst = job.worst_runs(results)
    assert worst and sorted(r["generation"] for r in results["worst_run_rebalances"]) == sorted(
        r["generation"] for r in whole["rebalances"] if r["run"] in worst)
    page = (tmp_path / "report.html").read_text()
    assert f"a uniform sample of {len(results['violations'])} of {len(whole['violations'])}" \
        in page
    text = io.StringIO()
    job.summary(results, tmp_path, text)
    assert f"{len(whole['runs'])} runs" in text.getvalue()
    assert f"double_fetch {EXPECTED_VIOLATIONS['double_fetch']['double']}" in text.getvalue()


@pytest.mark.parametrize("where", ["planning", "a group's thread"])
def test_a_failing_table_cancels_the_background_read_and_leaves_the_session_usable(
        spark, fixture_traces, tmp_path, monkeypatch, where):
    """The traces are read in the background while the tables are planned (by groups, each
    in a thread of its own for small traces); when a table fails, the error comes out and
    that read is cancelled rather than left running."""
    from kafka_emu.report import job
    from kafka_emu.report.load import Traces
    finished = []
    real_groups = job.table_groups

    def long_read(self):  # a read that would take minutes
        spark.range(0, 10**11, 1, 2).selectExpr("sum(id % 7)").collect()
        finished.append(True)

    def failing_group():
        raise RuntimeError("a table failed")

    def failing_tables(*args):
        if where == "planning":
            raise RuntimeError("a table failed")
        return [*real_groups(*args)[:1], failing_group]

    monkeypatch.setattr(Traces, "read_now", long_read)
    monkeypatch.setattr(job, "table_groups", failing_tables)
    with pytest.raises(RuntimeError, match="a table failed"):
        job.run(spark, [str(fixture_traces)], tmp_path)
    assert finished == []
    assert list(spark.sparkContext.statusTracker().getActiveJobsIds()) == []
    assert spark.range(3).count() == 3


def test_the_local_jvm_does_not_reserve_its_heap_by_default(spark):
    """An idle report-server that reserved its whole heap (-Xms = -Xmx, a quarter of the
    machine) held 4.8 GB until the kernel killed it: the heap is a maximum, grown as needed."""
    from kafka_emu.report.spark import driver_memory
    jvm = spark.sparkContext._jvm
    args = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
                .getInputArguments())
    heap = spark.sparkContext.getConf().get("spark.driver.memory")
    assert heap == driver_memory()
    assert f"-Xmx{heap}" in args
    assert not [a for a in args if a.startswith("-Xms")]


def test_the_jvms_memory_follows_the_option_then_the_environment(tmp_path, monkeypatch):
    from kafka_emu.report.server import command
    from kafka_emu.report.spark import RESERVE_ENV, MEMORY_ENV, driver_memory

    def heap_flags(**kw):
        argv, _ = command("127.0.0.1", 15002, "local[2]", tmp_path, **kw)
        confs = dict(a.split("=", 1) for a in argv if "=" in a and a.startswith("spark."))
        java = confs["spark.driver.extraJavaOptions"].split()
        return confs["spark.driver.memory"], [a for a in java if a.startswith("-Xms")]

    monkeypatch.delenv(MEMORY_ENV, raising=False)
    monkeypatch.delenv(RESERVE_ENV, raising=False)
    assert heap_flags() == (driver_memory(), [])
    assert heap_flags(memory="768m") == ("768m", [])
    assert heap_flags(memory="2g", reserve=True) == ("2g", ["-Xms2g"])
    monkeypatch.setenv(MEMORY_ENV, "3g")
    monkeypatch.setenv(RESERVE_ENV, "1")
    assert heap_flags() == ("3g", ["-Xms3g"])
    assert heap_flags(memory="1g", reserve=False) == ("1g", [])
