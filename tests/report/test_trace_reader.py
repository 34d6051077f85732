"""The report's own trace reader (kafka_emu/report/jvm, format "kafka-emu-traces") against
Spark's JSON reader: the same rows from the same files, whatever the files hold, and the same
report tables.

Spark's reader, with the options the report gave it before it had its own (explicit schema,
recursive, ``*.jsonl*``, DROPMALFORMED), is the reference: every comparison reads both ways in
one session and compares every column of every row."""

from __future__ import annotations

import gzip
import json
import random
import zipfile
from pathlib import Path

import pytest

from kafka_emu.report import trace_jar
from kafka_emu.report.load import DROPPED, read_json_lines
from kafka_emu.report.spark import struct_type

from . import traces

# values of every JSON type, and the edge cases of each (Spark reads "NaN" as a double, an
# integer past a long's range is no long, 1e400 is a double's infinity, ...)
ODD_VALUES = ("x", "", 7, -0, 1.5, 1e400, 2**63, -(2**63), True, False, None, [], [1, "a"],
              {}, {"a": 1}, {"a": {"b": [None]}}, "NaN", "Infinity", "-INF", "12", "true",
              "ünïcødé ✓", "tab\there")


def as_json_rows(df) -> list[str]:
    """Every row as the JSON of all its columns, sorted (duplicates kept)."""
    from pyspark.sql import functions as F
    return sorted(r[0] for r in df.select(F.to_json(F.struct(*df.columns))).collect())


def spark_json(spark, root: Path):
    return (spark.read.schema(struct_type()).option("recursiveFileLookup", "true")
            .option("pathGlobFilter", "*.jsonl*").option("mode", "DROPMALFORMED")
            .json([str(root)]))


def ours(spark, root: Path):
    return (spark.read.schema(struct_type()).option("recursiveFileLookup", "true")
            .option("pathGlobFilter", "*.jsonl*").format(trace_jar.FORMAT).load([str(root)]))


@pytest.fixture(scope="module")
def jar() -> Path:
    # the suite runs where make has built the jar (make test needs a JDK; .ci/run installs
    # one): a missing jar is a failure here, not a skip
    found = trace_jar.find()
    assert found is not None, "the trace reader's jar is not built: run make setup"
    return found


def _mutate(rng: random.Random, line: str) -> str:
    """The line damaged one way, or kept: torn, a value of another type somewhere inside, an
    unknown field, a repeated key, or something that is not an object at all."""
    try:
        record = json.loads(line)
    except ValueError:
        return line  # (the fixtures' crashed run ends torn already)
    roll = rng.random()
    if roll < 0.4:
        return line
    if roll < 0.5:
        return line[:rng.randrange(1, len(line))]  # torn (a crashed run's last line)
    if roll < 0.8:
        holder, key = record, rng.choice(sorted(record))
        while isinstance(holder[key], (dict, list)) and holder[key] and rng.random() < 0.6:
            holder = holder[key]
            key = rng.choice(sorted(holder)) if isinstance(holder, dict) else \
                rng.randrange(len(holder))
        holder[key] = rng.choice(ODD_VALUES)
        return json.dumps(record, ensure_ascii=rng.random() < 0.5)
    if roll < 0.87:
        record["not_in_the_schema"] = rng.choice(ODD_VALUES)
        return json.dumps(record)
    if roll < 0.93:  # a key twice: the struct takes the last, a map's duplicate drops the line
        text = json.dumps(record)
        return text[:-1] + ', "run": "again", "labels": {"k": "1", "k": "2"}}'
    return rng.choice(["", "   ", "[1, 2]", "42", '"text"', "null", "{}", line + "\r",
                       line + " trailing", "{'kind': 'single', 'run': 'quotes'}"])


@pytest.fixture(scope="module")
def odd_traces(tmp_path_factory) -> Path:
    """The fixture runs' lines, damaged at random, in files of the shapes traces come in:
    plain, gzip, no newline at the end, CRLF, a line longer than the reader's 8 MB block, and
    files both readers must skip (hidden, temporary, other names)."""
    root = tmp_path_factory.mktemp("odd-traces")
    source = tmp_path_factory.mktemp("odd-source")
    traces.build(source)
    lines = [line for path in sorted(source.rglob("*.jsonl"))
             for line in path.read_text().splitlines()]
    rng = random.Random(20261128)
    damaged = [_mutate(rng, line) for line in lines for _ in range(3)]
    third = len(damaged) // 3
    day = root / "date=2026-11-28"
    day.mkdir()
    (day / "run=plain.jsonl").write_text("\n".join(damaged[:third]) + "\n")
    with gzip.open(day / "run=gzip.jsonl.gz", "wt") as out:
        out.write("\n".join(damaged[third:2 * third]) + "\n")
    (day / "run=no-newline.jsonl").write_text("\n".join(damaged[2 * third:]))
    (day / "run=crlf.jsonl").write_bytes("\r\n".join(lines[:50]).encode() + b"\r\n")
    huge = json.loads(lines[0]) | {"client_id": "x" * (9 << 20)}
    (day / "run=huge.jsonl").write_text(lines[1] + "\n" + json.dumps(huge) + "\n" + lines[2])
    for skipped in (".hidden.jsonl", "_temporary.jsonl", "notes.txt"):
        (day / skipped).write_text(lines[3] + "\n")
    return root


def test_the_fixture_traces_read_the_same_either_way(spark, jar, fixture_traces):
    expected = as_json_rows(spark_json(spark, fixture_traces))
    assert len(expected) > 100
    assert as_json_rows(ours(spark, fixture_traces)) == expected


