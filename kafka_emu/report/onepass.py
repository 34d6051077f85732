"""The report over small traces: every table in one pass, written by this process.

Most reports are of the run that just failed: a few hundred to a few hundred thousand events,
where each Spark job, each Parquet write (a job of its own, with its commit protocol) and
each shuffle partition costs far more than the data. So for traces of up to ONE_PASS_BYTES the
job is one pass after the read:

- every table (and what the page needs besides: the lines skipped, the runs' timelines, each
  connection's client) is the same DataFrame as the table-by-table job builds, each row turned
  into one JSON text by Spark's ``to_json`` (a built-in function, not a Python UDF: any Spark
  runs it) and unioned with the others of its group (job.table_groups()) into one DataFrame of
  (table, row), collected at once. The groups are built and collected side by side,
  COLLECT_JOBS threads, while a thread of job.py reads the traces: building the DataFrames is
  most of a small report's time, and one thread's calls keep one core busy. The plans share
  their scans of the traces' checkpoint;
- the shuffles have as many partitions as the data needs (partitions_for(): one per 64 MB),
  set for this job only;
- the rows come back whole, so the figures the page counts are counted here over the whole
  tables, and the tables are written here as Parquet by pyarrow (pyspark's own Arrow types,
  from each DataFrame's schema), one file per table, in the layout Spark writes
  (``tables/NAME/part-00000.parquet``), and as CSV alike.
"""

from __future__ import annotations

import contextlib
import csv as csv_module
import json
import os
import random
import shutil
import uuid
from collections import Counter
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable, Iterator

ONE_PASS_BYTES = 256 * 2**20  # about half a million events of JSON Lines
PARTITION_BYTES = 64 * 2**20
SINGLE_PARTITION_BYTES = "spark.sql.maxSinglePartitionBytes"
COLLECT_JOBS = max(1, min(4, os.cpu_count() or 1))  # groups built and collected at once


def input_bytes(paths: list[str]) -> int | None:
    """How many bytes the trace files under ``paths`` hold, or None when some path is not on
    this machine's disk (hdfs://, s3a://: the size would take a listing of its own)."""
    files = trace_files(paths)
    return None if files is None else sum(os.path.getsize(f) for f in files)


# A compressed trace file (.jsonl.gz, ...) or a Parquet one counts as this many times its
# bytes of JSON: the trace writer's JSON Lines compress about 8-10x.
COMPRESSED_RATIO = 12


def json_bytes(paths: list[str]) -> int | None:
    """About how many bytes of JSON Lines the traces under ``paths`` hold once decompressed
    (None: not on this machine's disk): what the JVM's work and memory grow with."""
    files = trace_files(paths)
    if files is None:
        return None
    return sum(os.path.getsize(f) * (1 if f.endswith(".jsonl") else COMPRESSED_RATIO)
               for f in files)


def trace_files(paths: list[str]) -> list[str] | None:
    """The trace files under ``paths`` (each a file, or a directory of JSON Lines or Parquet
    files at any depth), or None when some path is not on this machine's disk."""
    out: list[str] = []
    for name in paths:
        if "://" in name and not name.startswith("file:"):
            return None
        root = Path(name.removeprefix("file://").removeprefix("file:"))
        if root.is_file():
            out.append(str(root))
        elif root.is_dir():
            out += [os.path.join(folder, f) for folder, _dirs, files in os.walk(root)
                    for f in files if ".jsonl" in f or f.endswith(".parquet")]
        else:
            return None
    return out


