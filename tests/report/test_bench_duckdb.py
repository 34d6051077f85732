"""The report benchmark's peer (bench/bench_report.py) computes what the report computes: its
DuckDB SQL finds each violation kind in that kind's fixture run and nowhere else, as the job
does (test_report_job.py), so the printed Spark / DuckDB ratio compares the same work."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest

from .test_report_job import EXPECTED_VIOLATIONS

BENCH = Path(__file__).parents[2] / "bench" / "bench_report.py"


@pytest.fixture(scope="module")
def duck(fixture_traces):
    duckdb = pytest.importorskip("duckdb")
    spec = importlib.util.spec_from_file_location("bench_report", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    con = duckdb.connect()
    bench.duck_tables(con, bench.duck_source(str(fixture_traces), "json"))
    yield bench, con
    con.close()


def test_the_bench_computes_every_violation_kind(duck):
    bench, _ = duck
    assert set(bench.SPARK_VIOLATIONS) == set(EXPECTED_VIOLATIONS) <= set(bench.DUCK_SQL)


@pytest.mark.parametrize("kind", sorted(EXPECTED_VIOLATIONS))
def test_duckdb_finds_each_violation_in_its_fixture_and_nowhere_else(duck, kind):
    bench, con = duck
    rows = con.execute(bench.DUCK_SQL[kind]).fetchall()
    assert dict(Counter(row[0] for row in rows)) == EXPECTED_VIOLATIONS[kind]
