"""The two ways the job runs give the same report: one Spark job for small traces
(onepass.py: tables collected whole and written by this process) and table by table for large
ones (each written by Spark). And the rules that know a run's settings: a heartbeat interval
the run says its clients were configured with is not "too fast"."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kafka_emu.report import job, onepass

from .test_bench_duckdb import bench  # noqa: F401 -- (the fixture)
from .traces import T0, Run

TABLES = job.TABLES


def _rows(out: Path, name: str) -> list[str]:
    """A table's rows (in a canonical order: rows whose sort keys tie come in any order)."""
    return sorted(map(repr, pq.read_table(out / "tables" / name).to_pylist()))


def test_the_small_traces_take_the_one_pass_way(fixture_traces):
    size = onepass.input_bytes([str(fixture_traces)])
    assert 0 < size <= onepass.ONE_PASS_BYTES and onepass.partitions_for(size) == 1
    assert onepass.input_bytes(["hdfs://nn/traces"]) is None  # (not measured: table by table)


def test_one_pass_and_table_by_table_write_the_same_tables(spark, fixture_traces, report,
                                                          tmp_path):
    whole, one = report  # (the fixture's report took the one-pass way)
    many = tmp_path / "many"
    results = job.run(spark, [str(fixture_traces)], many, csv=True, one_pass=False)
    for name in TABLES:
        assert _rows(one, name) == _rows(many, name), name
        assert pq.read_table(one / "tables" / name).schema.names == \
            pq.read_table(many / "tables" / name).schema.names
        assert sorted(map(repr, results[name])) == sorted(map(repr, whole[name])), name
        # the CSV has the same header and as many rows
        (ours,) = (one / "csv" / name).glob("*.csv")
        (sparks,) = (many / "csv" / name).glob("*.csv")
        assert ours.read_text().splitlines()[0] == sparks.read_text().splitlines()[0]
        assert len(ours.read_text().splitlines()) == len(sparks.read_text().splitlines())
    for key in ("run_events", "violation_kinds", "worst_runs", "table_rows", "dropped_lines",
                "writer_lost"):
        assert results[key] == whole[key], key
    assert sorted(map(json.dumps, results["worst_run_rebalances"])) == \
        sorted(map(json.dumps, whole["worst_run_rebalances"]))
    # the run views carry the same events
    runs = {r["run"] for r in results["timeline"]}
    key = lambda r: (r["run"], r["seq"])  # noqa: E731
    assert runs and sorted((r for r in whole["timeline"] if r["run"] in runs), key=key) == \
        sorted(results["timeline"], key=key)


def test_the_session_settings_come_back_after_a_one_pass_report(spark, fixture_traces,
                                                                tmp_path):
    before = {k: spark.conf.get(k, None) for k in onepass.small_confs(1)}
    job.run(spark, [str(fixture_traces)], tmp_path, html_page=False, one_pass=True)
    assert {k: spark.conf.get(k, None) for k in onepass.small_confs(1)} == before


def test_the_read_starts_while_the_rest_is_planned(spark, fixture_traces, tmp_path,
                                                   monkeypatch):
    """The one-pass way starts reading the traces as soon as load() has planned the read (the
    rest of its planning keeps one core of two busy), once, and counts every line."""
    from kafka_emu.report import load as load_module
    planning = [False]
    starts: list[tuple[bool, int]] = []
    real_load, real_start = job.load, job._BackgroundRead.start

    def load(*args, **kwargs):
        planning[0] = True
        try:
            return real_load(*args, **kwargs)
        finally:
            planning[0] = False

    def start(self, read):
        if self.future is None:  # (the start that takes effect)
            planned = planning[0]

            def counted():  # (in the read's thread: kept rows wait for load() to plan them)
                lines = read()
                starts.append((planned, lines))
                return lines
            real_start(self, counted)
        else:
            real_start(self, read)
    monkeypatch.setattr(job, "load", load)
    monkeypatch.setattr(job._BackgroundRead, "start", start)
    job.run(spark, [str(fixture_traces)], tmp_path, html_page=False, one_pass=True)
    lines = sum(1 for f in Path(fixture_traces).rglob("*.jsonl") for _ in f.open())
    assert starts == [(True, lines)]
    assert load_module.load is real_load  # (job.py's name, not the module's, was wrapped)


def test_a_failure_after_the_read_started_stops_it(spark, fixture_traces, tmp_path,
                                                   monkeypatch):
    """load() planned the read and started it; what fails after that (here the look at the
    files' bytes) stops the read and ends its thread, and the error comes out."""
    import threading

    def broken(*_args):
        raise RuntimeError("the files went")
    monkeypatch.setattr(job, "absent_kinds", broken)
    with pytest.raises(RuntimeError, match="the files went"):
        job.run(spark, [str(fixture_traces)], tmp_path, html_page=False, one_pass=True)
    assert [t.name for t in threading.enumerate() if t.name.startswith("kafka-emu-read")] == []
    # and the session still serves the next report
    monkeypatch.undo()
    results = job.run(spark, [str(fixture_traces)], tmp_path / "next", html_page=False,
                      one_pass=True)
    assert results["runs"]


def fast_heartbeats(root: Path, run_id: str, labels: dict) -> None:
    """m1: 20 heartbeats 10 ms apart for a 10 s session timeout (as the fixture's fasthb)."""
    run = Run(run_id, labels=labels)
    run.request(0, "JoinGroup", generation_id=-1, session_timeout_ms=10000,
                rebalance_timeout_ms=30000)
    for i in range(20):
        run.request(100 + 10 * i, "Heartbeat")
    run.write(root)


