"""Report benchmark (issue 10): the PySpark job against the same computation in DuckDB.

    .venv/bin/python bench/bench_report.py [EVENTS ...]     (default 1000000)

For each size: synthetic traces (bench/trace_gen.py, the real schema, written through the
writer's formatter) -> the report's analyses in Spark on 2 cores (local[2]) and on 1 core
(local[1]), each in a fresh process -> the traces compacted to Parquet (one Spark write) and
Spark again on the Parquet copy -> the same analyses as SQL in DuckDB on the same files (JSON
Lines, then Parquet). Printed: seconds per step and the ratios Spark / DuckDB (target at 10M
events: <= 3x) and 1 core / 2 cores.

The computation compared (both sides read every line with an explicit schema and return every
row): the client matrix, API versions, error codes per client x API, rebalances per
generation with p50/p95/p99 per client version, and three violation kinds (stale commits after
being told to rejoin, committed offsets moving backwards, heartbeats far too frequent). Spark's
session start is timed apart (it is paid once per report, not per table). Not a test: it prints
and exits 0.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import trace_gen  # noqa: E402

from kafka_emu.report import analyses, violations  # noqa: E402
from kafka_emu.report.load import load  # noqa: E402
from kafka_emu.trace import schema  # noqa: E402

TARGET_RATIO = 3.0


def spark_job(spark, paths: list[str], input_format: str = "json") -> dict[str, int]:
    t = load(spark, paths, input_format=input_format)
    reb = analyses.rebalances(t)
    out = {
        "client_matrix": analyses.client_matrix(t),
        "api_versions": analyses.api_versions(t),
        "client_errors": analyses.client_errors(t),
        "rebalances": reb,
        "rebalance_percentiles": analyses.rebalance_percentiles(reb),
        "stale_after_rejoin": violations.stale_after_rejoin(t),
        "offset_backwards": violations.offset_backwards(t),
        "heartbeat_too_fast": violations.heartbeat_too_fast(t),
    }
    counts = {name: len(df.collect()) for name, df in out.items()}
    t.release()
    return counts


def _duck_type(tp) -> str:
    if isinstance(tp, schema.Scalar):
        return {"string": "VARCHAR", "long": "BIGINT", "double": "DOUBLE",
                "boolean": "BOOLEAN"}[tp.name]
    if isinstance(tp, schema.ArrayOf):
        return _duck_type(tp.element) + "[]"
    if isinstance(tp, schema.StructOf):
        return "STRUCT(" + ", ".join(f'"{n}" {_duck_type(t)}' for n, t in tp.fields) + ")"
    if isinstance(tp, schema.MapOf):
        return "JSON"
    raise TypeError(tp)


DUCK_SQL = {
    "client_matrix": """
        SELECT client_name, client_version, count(DISTINCT run) runs,
               count(DISTINCT (run, connection_id)) connections, count(*) requests,
               sum(CASE WHEN err <> 0 THEN 1 ELSE 0 END) error_responses,
               avg(CASE WHEN throttle_time_ms > 0 THEN 1.0 ELSE 0.0 END) throttled_share
        FROM requests GROUP BY ALL ORDER BY ALL""",
    "api_versions": """
        SELECT client_name, client_version, api, version, count(*) requests
        FROM requests GROUP BY ALL ORDER BY ALL""",
    "client_errors": """
        SELECT client_name, client_version, api, err error_code, count(*) responses
        FROM requests WHERE err <> 0 GROUP BY ALL ORDER BY ALL""",
    "rebalances": """
        WITH r AS (
          SELECT run, group_id, seq, at_ms, kind, reason, generation, members
          FROM events WHERE group_id IS NOT NULL AND (kind IN ('rebalance_triggered',
            'generation_changed') OR (kind = 'state_changed' AND new = 'Stable'))),
        w AS (
          SELECT *,
            last(CASE WHEN kind = 'rebalance_triggered' THEN at_ms END IGNORE NULLS) OVER p
              AS trigger_at,
            last(CASE WHEN kind = 'generation_changed' THEN members END IGNORE NULLS) OVER p
              AS prev_members,
            first(CASE WHEN kind = 'state_changed' THEN at_ms END IGNORE NULLS) OVER f
              AS stable_at
          FROM r WINDOW
            p AS (PARTITION BY run, group_id ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING
                  AND 1 PRECEDING),
            f AS (PARTITION BY run, group_id ORDER BY seq ROWS BETWEEN 1 FOLLOWING
                  AND UNBOUNDED FOLLOWING))
        SELECT run, group_id, generation, stable_at - trigger_at AS duration_ms,
               len(coalesce(prev_members, [])) members_before, len(members) members_after
        FROM w WHERE kind = 'generation_changed' ORDER BY ALL""",
    "rebalance_percentiles": """
        SELECT g.client_name, g.client_version, count(*) rebalances,
               quantile_cont(duration_ms, [0.5, 0.95, 0.99]) q
        FROM rebalances r JOIN (SELECT run, group_id, arg_min(client_name, seq) client_name,
                                       arg_min(client_version, seq) client_version
                                FROM requests WHERE api = 'JoinGroup' GROUP BY ALL) g
             USING (run, group_id)
        WHERE duration_ms IS NOT NULL GROUP BY ALL ORDER BY ALL""",
    "stale_after_rejoin": """
        WITH m AS (
          SELECT *,
            last(CASE WHEN err IN (27, 22, 25) AND api IN ('Heartbeat', 'OffsetCommit',
                 'SyncGroup') THEN seq END IGNORE NULLS) OVER p AS told_seq,
            last(CASE WHEN api = 'JoinGroup' THEN seq END IGNORE NULLS) OVER p AS join_seq
          FROM requests WHERE group_id IS NOT NULL AND member_id <> ''
          WINDOW p AS (PARTITION BY run, group_id, member_id ORDER BY seq
                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING))
        SELECT run, group_id, member_id, seq FROM m
        WHERE api IN ('Heartbeat', 'OffsetCommit') AND err IN (22, 25)
          AND told_seq IS NOT NULL AND (join_seq IS NULL OR join_seq < told_seq)""",
    "offset_backwards": """
        WITH c AS (
          SELECT run, group_id, seq, unnest(offsets, recursive := true)
          FROM events WHERE kind = 'offsets_committed'),
        l AS (SELECT *, lag("offset") OVER (PARTITION BY run, group_id, topic, "partition"
                                            ORDER BY seq) previous FROM c)
        SELECT * FROM l WHERE "offset" < previous""",
    "heartbeat_too_fast": """
        WITH s AS (SELECT run, group_id, member_id, max(session_timeout_ms) session_timeout_ms
                   FROM requests WHERE api = 'JoinGroup' GROUP BY ALL),
        b AS (SELECT run, group_id, member_id,
                     at_ms - lag(at_ms) OVER (PARTITION BY run, group_id, member_id
                                              ORDER BY seq) gap
              FROM requests WHERE api = 'Heartbeat' AND member_id <> ''),
        m AS (SELECT run, group_id, member_id, count(*) heartbeats,
                     quantile_disc(gap, 0.5) median_gap FROM b GROUP BY ALL)
        SELECT * FROM m JOIN s USING (run, group_id, member_id)
        WHERE heartbeats >= 10 AND median_gap * 50 < session_timeout_ms""",
}


def duck_job(source: str, threads: int = 2) -> dict[str, int]:
    import duckdb
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.execute(f"CREATE VIEW events AS SELECT * FROM {source}")
    con.execute("""
        CREATE TEMP TABLE requests AS
        SELECT e.* EXCLUDE (client_version),
               coalesce(client_software_name, r.labels->>'client', client_id, 'unknown')
                    AS client_name,
               coalesce(client_software_version, r.labels->>'client_version', 'unknown')
                    AS client_version,
               CASE WHEN coalesce(error_code, 0) <> 0 THEN error_code
                    WHEN len(partition_errors) > 0 THEN partition_errors[1].error_code
                    ELSE 0 END AS err
        FROM events e JOIN (SELECT run, labels FROM events WHERE kind = 'run_start') r
             USING (run)
        WHERE kind = 'request_handled'""")
    counts = {}
    for name, sql in DUCK_SQL.items():
        rows = con.execute(sql).fetchall()
        counts[name] = len(rows)
        if name == "rebalances":
            con.execute(f"CREATE TEMP TABLE rebalances AS {sql}")
    con.close()
    return counts


def _timed(fn, *args, **kw):
    start = time.perf_counter()
    result = fn(*args, **kw)
    return time.perf_counter() - start, result


def spark_once(path: str, cores: int, input_format: str) -> None:
    """One Spark configuration in this (fresh) process: prints the job's seconds and counts."""
    import json
    from kafka_emu.report.spark import session
    logs = Path(tempfile.mkdtemp())
    spark = session(master=f"local[{cores}]", log_dir=logs, shuffle_partitions=cores * 2)
    seconds, counts = _timed(spark_job, spark, [path], input_format)
    spark.stop()
    print(json.dumps({"seconds": seconds, "counts": counts}))


