"""The report benchmark's peer (bench/bench_report.py) computes what the report computes: on
the hand-built traces, where every violation kind occurs, DuckDB's tables have the job's columns
and rows (test_report_job.py checks the job's against known answers), so the printed
Spark / DuckDB ratio compares the same work."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest

from .test_report_job import EXPECTED_VIOLATIONS

BENCH = Path(__file__).parents[2] / "bench" / "bench_report.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_report", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def duck_out(bench, fixture_traces, tmp_path_factory) -> Path:
    pytest.importorskip("duckdb")
    out = tmp_path_factory.mktemp("duck")
    bench.duck_job(bench.duck_source(str(fixture_traces), "json"), out)
    return out


def test_duckdb_computes_every_table_of_the_report(bench, report):
    _, out = report
    assert set(bench.DUCK_TABLES) == {p.name for p in (out / "tables").iterdir()}


@pytest.mark.parametrize("kind", sorted(EXPECTED_VIOLATIONS))
def test_duckdb_finds_each_violation_in_its_fixture_and_nowhere_else(duck_out, kind):
    import pyarrow.parquet as pq
    rows = pq.read_table(duck_out / "violations.parquet").to_pylist()
    assert dict(Counter(r["run"] for r in rows if r["kind"] == kind)) == EXPECTED_VIOLATIONS[kind]


def test_duckdb_tables_are_the_jobs_row_for_row(bench, report, duck_out):
    _, out = report
    assert bench.table_differences(out / "tables", duck_out) == []


def test_a_table_that_differs_is_said(bench, report, duck_out, tmp_path):
    """The comparison can fail: a DuckDB table with one row less is reported."""
    import pyarrow.parquet as pq
    _, out = report
    for f in duck_out.glob("*.parquet"):
        table = pq.read_table(f)
        pq.write_table(table.slice(1) if f.stem == "violations" else table, tmp_path / f.name)
    assert [p.split(":")[0] for p in bench.table_differences(out / "tables", tmp_path)] == \
        ["violations"]