def partitions_for(size: int | None) -> int:
    return max(1, min(8, -(-(size or 0) // PARTITION_BYTES)))


def small_confs(partitions: int) -> dict[str, str]:
    """The session's settings for a one-pass job (set for the job only, then restored).

    - as many shuffle partitions as the data needs; with one, load() puts the traces in a
      single partition, which satisfies every grouping, window and join above it: Spark plans
      no shuffle for them (about eighty stages fewer);
    - no broadcast joins, asked for or chosen (each is a Spark job of its own, and a wait that
      can time out); with the traces in one partition a join needs no shuffle either;
    - no generated code: compiling the plan's Java (hundreds of classes in a fresh JVM) took
      longer than running it interpreted over a few thousand rows; Spark's own fallback path,
      the same results (a fresh JVM, 1,365 events: 53 s against 133 s on a loaded machine);
    - no constraint propagation: inferring filters across the one plan's forty-odd joins is
      the optimizer's costliest rule on a plan this size, and the data is too small for the
      filters it would add to matter;
    - every plan's size estimate tiny (a byte for what has no statistics) and no limit on a
      single partition's size: Spark keeps a join's sides in the one partition they are in
      only when both are estimated under spark.sql.maxSinglePartitionBytes (128 MB), and the
      trace reader (a DataSource V2 that reports no statistics) is estimated at Long.MAX_VALUE
      bytes, so every join and every grouping above it was shuffled (into one partition).
      With both settings a 300-event plan went from 90 stages to 31 (counted with the status
      tracker); what stayed, unions, joins and Expands under a grouping, a join or a sort,
      load.gathered() keeps in one partition with a coalesce: 3 stages in all (the traces
      read into one partition, then the one job)."""
    return {"spark.sql.shuffle.partitions": str(partitions),
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            "spark.sql.optimizer.disableHints": "true",
            "spark.sql.codegen.wholeStage": "false",
            "spark.sql.codegen.factoryMode": "NO_CODEGEN",
            "spark.sql.constraintPropagation.enabled": "false",
            SINGLE_PARTITION_BYTES: str(2**62),
            "spark.sql.defaultSizeInBytes": "1"}


# id(session) -> the settings() in force on it: what in_force() answers without asking the
# session (a round trip to its JVM or server, hundreds of times per report: load.gathered())
_IN_FORCE: dict[int, dict[str, str]] = {}


@contextlib.contextmanager
def settings(spark: Any, confs: dict[str, str] | None) -> Iterator[None]:
    """The session's settings ``confs`` for the block (nothing when None), restored after."""
    if not confs:
        yield
        return
    before = {key: spark.conf.get(key, None) for key in confs}
    for key, value in confs.items():
        spark.conf.set(key, value)
    outer = _IN_FORCE.get(id(spark))
    _IN_FORCE[id(spark)] = {**(outer or {}), **confs}
    try:
        yield
    finally:
        if outer is None:
            _IN_FORCE.pop(id(spark), None)
        else:
            _IN_FORCE[id(spark)] = outer
        with contextlib.suppress(Exception):  # (a server that went: nothing to restore)
            for key, value in before.items():
                if value is None:
                    spark.conf.unset(key)
                else:
                    spark.conf.set(key, value)


def in_force(spark: Any, key: str) -> str | None:
    """The value settings() gave ``key`` on ``spark`` in the block under way, else None."""
    return _IN_FORCE.get(id(spark), {}).get(key)


def compute(spark: Any, t: Any, out: Path, csv: bool, stage: Callable, *, max_rows: int,
            worst: int, absent: frozenset[str] = frozenset()) -> dict[str, list]:
    """``absent``: event kinds the traces hold none of (absent.py): the tables they leave
    empty are written from their schemas, unbuilt."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    from . import analyses, job

    counts = analyses.request_counts(t)

    def extra() -> dict[str, Any]:  # what the page needs besides the tables
        lost = (t.events.where((F.col("kind") == "run_end") & (F.col("dropped") > 0))
                .select("run", F.col("dropped").alias("events_lost")))
        return {"dropped_lines": t.drops, "writer_lost": lost,
                "timeline": analyses.run_timeline(t),
                "connections": analyses.connection_clients(counts)}

    with stage("reading, every table in one pass"):
        frames, rows = build_and_collect(spark, job.table_groups(t, counts, absent) + [extra],
                                         ready=t.ready)
        schemas = {name: df.schema for name, df in frames.items()}
        for name, ddl in job.empty_tables(absent).items():
            schemas[name], rows[name] = StructType.fromDDL(ddl), []
        figures = whole_table_figures(rows, worst)
    with stage("writing the tables"):
        for name in job.TABLES:
            write(out, name, schemas[name], rows[name], csv)
    results: dict[str, list] = {}
    totals: dict[str, int] = {}
    for name in job.TABLES:
        totals[name] = len(rows[name])
        results[name] = sample(rows[name], max_rows)
    drops = rows["dropped_lines"] + t.more_drops()
    for r in drops:
        r["file"] = job._local_path(r["file"])
    results.update(figures)
    results["table_rows"] = [{"table": name, "rows": n} for name, n in totals.items()]
    results["dropped_lines"] = sorted(drops, key=lambda r: (r["file"], r["reason"]))
    results["writer_lost"] = sorted(rows["writer_lost"], key=lambda r: r["run"])
    results["timeline"] = timelines(rows["timeline"], results)
    results["connections"] = rows["connections"]
    return results


def build_and_collect(spark: Any, groups: list[Callable[[], dict[str, Any]]],
                      ready: Callable[[], None] = lambda: None
                      ) -> tuple[dict[str, Any], dict[str, list[dict]]]:
    """Every group's DataFrames built and their rows collected, COLLECT_JOBS groups at a
    time, each in a thread of its own: building a DataFrame is the driver JVM's work, one
    call at a time per thread, and a one-partition job runs as one task -- one core either
    way. ``ready()`` is called before each collect (Traces.ready: the kept rows are there).
    Returns the DataFrames (their schemas asked for already) and the rows by name.
    When a group fails, the others' jobs are cancelled (a job may wait for task slots held
    by the background read) and the first failure comes out."""
    from . import job
    tag = f"kafka-emu-tables-{uuid.uuid4().hex}"

    def one(group: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, list]]:
        done: list = []

        def build() -> None:
            frames = group()
            for df in frames.values():
                _ = df.schema  # (here, in the group's thread: the tables' writer needs it)
            ready()
            done.append((frames, collect_all(frames)))

        job._tagged(spark, tag, build, "the tables")
        return done[0]

    pool = ThreadPoolExecutor(min(COLLECT_JOBS, len(groups)),
                              thread_name_prefix="kafka-emu-collect")
    futures = [pool.submit(one, group) for group in groups]
    finished, running = wait(futures, return_when=FIRST_EXCEPTION)
    failed = [f for f in futures if f in finished and f.exception() is not None]
    pool.shutdown(wait=False, cancel_futures=True)
    if failed:
        for f in running:
            job._cancel(spark, tag, f)
        raise failed[0].exception()
    frames: dict[str, Any] = {}
    rows: dict[str, list[dict]] = {}
    for f in futures:
        built, got = f.result()
        frames.update(built)
        rows.update(got)
    return frames, rows


def collect_all(frames: dict[str, Any]) -> dict[str, list[dict]]:
    """Every DataFrame's rows, in one Spark job: each row as JSON text beside its frame's
    name. (Nulls are written as nulls, so every row has every column.)"""
    from functools import reduce

    from pyspark.sql import functions as F
    # (struct("*"): the columns named by Spark as it plans, not asked for first -- on Spark
    # Connect each question about a DataFrame's columns is a round trip and an analysis)
    parts = [df.select(F.lit(name).alias("t"),
                       F.to_json(F.struct("*"), {"ignoreNullFields": "false"}).alias("j"))
             for name, df in frames.items()]
    rows: dict[str, list[dict]] = {name: [] for name in frames}
    for r in reduce(lambda a, b: a.union(b), parts).collect():
        rows[r["t"]].append(json.loads(r["j"]))
    return rows


def sample(rows: list[dict], n: int) -> list[dict]:
    """At most ``n`` rows, a uniform sample in the table's order when there are more."""
    if len(rows) <= n:
        return rows
    keep = sorted(random.Random(1).sample(range(len(rows)), n))
    return [rows[i] for i in keep]


def whole_table_figures(rows: dict[str, list[dict]], worst: int) -> dict[str, list]:
    """What the page and the summary count over the whole tables (as job._whole_table_figures
    does in Spark for large traces)."""
    reb, vio = rows["rebalances"], rows["violations"]
    longest: dict[str, int] = {}
    for r in reb:
        longest[r["run"]] = max(longest.get(r["run"], 0), r["duration_ms"] or 0)
    per_run = Counter(r["run"] for r in vio)
    ranked = sorted(longest, key=lambda run: (-longest[run], -per_run[run], run))[:worst]
    return {
        "run_events": [{"runs": len(rows["runs"]),
                        "events": sum(r["events"] or 0 for r in rows["runs"])}],
        "violation_kinds": [{"kind": k, "count": n} for k, n in sorted(
            Counter(r["kind"] for r in vio).items())],
        "worst_runs": [{"run": run} for run in ranked],
        "worst_run_rebalances": [r for r in reb if r["run"] in ranked],
    }


def timelines(rows: list[dict], results: dict, limit: int | None = None) -> list[dict]:
    """The runs' timeline rows, whole runs only, at most ``limit`` rows (job.TIMELINE_ROWS):
    the worst runs first, then those with violations, then the rest."""
    from . import job
    limit = job.TIMELINE_ROWS if limit is None else limit
    per_run: dict[str, list[dict]] = {}
    for r in rows:
        per_run.setdefault(r["run"], []).append(r)
    first = [r["run"] for r in results["worst_runs"]]
    first += [r for r, _ in Counter(v["run"] for v in results["violations"]).most_common()]
    order = list(dict.fromkeys([r for r in first if r in per_run] + sorted(per_run)))
    kept: list[dict] = []
    for run in order:
        if len(kept) + len(per_run[run]) > limit:
            continue
        kept += sorted(per_run[run], key=lambda r: r["seq"])
    return kept


def write(out: Path, name: str, schema: Any, rows: list[dict], csv: bool) -> None:
    """A table as Spark would have written it: tables/NAME/part-00000.parquet (and csv/)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.pandas.types import to_arrow_schema
    arrow = to_arrow_schema(schema)
    # JSON wrote a NaN or an infinity as text: back to a float (in the rows the page gets too)
    doubles = [f.name for f in schema.fields if f.dataType.typeName() == "double"]
    for r in rows if doubles else ():
        for c in doubles:
            if isinstance(r[c], str):
                r[c] = float(r[c])
    table = pa.Table.from_pylist([_arrow_row(r, schema) for r in rows], schema=arrow)
    where = _fresh(out / "tables" / name)
    pq.write_table(table, where / "part-00000.parquet")
    if csv:
        where = _fresh(out / "csv" / name)
        with open(where / "part-00000.csv", "w", newline="") as f:
            w = csv_module.writer(f)
            w.writerow([field.name for field in schema.fields])
            for r in rows:
                w.writerow([_csv_value(r[field.name]) for field in schema.fields])


def _fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def _arrow_row(row: dict, schema: Any) -> dict:
    """A JSON row as pyarrow takes it: maps as lists of (key, value)."""
    return {f.name: _arrow_value(row.get(f.name), f.dataType) for f in schema.fields}


def _arrow_value(value: Any, tp: Any) -> Any:
    from pyspark.sql import types as T
    if value is None:
        return None
    if isinstance(tp, T.MapType):
        return [(k, _arrow_value(v, tp.valueType)) for k, v in value.items()]
    if isinstance(tp, T.ArrayType):
        return [_arrow_value(v, tp.elementType) for v in value]
    if isinstance(tp, T.StructType):
        return _arrow_row(value, tp)
    return value


def _csv_value(value: Any) -> str:
    """As Spark's CSV writer writes the report's columns (arrays, maps and structs as JSON)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)