def compact(path: str, out: str) -> None:
    from kafka_emu.report.spark import session, struct_type
    spark = session(master="local[2]", log_dir=Path(tempfile.mkdtemp()), shuffle_partitions=4)
    seconds, _ = _timed(lambda: spark.read.schema(struct_type())
                        .option("recursiveFileLookup", "true").json(path)
                        .write.mode("overwrite").parquet(out))
    spark.stop()
    print(f'{{"seconds": {seconds}}}')


def _child(*args: str) -> dict:
    import json
    import subprocess
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                         check=True, env=os.environ | {"PYTHONWARNINGS": "ignore"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    if argv[:1] == ["--spark-once"]:
        spark_once(argv[1], int(argv[2]), argv[3])
        return 0
    if argv[:1] == ["--compact"]:
        compact(argv[1], argv[2])
        return 0
    sizes = [int(a) for a in argv] or [1_000_000]
    columns = "{" + ", ".join(f"'{n}': '{_duck_type(t)}'" for n, t in schema.columns()) + "}"
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            root = Path(tmp) / f"traces-{size}"
            gen_s, written = _timed(trace_gen.generate, root, size)
            mb = sum(f.stat().st_size for f in root.rglob("*.jsonl")) / 1e6
            print(f"== {written} events in {len(list(root.rglob('*.jsonl')))} runs, "
                  f"{mb:.0f} MB of JSON Lines (generated in {gen_s:.1f} s)", flush=True)
            parquet = Path(tmp) / f"parquet-{size}"
            json_src = (f"read_json('{root}/**/*.jsonl', format = 'newline_delimited', "
                        f"columns = {columns})")
            times, counts = {}, {}
            for name, args in (("spark 2 cores, jsonl", (str(root), "2", "json")),
                               ("spark 1 core, jsonl", (str(root), "1", "json"))):
                result = _child("--spark-once", *args)
                times[name], counts[name] = result["seconds"], result["counts"]
                print(f"  {name:<28} {times[name]:8.1f} s", flush=True)
            times["compaction to parquet"] = _child("--compact", str(root), str(parquet))["seconds"]
            print(f"  {'compaction to parquet':<28} {times['compaction to parquet']:8.1f} s")
            result = _child("--spark-once", str(parquet), "2", "parquet")
            times["spark 2 cores, parquet"] = result["seconds"]
            print(f"  {'spark 2 cores, parquet':<28} {result['seconds']:8.1f} s", flush=True)
            for name, src in (("duckdb 2 threads, jsonl", json_src),
                              ("duckdb 2 threads, parquet", f"read_parquet('{parquet}/*.parquet')")):
                times[name], counts[name] = _timed(duck_job, src)
                print(f"  {name:<28} {times[name]:8.1f} s", flush=True)
            ratio = times["spark 2 cores, jsonl"] / times["duckdb 2 threads, jsonl"]
            pratio = times["spark 2 cores, parquet"] / times["duckdb 2 threads, parquet"]
            cores_ratio = times["spark 1 core, jsonl"] / times["spark 2 cores, jsonl"]
            verdict = ("ok" if ratio <= TARGET_RATIO else "target missed") if size >= 10**7 \
                else "(the target applies at 10M)"
            print(f"  spark / duckdb, jsonl:    {ratio:5.2f}x {verdict}")
            print(f"  spark / duckdb, parquet:  {pratio:5.2f}x")
            print(f"  spark 1 core / 2 cores:   {cores_ratio:5.2f}x")
            differ = {k: (v, counts["duckdb 2 threads, jsonl"][k])
                      for k, v in counts["spark 2 cores, jsonl"].items()
                      if v != counts["duckdb 2 threads, jsonl"][k]}
            print("  row counts agree" if not differ else f"  row counts differ: {differ}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    raise SystemExit(main(sys.argv[1:]))
