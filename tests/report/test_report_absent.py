"""What a small report spares building when its traces hold none of an event kind
(kafka_emu/report/absent.py): the kinds are told absent from the files' bytes only when that is
sure; a table left unbuilt is written from a declared schema equal to the built table's; a rule
left unbuilt finds nothing without its kind."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import attrs
import pyarrow.parquet as pq
import pytest

from kafka_emu.report import job, onepass, violations
from kafka_emu.report.absent import absent_kinds
from kafka_emu.report.analyses import request_counts
from kafka_emu.report.load import load

KINDS = ("transaction_ended", "member_removed", "scenario_verdict")


def _lines(path: Path, *kinds: str, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"kind": k, "run": "r", "reason": text}) + "\n"
                            for k in kinds))
    return path


def test_a_kind_no_file_names_is_absent_and_one_any_file_names_is_not(tmp_path):
    _lines(tmp_path / "date=1" / "run=a.jsonl", "member_removed", "run_start")
    _lines(tmp_path / "date=2" / "deeper" / "run=b.jsonl", "scenario_verdict")
    (tmp_path / "date=2" / "empty.jsonl").write_text("")
    (tmp_path / "notes.txt").write_text("transaction_ended")  # (not a trace: never read)
    assert absent_kinds([str(tmp_path)], KINDS) == {"transaction_ended"}
    # a file named on its own, and file: paths
    one = str(tmp_path / "date=1" / "run=a.jsonl")
    assert absent_kinds([one], KINDS) == {"transaction_ended", "scenario_verdict"}
    assert absent_kinds([f"file://{one}"], KINDS) == {"transaction_ended", "scenario_verdict"}
    # a kind spelled anywhere in a line counts as held (a reason naming it, say): never wrong
    _lines(tmp_path / "date=3" / "run=c.jsonl", "run_start", text="not a transaction_ended")
    assert absent_kinds([str(tmp_path)], KINDS) == frozenset()


@pytest.mark.parametrize("case", ["escape", "gzip", "parquet file", "parquet format", "remote",
                                  "missing"])
def test_nothing_is_absent_when_the_bytes_cannot_tell(tmp_path, case):
    _lines(tmp_path / "run=a.jsonl", "run_start")
    paths, input_format = [str(tmp_path)], "json"
    if case == "escape":  # JSON may spell a kind's letters as escapes: "\u0074ransaction..."
        (tmp_path / "run=b.jsonl").write_text('{"kind": "\\u0074ransaction_ended"}\n')
    elif case == "gzip":
        with gzip.open(tmp_path / "run=b.jsonl.gz", "wt") as f:
            f.write('{"kind": "transaction_ended"}\n')
    elif case == "parquet file":
        (tmp_path / "run=b.parquet").write_bytes(b"PAR1")
    elif case == "parquet format":
        input_format = "parquet"
    elif case == "remote":
        paths.append("hdfs://nn/traces")
    else:
        paths.append(str(tmp_path / "gone"))
    assert absent_kinds(paths, KINDS, input_format) == frozenset()
    # (and without the case, the same traces tell: the check above is not vacuous)
    if case in ("remote", "missing", "parquet format"):
        assert absent_kinds([str(tmp_path)], KINDS) == set(KINDS)


@pytest.fixture(scope="module")
def traces(spark, fixture_traces):
    with onepass.settings(spark, onepass.small_confs(1)):
        t = load(spark, [str(fixture_traces)], one_partition=True)
        t.read_now()
        yield t
        t.release()


def test_the_declared_schemas_are_the_built_tables(traces):
    from pyspark.sql.types import StructType
    built: dict = {}
    for group in job.table_groups(traces, request_counts(traces)):
        built.update(group())
    declared = {name: ddl for tables in job.ONE_KIND_TABLES.values()
                for name, ddl in tables.items()}
    assert set(declared) <= set(job.TABLES) and len(declared) == 9
    for name, ddl in declared.items():
        assert StructType.fromDDL(ddl) == built[name].schema, name


def test_without_its_kind_a_spared_rule_or_table_finds_nothing(traces):
    """Each rule the fixture shows finds its rows from its kind: the same traces without that
    kind's events give it none (so not building it loses nothing)."""
    from pyspark.sql import functions as F
    for rule, kind in violations.NEEDS.items():
        without = attrs.evolve(traces, events=traces.events.where(F.col("kind") != kind))
        assert rule(traces).count() > 0, rule.__name__
        assert rule(without).count() == 0, rule.__name__
    from kafka_emu.report.analyses import VERDICT, conformance
    without = attrs.evolve(traces, events=traces.events.where(F.col("kind") != VERDICT))
    assert conformance(traces).count() > 0 and conformance(without).count() == 0


def test_a_small_report_spares_what_its_traces_lack(spark, fixture_traces, tmp_path,
                                                    monkeypatch):
    """The fixture holds no transactions, share groups, logins or denials: the one-pass report
    builds none of their tables, and writes them with the schemas Spark writes them with."""
    told: list = []
    real = job.table_groups
    monkeypatch.setattr(job, "table_groups",
                        lambda t, counts, absent=frozenset(): told.append(absent) or
                        real(t, counts, absent))
    out = tmp_path / "one"
    job.run(spark, [str(fixture_traces)], out, html_page=False)
    assert told == [{"transaction_ended", "share_records_changed", "authentication_failed",
                     "authorization_denied"}]
    many = tmp_path / "many"
    job.run(spark, [str(fixture_traces)], many, html_page=False, one_pass=False)
    assert told[1:] == [frozenset()]  # (the large way builds every table)
    for name in job.empty_tables(told[0]):
        ours, sparks = (pq.read_table(d / "tables" / name).schema for d in (out, many))
        assert [(f.name, f.type, f.nullable) for f in ours] == \
            [(f.name, f.type, f.nullable) for f in sparks], name
        assert pq.read_table(out / "tables" / name).num_rows == 0