@pytest.fixture(scope="module")
def configured(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("configured")
    fast_heartbeats(root, "as-configured", {"heartbeat.interval.ms": "10"})
    fast_heartbeats(root, "faster-than-configured", {"heartbeat_interval_ms": "1000"})
    fast_heartbeats(root, "not-said", {})
    fast_heartbeats(root, "not-a-number", {"heartbeat.interval.ms": "soon"})
    return root


def test_heartbeats_at_the_configured_interval_are_not_too_fast(spark, configured, tmp_path,
                                                               bench):  # noqa: F811
    results = job.run(spark, [str(configured)], tmp_path, html_page=False)
    found = {r["run"]: r["detail"] for r in results["violations"]
             if r["kind"] == "heartbeat_too_fast"}
    assert found == {
        "faster-than-configured": "20 heartbeats, median every 10 ms for a session timeout of "
                                  "10000 ms (configured every 1000 ms)",
        "not-said": "20 heartbeats, median every 10 ms for a session timeout of 10000 ms",
        "not-a-number": "20 heartbeats, median every 10 ms for a session timeout of 10000 ms"}
    assert T0  # (the fixture's epoch: the runs start there)
    duck = tmp_path / "duck"
    duck.mkdir()
    bench.duck_job(bench.duck_source(str(configured), "json"), duck)
    assert bench.table_differences(tmp_path / "tables", duck) == []


def test_a_local_session_keeps_the_leaves_as_rows_and_forgets_them(spark, fixture_traces,
                                                                   tmp_path):
    """kept.py: in a local session the one-pass leaves (the lines, runs, events, requests)
    are rows kept in the JVM, which the plans scan without a copy; releasing the traces, or
    the end of a report, forgets them."""
    from kafka_emu.report import kept
    from kafka_emu.report.load import load
    rows = kept._rows_class(spark)
    before = rows.held()
    lines = sum(1 for f in Path(fixture_traces).rglob("*.jsonl") for _ in f.open())
    with onepass.settings(spark, onepass.small_confs(1)):
        t = load(spark, [str(fixture_traces)], one_partition=True)
        assert t.read_now() == lines and t.read_now() == lines  # (read once)
        assert rows.held() == before + 4
        for df in (t.runs, t.events, t.requests):
            plan = df._jdf.queryExecution().executedPlan().toString()
            assert "BatchScan kafka-emu-kept" in plan and "Exchange" not in plan
        assert t.requests.count() > 0 and t.events.count() > 0
        t.release()
    assert rows.held() == before
    job.run(spark, [str(fixture_traces)], tmp_path, html_page=False, one_pass=True)
    assert rows.held() == before


def test_kept_rows_and_local_checkpoints_give_the_same_tables(spark, fixture_traces, report,
                                                            tmp_path, monkeypatch):
    """The way any other session keeps the leaves (local checkpoints: Spark Connect, a
    cluster) writes the same tables as the kept rows of the fixture's local session."""
    from kafka_emu.report import load as load_module
    _whole, one = report
    monkeypatch.setattr(load_module, "kept_usable", lambda _spark, _paths: False)
    job.run(spark, [str(fixture_traces)], tmp_path, html_page=False, one_pass=True)
    for name in TABLES:
        assert _rows(tmp_path, name) == _rows(one, name), name


def test_a_leaf_that_fails_to_be_kept_says_why_and_leaves_nothing(spark):
    from pyspark.sql import functions as F

    from kafka_emu.report import kept
    rows = kept._rows_class(spark)
    before = rows.held()
    store = kept.Kept(spark)
    store.frame(spark.range(3))
    store.frame(spark.range(3).select(F.raise_error(F.lit("the leaf broke")).alias("x")))
    store.seal()
    with pytest.raises(Exception, match="the leaf broke"):
        store.keep_all()
    with pytest.raises(Exception, match="the leaf broke"):
        store.ready()  # (what a table's collect waits on)
    store.unpersist()
    assert rows.held() == before


def test_a_load_that_fails_after_the_read_started_ends_the_read(spark, fixture_traces,
                                                                tmp_path):
    """The read started by load() waits for the leaves it plans; load() failing before it
    planned them all must not leave that read (nor the report) waiting."""
    import threading

    from kafka_emu.report.spark import ReportError
    with pytest.raises(ReportError, match="expected a date"):
        job.run(spark, [str(fixture_traces)], tmp_path, html_page=False, one_pass=True,
                since="yesterday-ish")
    assert [t.name for t in threading.enumerate() if t.name.startswith("kafka-emu-read")] == []


def test_traces_whose_rows_would_crowd_the_heap_keep_local_checkpoints(spark, fixture_traces):
    """Kept rows cannot spill to disk as a checkpoint can: traces whose rows would take more
    than a share of the JVM's heap (or whose size is unknown) keep local checkpoints."""
    from kafka_emu.report import kept
    heap = 3 * 2**30
    assert kept.fits(100 * 2**20, heap) and not kept.fits(400 * 2**20, heap)
    assert not kept.fits(None, heap)  # (hdfs://, s3a://: not measured)
    assert kept.usable(spark, [str(fixture_traces)])
    assert not kept.usable(spark, ["hdfs://nn/traces"])


def test_compressed_traces_count_as_what_they_hold(tmp_path):
    import gzip

    (tmp_path / "a.jsonl").write_bytes(b"x" * 1000)
    with gzip.open(tmp_path / "b.jsonl.gz", "wb") as f:
        f.write(b"y" * 100_000)
    packed = (tmp_path / "b.jsonl.gz").stat().st_size
    assert onepass.json_bytes([str(tmp_path)]) == 1000 + packed * onepass.COMPRESSED_RATIO