def test_damaged_lines_odd_values_and_odd_files_read_the_same_either_way(spark, jar,
                                                                         odd_traces):
    expected = as_json_rows(spark_json(spark, odd_traces))
    got = as_json_rows(ours(spark, odd_traces))
    assert len(got) == len(expected)
    assert got == expected
    # the corpus holds what it is meant to: dropped lines, kept lines with odd values, the
    # huge line, and the lines of the gzip file
    total = sum(len((gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else
                     p.read_bytes()).splitlines()) for p in odd_traces.rglob("run=*"))
    assert 1000 < len(got) < total
    assert any(len(row) > 9 << 20 for row in got)
    assert any('"run":"again"' in row for row in got)


def test_files_split_into_many_pieces_read_the_same(spark, jar, odd_traces, tmp_path):
    # small pieces: many lines are cut by a piece's end, and each must be read once, whole
    big = tmp_path / "big.jsonl"
    text = "".join(p.read_text() + "\n" for p in sorted(odd_traces.rglob("run=plain.jsonl")))
    big.write_text(text * 4)
    saved = {key: spark.conf.get(key) for key in ("spark.sql.files.maxPartitionBytes",
                                                  "spark.sql.files.openCostInBytes")}
    try:
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(64 << 10))
        spark.conf.set("spark.sql.files.openCostInBytes", "1024")
        df = ours(spark, tmp_path)
        assert df.rdd.getNumPartitions() >= len(text) * 4 // (64 << 10)
        assert as_json_rows(df) == as_json_rows(spark_json(spark, tmp_path))
    finally:
        for key, value in saved.items():
            spark.conf.set(key, value)


def test_the_report_reads_with_its_own_reader_and_with_sparks_when_asked(spark, jar,
                                                                        fixture_traces,
                                                                        monkeypatch):
    said: list[str] = []
    df = read_json_lines(spark, [str(fixture_traces)], said.append)
    assert "BatchScan kafka-emu-traces" in df._jdf.queryExecution().executedPlan().toString()
    assert said == []
    # asked for Spark's reader: it reads with it, and that needs no word
    monkeypatch.setenv(trace_jar.READER_ENV, "json")
    df = read_json_lines(spark, [str(fixture_traces)], said.append)
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "kafka-emu-traces" not in plan and "Format: JSON" in plan
    assert said == []


def test_a_spark_without_the_reader_falls_back_to_its_json_reader_and_says_so(
        spark, jar, fixture_traces, monkeypatch):
    rows = ours(spark, fixture_traces).count()
    # (a format name no jar registers: Spark's own lookup fails, as it does on a Spark that
    # was not given the jar)
    monkeypatch.setattr(trace_jar, "FORMAT", "kafka-emu-traces-nowhere")
    said: list[str] = []
    df = read_json_lines(spark, [str(fixture_traces)], said.append)
    assert "Format: JSON" in df._jdf.queryExecution().executedPlan().toString()
    (line,) = said
    assert line.startswith("reading with Spark's JSON reader: ")
    assert "kafka-emu-traces-nowhere" in line and "\n" not in line
    assert df.count() == rows


def test_a_missing_path_is_an_error_when_the_dataframe_is_made(spark, jar, tmp_path):
    with pytest.raises(Exception, match="Path does not exist"):
        ours(spark, tmp_path / "nowhere")


def test_the_report_tables_are_the_same_with_sparks_json_reader(spark, jar, report,
                                                               fixture_traces, tmp_path,
                                                               monkeypatch):
    from kafka_emu.report import job
    results, _ = report  # (read with the report's own reader, as the test above shows)
    monkeypatch.setenv(trace_jar.READER_ENV, "json")
    with_json = job.run(spark, [str(fixture_traces)], tmp_path / "out", html_page=False)
    assert with_json.keys() == results.keys()
    for name in results:
        assert with_json[name] == results[name], name


def test_the_jar_is_named_by_its_sources_and_registers_the_format(tmp_path, monkeypatch):
    sources = tmp_path / "jvm"
    sources.mkdir()
    for path in trace_jar.sources():
        (sources / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(trace_jar, "SOURCES", sources)
    first = trace_jar.build(sources)
    with zipfile.ZipFile(first) as built:
        assert built.read(trace_jar.SERVICE).decode().split() == list(trace_jar.PROVIDERS)
        assert "kafka_emu/report/jvm/TraceSource.class" in built.namelist()
    # an edited source is a new jar, and the old one is gone
    reader = sources / "TraceReader.java"
    reader.write_text(reader.read_text() + "\n// edited\n")
    second = trace_jar.build(sources)
    assert second.name != first.name and not first.exists()
    assert trace_jar.find() == second


def test_both_readers_count_the_same_dropped_lines_per_file_and_reason(spark, jar, odd_traces,
                                                                      monkeypatch):
    """What the report says it skipped does not depend on the reader: each damaged line of the
    random corpus is dropped by both, for the same reason (every column read)."""
    from pyspark.sql import functions as F

    def drops():
        df = read_json_lines(spark, [str(odd_traces)], drops=True)
        every = df.select(F.to_json(F.struct(*(c for c in df.columns if c != DROPPED)))
                          .alias("row"), DROPPED, F.input_file_name().alias("file"))
        # (the rows' text read too: a query of Spark's corrupt-record column alone is refused)
        found = (every.where(F.col(DROPPED).isNotNull())
                 .groupBy(F.regexp_replace("file", "^file:(//)?", "").alias("file"), DROPPED)
                 .agg(F.count(F.lit(1)).alias("count"), F.max("row")).collect())
        return sorted((r["file"], r[DROPPED], r["count"]) for r in found)

    ours_drops = drops()
    monkeypatch.setenv(trace_jar.READER_ENV, "json")
    assert drops() == ours_drops
    assert {reason for _, reason, _ in ours_drops} == {"unparsable", "wrong type"}
    assert sum(n for *_, n in ours_drops) > 100
