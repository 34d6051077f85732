"""Report benchmark (issue 10): `kafka-emu report`'s Spark job against DuckDB on the same files.

    .venv/bin/python bench/bench_report.py [--quick [--remote sc://HOST:PORT]] [--repeat N]
                                           [--traces DIR] [EVENTS ...]  (default 1000000)

For each size: synthetic traces (bench/trace_gen.py, the real schema, written through the
writer's formatter; with --traces they are generated once into DIR/traces-EVENTS and reused)
-> the whole report job (kafka_emu.report.job.run: every table written as Parquet, the page) in
Spark on 2 cores (local[2]) and on 1 core (local[1]), each in a fresh process, Spark's session
start timed apart from the job -> the traces compacted to Parquet (one Spark write) and the job
again on the Parquet copy -> DuckDB on the same files (JSON Lines, then Parquet), 2 threads.
--quick: only Spark on 2 cores and DuckDB, on the JSON Lines. --repeat N: that pair (Spark on 2
cores, then DuckDB, on the JSON Lines) N times, each ratio and their median printed, the target
judged on the median. --remote: Spark's side of that pair on a Spark Connect server that is
already up (`kafka-emu report-server --reserve-memory`, on 2 cores like the local runs), as a
fleet would run reports; the first pair then also shows what the server's first report costs.

What DuckDB computes (every line read with an explicit schema, torn lines skipped as Spark drops
them): every table of the report, with the same columns and rows (runs, the client matrix, API
versions, error codes per client x API, rebalances per generation and their p50/p95/p99 per
client version, the eight violation kinds with their details, conformance), each written as
Parquet and fetched whole, then the figures the page counts over the whole tables. Not the page
itself (Python's work, the same whichever engine computed the tables). The two sides' tables
are compared row for row after each pair (Spark's percentiles are approximate, DuckDB's exact:
those three columns are left out), and tests/report/test_bench_duckdb.py compares them on the
test fixtures, where every violation kind occurs. Not a test: it prints and exits 0.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import trace_gen  # noqa: E402

from kafka_emu.report import auth, share, transactions, violations  # noqa: E402
from kafka_emu.report.load import CLIENT_ID_VERSION  # noqa: E402
from kafka_emu.report.spark import driver_memory  # noqa: E402
from kafka_emu.trace import schema  # noqa: E402

TARGET_RATIO = 3.0
PAIR = ("spark 2 cores, jsonl", "duckdb 2 threads, jsonl")  # what the target is about


# Spark's percentiles are approximate (percentile_approx at an accuracy of 10,000), DuckDB's
# exact (quantile_disc): at 10M events they differ by a few ms, so only their rows and the
# other columns are compared.
APPROXIMATE = {"rebalance_percentiles": ("p50_ms", "p95_ms", "p99_ms")}


def _comparable(value):
    """A Parquet value in a form that is equal when the content is: floats to 9 digits, and
    lists of structs or map entries sorted (neither side promises their order: collect_list,
    map entries); other lists keep their order, which is part of the result."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_comparable(v) for v in value]
        if items and isinstance(items[0], (dict, tuple)):
            items.sort(key=repr)
        return tuple(items) if isinstance(value, tuple) else items
    return value


def table_differences(spark_tables: Path, duck_tables: Path) -> list[str]:
    """How the report's tables (spark_tables/NAME/, as the job writes them) differ from
    DuckDB's (duck_tables/NAME.parquet): one line per table that differs, none when every
    table has the same columns and the same rows."""
    import pyarrow.parquet as pq
    problems = []
    for name in DUCK_TABLES:
        ours = pq.read_table(spark_tables / name)
        theirs = pq.read_table(duck_tables / f"{name}.parquet")
        if ours.column_names != theirs.column_names:
            problems.append(f"{name}: columns {ours.column_names} against {theirs.column_names}")
            continue
        kept = [c for c in ours.column_names if c not in APPROXIMATE.get(name, ())]

        def rows(table):
            return sorted(repr([_comparable(r[c]) for c in kept]) for r in table.to_pylist())

        a, b = rows(ours), rows(theirs)
        if a != b:
            problems.append(f"{name}: {len(a)} rows against {len(b)}, {len(set(a) - set(b))} "
                            f"only in Spark's, {len(set(b) - set(a))} only in DuckDB's")
    return problems


def _duck_type(tp) -> str:
    if isinstance(tp, schema.Scalar):
        return {"string": "VARCHAR", "long": "BIGINT", "double": "DOUBLE",
                "boolean": "BOOLEAN"}[tp.name]
    if isinstance(tp, schema.ArrayOf):
        return _duck_type(tp.element) + "[]"
    if isinstance(tp, schema.StructOf):
        return "STRUCT(" + ", ".join(f'"{n}" {_duck_type(t)}' for n, t in tp.fields) + ")"
    if isinstance(tp, schema.MapOf):
        return f"MAP(VARCHAR, {_duck_type(tp.value)})"
    raise TypeError(tp)


# The violations, each kind as the report finds it (kafka_emu/report/violations.py); a member's
# requests are those naming a group and a member id, as there
_MEMBER_REQUESTS = """
    SELECT * FROM requests
    WHERE group_id IS NOT NULL AND member_id IS NOT NULL AND member_id <> ''"""

# each query's rows have the violations table's columns
VIOLATION_COLUMNS = ", ".join(violations.COLUMNS)
DUCK_VIOLATIONS = {
    # stale_after_rejoin and after_fenced: one ordered pass over each member's requests
    "told_and_fenced": f"""
        WITH m AS (SELECT *, err IN (27, 22, 25)
                             AND api IN ('Heartbeat', 'OffsetCommit', 'SyncGroup') AS told
                   FROM ({_MEMBER_REQUESTS})),
        w AS (
          SELECT *,
            last(CASE WHEN told THEN seq END IGNORE NULLS) OVER p AS told_seq,
            last(CASE WHEN told THEN err END IGNORE NULLS) OVER p AS told_err,
            last(CASE WHEN api = 'JoinGroup' THEN seq END IGNORE NULLS) OVER p AS join_seq,
            last(CASE WHEN err = 82 THEN seq END IGNORE NULLS) OVER p AS fenced_seq
          FROM m
          WINDOW p AS (PARTITION BY run, group_id, member_id ORDER BY seq
                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING))
        SELECT 'stale_after_rejoin' AS kind, run, group_id, member_id, seq, at_ms, api,
               correlation_id, connection_id,
               'generation ' || generation_id || ' answered ' || err || ' after being told '
               || told_err || ' at seq ' || told_seq || ' without rejoining' AS detail
        FROM w WHERE api IN ('Heartbeat', 'OffsetCommit') AND err IN (22, 25)
          AND told_seq IS NOT NULL AND (join_seq IS NULL OR join_seq < told_seq)
        UNION ALL
        SELECT 'after_fenced', run, group_id, member_id, seq, at_ms, api, correlation_id,
               connection_id, api || ' after FENCED_INSTANCE_ID at seq ' || fenced_seq
               || ' (instance ' || coalesce(group_instance_id, '?') || ')'
        FROM w WHERE fenced_seq IS NOT NULL""",
    "heartbeat_too_fast": f"""
        WITH m AS ({_MEMBER_REQUESTS}),
        s AS (SELECT run, group_id, member_id, max(session_timeout_ms) AS session_ms
              FROM m WHERE api = 'JoinGroup' GROUP BY ALL),
        b AS (SELECT run, group_id, member_id, seq, at_ms, correlation_id, connection_id,
                     at_ms - lag(at_ms) OVER (PARTITION BY run, group_id, member_id
                                              ORDER BY seq) AS gap
              FROM m WHERE api = 'Heartbeat'),
        h AS (SELECT run, group_id, member_id, count(*) AS heartbeats,
                     quantile_disc(gap, 0.5) AS median_gap, min(seq) AS seq,
                     arg_min(at_ms, seq) AS at_ms, arg_min(correlation_id, seq) AS correlation_id,
                     arg_min(connection_id, seq) AS connection_id
              FROM b GROUP BY ALL)
        SELECT 'heartbeat_too_fast', run, group_id, member_id, seq, at_ms, 'Heartbeat',
               correlation_id, connection_id,
               heartbeats || ' heartbeats, median every ' || median_gap
               || ' ms for a session timeout of ' || session_ms || ' ms'
               || coalesce(' (configured every ' || configured_ms || ' ms)', '')
        FROM h JOIN s USING (run, group_id, member_id)
        LEFT JOIN (SELECT DISTINCT ON (run) run,
                          coalesce(try_cast(labels['heartbeat.interval.ms'] AS BIGINT),
                                   try_cast(labels['heartbeat_interval_ms'] AS BIGINT))
                          AS configured_ms
                   FROM events WHERE kind = 'run_start') c USING (run)
        WHERE heartbeats >= 10 AND median_gap * 50 < session_ms
          AND (configured_ms IS NULL OR median_gap * 2 < configured_ms)""",
    "no_rejoin_in_time": f"""
        WITH r AS (SELECT run, group_id, member_id, seq AS removed_seq, at_ms AS removed_at
                   FROM events WHERE kind = 'member_removed' AND reason = 'rebalance_timeout'),
        l AS (SELECT r.run, r.group_id, r.member_id, r.removed_at, max(q.seq) AS seq,
                     arg_max(q.at_ms, q.seq) AS at_ms, arg_max(q.api, q.seq) AS api,
                     arg_max(q.correlation_id, q.seq) AS correlation_id,
                     arg_max(q.connection_id, q.seq) AS connection_id
              FROM r JOIN ({_MEMBER_REQUESTS}) q USING (run, group_id, member_id)
              WHERE q.seq < r.removed_seq AND q.err = 27
              GROUP BY r.run, r.group_id, r.member_id, r.removed_seq, r.removed_at)
        SELECT 'no_rejoin_in_time', run, group_id, member_id, seq, at_ms, api, correlation_id,
               connection_id, 'told REBALANCE_IN_PROGRESS on ' || api || ', removed '
               || (removed_at - at_ms) || ' ms later for not rejoining within the rebalance '
               || 'timeout'
        FROM l""",
    "assignment_overlap": """
        WITH a AS (SELECT run, group_id, generation, seq, at_ms, unnest(assignments) AS a
                   FROM events WHERE kind = 'assignments_distributed'
                                 AND protocol_type = 'consumer'),
        t AS (SELECT run, group_id, generation, seq, at_ms, a.member_id AS member_id,
                     unnest(a.topics) AS tp FROM a),
        p AS (SELECT run, group_id, generation, seq, at_ms, member_id, tp.topic AS topic,
                     unnest(tp.partitions) AS p FROM t),
        o AS (SELECT run, group_id, generation, seq, at_ms, topic, p,
                     list_sort(list(DISTINCT member_id) FILTER (WHERE member_id IS NOT NULL))
                       AS owners
              FROM p GROUP BY ALL HAVING len(owners) > 1)
        SELECT 'assignment_overlap', run, group_id, owners[1], seq, at_ms, NULL, NULL, NULL,
               'generation ' || generation || ': ' || topic || '-' || p || ' assigned to '
               || array_to_string(owners, ', ')
        FROM o""",
    "assignment_gap": """
        WITH d AS (
          SELECT run, group_id, generation, seq, at_ms,
                 NULL::STRUCT(topic VARCHAR, count BIGINT)[] AS topic_partitions
          FROM events WHERE kind = 'assignments_distributed' AND protocol_type = 'consumer'
            AND len(list_filter(assignments, lambda a: a.topics IS NULL)) = 0
          UNION ALL
          SELECT run, NULL, NULL, seq, NULL, topic_partitions FROM events
          WHERE kind = 'topics_known'),
        c AS (SELECT *, last(topic_partitions IGNORE NULLS) OVER (PARTITION BY run ORDER BY seq
                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS counts FROM d),
        e AS (SELECT run, group_id, generation, seq, at_ms, unnest(counts) AS c FROM c
              WHERE group_id IS NOT NULL AND counts IS NOT NULL),
        x AS (SELECT run, group_id, generation, seq, at_ms, c.topic AS topic,
                     -- Spark's sequence(0, n - 1) counts down when n is 0
                     unnest(generate_series(0, c.count - 1,
                                            CASE WHEN c.count > 0 THEN 1 ELSE -1 END)) AS p
              FROM e),
        s AS (SELECT DISTINCT run, group_id, generation, unnest(metadata.topics) AS topic
              FROM events WHERE kind = 'member_subscribed'),
        a AS (SELECT run, group_id, generation, unnest(a.topics) AS tp
              FROM (SELECT run, group_id, generation, unnest(assignments) AS a FROM events
                    WHERE kind = 'assignments_distributed' AND protocol_type = 'consumer')),
        ap AS (SELECT run, group_id, generation, tp.topic AS topic, unnest(tp.partitions) AS p
               FROM a),
        gaps AS (SELECT x.* FROM x JOIN s USING (run, group_id, generation, topic)
                 ANTI JOIN ap USING (run, group_id, generation, topic, p))
        SELECT 'assignment_gap', run, group_id, NULL, seq, at_ms, NULL, NULL, NULL,
               'generation ' || generation || ': subscribed ' || topic || '-' || p
               || ' assigned to nobody'
        FROM gaps""",
    "double_fetch": """
        WITH m AS (
          SELECT run, group_id, generation, kind, at_ms AS start_at,
                 first(CASE WHEN kind = 'rebalance_triggered' THEN at_ms END IGNORE NULLS)
                   OVER (PARTITION BY run, group_id ORDER BY seq
                         ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS end_at
          FROM events WHERE kind IN ('assignments_distributed', 'rebalance_triggered')
                        AND group_id IS NOT NULL),
        g AS (SELECT run, group_id, generation, unnest(members) AS member_id FROM events
              WHERE kind = 'generation_changed'),
        cl AS (SELECT DISTINCT run, group_id, member_id, client_id FROM requests
               WHERE api = 'JoinGroup' AND member_id <> ''),
        mem AS (SELECT * FROM m JOIN g USING (run, group_id, generation)
                JOIN cl USING (run, group_id, member_id)
                WHERE kind = 'assignments_distributed'),
        cand AS (
          SELECT f.run, f.seq, f.at_ms, f.correlation_id, f.connection_id, f.partitions,
                 mem.group_id, mem.generation, mem.member_id,
                 count(*) OVER (PARTITION BY f.run, f.seq) AS n
          FROM requests f JOIN mem ON f.run = mem.run AND f.client_id = mem.client_id
          WHERE f.api = 'Fetch' AND len(f.partitions) > 0
            AND f.at_ms - f.latency_ms >= mem.start_at
            AND (mem.end_at IS NULL OR f.at_ms - f.latency_ms < mem.end_at)),
        o AS (SELECT run, group_id, generation, member_id, seq, at_ms, correlation_id,
                     connection_id, unnest(partitions) AS tp
              FROM cand WHERE n = 1),
        d AS (SELECT run, group_id, generation, tp.topic AS topic, tp.partition AS p,
                     min(seq) AS seq, arg_min(at_ms, seq) AS at_ms,
                     arg_min(member_id, seq) AS member_id,
                     arg_min(correlation_id, seq) AS correlation_id,
                     arg_min(connection_id, seq) AS connection_id,
                     list_sort(list(DISTINCT member_id)) AS fetchers
              FROM o GROUP BY ALL HAVING count(DISTINCT member_id) > 1)
        SELECT 'double_fetch', run, group_id, member_id, seq, at_ms, 'Fetch', correlation_id,
               connection_id, 'generation ' || generation || ': ' || topic || '-' || p
               || ' fetched by ' || array_to_string(fetchers, ', ')
        FROM d""",
    "offset_backwards": """
        WITH c AS (
          SELECT run, group_id, member_id, seq, at_ms, unnest(offsets, recursive := true)
          FROM events WHERE kind = 'offsets_committed'),
        l AS (SELECT *, lag("offset") OVER (PARTITION BY run, group_id, topic, "partition"
                                            ORDER BY seq) AS previous FROM c)
        SELECT 'offset_backwards', run, group_id, member_id, seq, at_ms, 'OffsetCommit', NULL,
               NULL, topic || '-' || "partition" || ' committed ' || "offset" || ' after '
               || previous
        FROM l WHERE "offset" < previous""",
}
DUCK_VIOLATIONS_TABLE = (
    f"SELECT {VIOLATION_COLUMNS} FROM ("
    + " UNION ALL ".join(f"({sql})" for sql in DUCK_VIOLATIONS.values())
    + ") ORDER BY kind, run, seq")


def _nearest(fn: str, kind: str, frame: str, **names: str) -> str:
    """Window columns: each column (a keyword) on the nearest row of ``kind`` in ``frame``
    (``last`` of a frame before the row, ``first`` of one after it), named by its value."""
    return ", ".join(f"{fn}(CASE WHEN kind = '{kind}' THEN {col} END IGNORE NULLS) "
                     f"OVER {frame} AS {name}" for col, name in names.items())


# The report's tables, each with the same columns, rows and order as the job's table of that
# name (kafka_emu/report/analyses.py, violations.py); tests/report/test_bench_duckdb.py checks
# them against the job's, table by table, on the test fixtures. In the job's order: a table may
# read one made before it.
DUCK_TABLES = {
    "runs": """
        WITH r AS (SELECT DISTINCT ON (run) run, at_ms AS started_ms, emu_version, labels
                   FROM events WHERE kind = 'run_start'),
        c AS (SELECT run, count(*) AS events, bool_or(kind = 'run_end') AS ended_cleanly
              FROM events GROUP BY run)
        SELECT r.*, c.events, c.ended_cleanly FROM r LEFT JOIN c USING (run)
        ORDER BY started_ms""",
    "client_matrix": """
        WITH f AS (SELECT DISTINCT run, connection_id, correlation_id FROM events
                   WHERE kind = 'fault_fired'),
        r AS (SELECT q.*, f.run IS NOT NULL AS faulted
              FROM requests q LEFT JOIN f USING (run, connection_id, correlation_id))
        SELECT client_name, client_version, count(DISTINCT run) AS runs,
               count(DISTINCT (run, connection_id)) FILTER (WHERE connection_id IS NOT NULL)
                 AS connections,
               count(*) AS requests, count(*) FILTER (WHERE err <> 0) AS error_responses,
               (count(*) FILTER (WHERE throttle_time_ms > 0))::DOUBLE / count(*)
                 AS throttled_share,
               (count(*) FILTER (WHERE faulted))::DOUBLE / count(*) AS faulted_share
        FROM r GROUP BY ALL ORDER BY client_name, client_version""",
    "api_versions": """
        WITH b AS (SELECT v.key AS api, max(v.value) AS broker_max
                   FROM (SELECT unnest(map_entries(broker_api_versions)) AS v FROM events
                         WHERE kind = 'run_start')
                   GROUP BY ALL)
        SELECT client_name, client_version, api, version, count(*) AS requests, b.broker_max
        FROM requests LEFT JOIN b USING (api) GROUP BY ALL
        ORDER BY client_name, client_version, api, version""",
    "client_errors": """
        SELECT client_name, client_version, api, err AS error_code, count(*) AS responses
        FROM requests WHERE err <> 0 GROUP BY ALL
        ORDER BY client_name, client_version, api, error_code""",
    "rebalances": f"""
        WITH r AS (
          SELECT run, group_id, seq, at_ms, kind, reason, generation, members, member_id,
                 -- which generation's rebalance a member event belongs to: the next one
                 count(*) FILTER (WHERE kind = 'generation_changed') OVER (
                   PARTITION BY run, group_id ORDER BY seq
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS ordinal
          FROM events WHERE group_id IS NOT NULL AND (kind IN ('rebalance_triggered',
            'generation_changed', 'member_removed', 'member_added')
            OR (kind = 'state_changed' AND new = 'Stable'))),
        t AS (SELECT *, CASE WHEN kind = 'generation_changed' THEN ordinal ELSE ordinal + 1 END
                        AS target FROM r),
        w AS (
          SELECT *, {_nearest("last", "generation_changed", "p", seq="prev_gen_seq",
                              members="prev_members")},
            {_nearest("last", "rebalance_triggered", "p", seq="trigger_seq", at_ms="trigger_at",
                      reason="trigger_reason")},
            {_nearest("first", "generation_changed", "f", seq="next_gen_seq")},
            {_nearest("first", "state_changed", "f", seq="stable_seq", at_ms="stable_at")}
          FROM t WINDOW
            p AS (PARTITION BY run, group_id ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING
                  AND 1 PRECEDING),
            f AS (PARTITION BY run, group_id ORDER BY seq ROWS BETWEEN 1 FOLLOWING
                  AND UNBOUNDED FOLLOWING)),
        g AS (
          SELECT run, group_id, generation, target, members,
                 coalesce(prev_members, []::VARCHAR[]) AS before,
                 CASE WHEN trigger_seq > coalesce(prev_gen_seq, -1) THEN trigger_reason END
                   AS reason,
                 CASE WHEN trigger_seq > coalesce(prev_gen_seq, -1) THEN trigger_at END
                   AS started_ms,
                 CASE WHEN stable_seq IS NOT NULL
                       AND (next_gen_seq IS NULL OR stable_seq < next_gen_seq)
                      THEN stable_at END AS stable_ms
          FROM w WHERE kind = 'generation_changed'),
        rm AS (SELECT run, group_id, target,
                      list({{'member_id': member_id, 'reason': reason}} ORDER BY seq) AS removed
               FROM t WHERE kind = 'member_removed' GROUP BY ALL),
        gc AS (SELECT run, group_id, arg_min(client_name, seq) AS client_name,
                      arg_min(client_version, seq) AS client_version
               FROM requests WHERE api = 'JoinGroup' AND group_id IS NOT NULL GROUP BY ALL)
        SELECT run, group_id, generation, reason, started_ms, stable_ms,
               stable_ms - started_ms AS duration_ms, len(before) AS members_before,
               len(members) AS members_after,
               list_filter(members, lambda m: NOT list_contains(before, m)) AS joined,
               list_filter(before, lambda m: NOT list_contains(members, m)) AS "left",
               removed, client_name, client_version
        FROM g LEFT JOIN rm USING (run, group_id, target) LEFT JOIN gc USING (run, group_id)
        ORDER BY run, group_id, generation""",
    "rebalance_percentiles": """
        SELECT client_name, client_version, rebalances, q[1] AS p50_ms, q[2] AS p95_ms,
               q[3] AS p99_ms, max_ms
        FROM (SELECT client_name, client_version, count(*) AS rebalances,
                     quantile_disc(duration_ms, [0.5, 0.95, 0.99]) AS q,
                     max(duration_ms) AS max_ms
              FROM rebalances WHERE duration_ms IS NOT NULL GROUP BY ALL)
        ORDER BY client_name, client_version""",
    "violations": DUCK_VIOLATIONS_TABLE,
    "conformance": """
        SELECT scenario, client, client_version, count(*) AS runs,
               count(*) FILTER (WHERE verdict = 'pass') AS passed,
               count(*) FILTER (WHERE verdict <> 'pass') AS failed,
               max(reason) FILTER (WHERE verdict <> 'pass') AS a_reason,
               CASE WHEN failed > 0 THEN 'fail' ELSE 'pass' END AS verdict
        FROM events WHERE kind = 'scenario_verdict' GROUP BY scenario, client, client_version
        ORDER BY scenario, client, client_version""",
}

# The transaction, share-group and authentication tables: each module's DuckDB SQL (tested equal
# to its DataFrames on a real trace) over the rows it reads, built here from ``events``.
_LABELS = "(SELECT run, labels FROM events WHERE kind = 'run_start')"
_ENDED = f"""SELECT e.run, coalesce(r.labels['client'], '') AS client, transactional_id,
                    committed, cause, duration_ms
             FROM events e LEFT JOIN {_LABELS} r USING (run)
             WHERE kind = '{transactions.KIND}'"""
_CHANGED = f"""SELECT e.run, at_ms, e.group_id, topic, "partition", action, e.member_id,
                      first_offset, last_offset, delivery_count, ack_type,
                      last_offset - first_offset + 1 AS records,
                      coalesce(r.labels['client'], '') AS client,
                      coalesce(i.client_id, '') AS client_id
               FROM events e LEFT JOIN {_LABELS} r USING (run)
               LEFT JOIN (SELECT run, group_id, member_id, max(client_id) AS client_id
                          FROM events WHERE kind = 'request_handled' AND member_id IS NOT NULL
                                AND client_id IS NOT NULL GROUP BY ALL) i
                    ON i.run = e.run AND i.group_id = e.group_id AND i.member_id = e.member_id
               WHERE kind = '{share.KIND}'"""
_FAILED = f"""SELECT run, listener, mechanism, "user", error_code, reason, reauthentication, peer
              FROM events WHERE kind = '{auth.FAILED}'"""
_DENIED = f"""SELECT run, principal, api, operation, resource_type, resource_name, error_code,
                     client_id FROM events WHERE kind = '{auth.DENIED}'"""


def _with(views: str, sql: str) -> str:
    """``sql`` with ``views`` (name AS (...), ...) in front (joined to its own WITH, if any)."""
    body = sql.lstrip()
    if body[:4].upper() == "WITH":
        return f"WITH {views}, {body[4:]}"
    return f"WITH {views} {body}"


DUCK_TABLES.update({name: _with(f"ended AS ({_ENDED})", sql)
                    for name, sql in transactions.DUCKDB_SQL.items()})
DUCK_TABLES.update({name: _with(f"changed AS ({_CHANGED})", sql)
                    for name, sql in share.DUCKDB_SQL.items()})
DUCK_TABLES.update({name: _with(f"failed AS ({_FAILED}), denied AS ({_DENIED})", sql)
                    for name, sql in auth.DUCKDB_SQL.items()})


# What the job counts over its whole tables for the page and the summary (_whole_table_figures)
DUCK_FIGURES = (
    "SELECT sum(events) FROM runs",
    "SELECT kind, count(*) FROM violations GROUP BY kind",
    """CREATE TEMP TABLE worst AS
       WITH l AS (SELECT run, max(coalesce(duration_ms, 0)) AS longest FROM rebalances
                  GROUP BY run),
       v AS (SELECT run, count(*) AS violations FROM violations GROUP BY run)
       SELECT run FROM l LEFT JOIN v USING (run)
       ORDER BY longest DESC, coalesce(violations, 0) DESC, run LIMIT 3""",
    "SELECT * FROM rebalances WHERE run IN (SELECT run FROM worst)",
)

# What DuckDB reads: the columns its queries use (as the report parses only what it reads).
DUCK_COLUMNS = ("kind", "run", "seq", "at_ms", "connection_id", "reason", "api", "version",
                "client_id", "client_software_name", "client_software_version", "group_id",
                "member_id", "group_instance_id", "generation_id", "error_code",
                "partition_errors", "correlation_id", "latency_ms", "partitions",
                "topic_partitions", "metadata", "throttle_time_ms", "session_timeout_ms", "new",
                "generation", "members", "offsets", "protocol_type", "assignments",
                "emu_version", "labels", "broker_api_versions", "scenario", "client",
                "client_version", "verdict",
                # transactions, share groups, logins and denials (their modules' tables)
                "transactional_id", "committed", "cause", "duration_ms", "topic", "partition",
                "action", "first_offset", "last_offset", "delivery_count", "ack_type", "listener",
                "mechanism", "user", "reauthentication", "peer", "principal", "operation",
                "resource_type", "resource_name")


def duck_source(path: str, input_format: str) -> str:
    if input_format == "parquet":
        return f"read_parquet('{path}/*.parquet')"
    types = dict(schema.columns())
    columns = "{" + ", ".join(f"'{n}': '{_duck_type(types[n])}'" for n in DUCK_COLUMNS) + "}"
    return (f"read_json('{path}/**/*.jsonl', format = 'newline_delimited', "
            f"columns = {columns}, ignore_errors = true)")


def duck_tables(con, source: str) -> None:
    """The files parsed once into the table every query reads, events; requests, with their
    client and error as the report's load() computes them, a view over it. (Kept as a second
    table, DuckDB took about 2 s longer at 10M: medians of eight and nine interleaved runs,
    33.6 s against 31.5.)"""
    quoted = ", ".join(f'"{c}"' for c in DUCK_COLUMNS)  # ("user" is a keyword)
    con.execute(f"CREATE TEMP TABLE events AS SELECT {quoted} FROM {source} "
                "WHERE kind IS NOT NULL AND run IS NOT NULL")
    con.execute("""
        CREATE TEMP VIEW requests AS
        SELECT e.* EXCLUDE (client_version),
               coalesce(client_software_name, r.labels['client'], client_id, 'unknown')
                    AS client_name,
               coalesce(client_software_version, nullif(r.labels['client_version'], ''),
                        nullif(regexp_extract(client_id, '""" + CLIENT_ID_VERSION + """', 1), ''),
                        'unknown') AS client_version,
               CASE WHEN coalesce(error_code, 0) <> 0 THEN error_code
                    WHEN len(partition_errors) > 0 THEN partition_errors[1].error_code
                    ELSE 0 END AS err
        FROM events e JOIN (SELECT run, labels FROM events WHERE kind = 'run_start') r
             USING (run)
        WHERE kind = 'request_handled'""")


def duck_job(source: str, out: Path, threads: int = 2) -> None:
    """The files parsed once into a table (as Spark caches its parse), then every table of the
    report computed into a table of its own, written as out/NAME.parquet and fetched whole,
    then the figures the page counts over them."""
    import duckdb
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    duck_tables(con, source)
    out.mkdir(parents=True, exist_ok=True)
    for name, sql in DUCK_TABLES.items():
        con.execute(f"CREATE TEMP TABLE {name} AS {sql}")
        con.execute(f"COPY {name} TO '{out / name}.parquet' (FORMAT parquet)")
        con.execute(f"SELECT * FROM {name}").fetchall()
    for sql in DUCK_FIGURES:
        con.execute(sql).fetchall()
    con.close()


def _load() -> str:
    """The machine's 1-minute load average: on a shared machine it says how much the
    wall-clock figures can be trusted (both sides of a ratio run under it)."""
    return f"{os.getloadavg()[0]:.1f}"


def _warm(root: Path) -> None:
    """Read every file once, so that each side starts with the files in the page cache: the
    machine pages out files left unread for a while, and the side timed first would
    otherwise also time the disk."""
    for f in root.rglob("*"):
        if f.is_file():
            with open(f, "rb") as stream:
                while stream.read(1 << 24):
                    pass


def _timed(fn, *args, **kw):
    start = time.perf_counter()
    result = fn(*args, **kw)
    return time.perf_counter() - start, result


def spark_once(path: str, cores: int, input_format: str, out: str,
               remote: str | None = None) -> None:
    """One Spark configuration in this (fresh) process, its tables written under out/tables:
    prints the session start's and the job's seconds. With ``remote``, the job runs on that
    Spark Connect server (``cores`` is then the server's business)."""
    import json

    from kafka_emu.report import job
    from kafka_emu.report.spark import session
    logs = Path(tempfile.mkdtemp())
    # the heap reserved whole from the start, as the figures in bench/README.md were measured
    # (`kafka-emu report` grows it as needed unless --reserve-memory)
    start_s, spark = _timed(session, master=f"local[{cores}]", remote=remote, log_dir=logs,
                            shuffle_partitions=cores * 2, reserve=True)
    # the report job as `kafka-emu report` runs it
    seconds, _ = _timed(job.run, spark, [path], Path(out), input_format=input_format)
    spark.stop()
    print(json.dumps({"start": start_s, "seconds": seconds}))


def compact(path: str, out: str) -> None:
    from kafka_emu.report.load import read_json_lines
    from kafka_emu.report.spark import session
    spark = session(master="local[2]", log_dir=Path(tempfile.mkdtemp()), shuffle_partitions=4)
    seconds, _ = _timed(lambda: read_json_lines(spark, [path])
                        .write.mode("overwrite").parquet(out))
    spark.stop()
    print(f'{{"seconds": {seconds}}}')


def _child(*args: str) -> dict:
    import json
    import subprocess
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                         env=os.environ | {"PYTHONWARNINGS": "ignore"})
    if out.returncode != 0:
        # what failed, in the child's own words (the last lines of its error output), rather
        # than a CalledProcessError that says only the exit status
        tail = (out.stderr or out.stdout).strip().splitlines()[-30:]
        print(f"bench_report: {args[0]} failed (exit {out.returncode}):", *tail,
              sep="\n  ", file=sys.stderr, flush=True)
        raise SystemExit(1)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _usage(problem: str) -> None:
    print(f"bench_report: {problem}", file=sys.stderr)
    raise SystemExit(2)


def _option(argv: list[str], name: str) -> tuple[str | None, list[str]]:
    """``name VALUE`` taken out of argv: (VALUE or None, the rest)."""
    if name not in argv:
        return None, argv
    i = argv.index(name)
    if i + 1 >= len(argv):
        _usage(f"{name} needs a value")
    return argv[i + 1], argv[:i] + argv[i + 2:]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--spark-once"]:
        spark_once(argv[1], int(argv[2]), argv[3], argv[4], *argv[5:6])
        return 0
    if argv[:1] == ["--compact"]:
        compact(argv[1], argv[2])
        return 0
    quick = "--quick" in argv
    argv = [a for a in argv if a != "--quick"]
    traces, argv = _option(argv, "--traces")
    keep = Path(traces) if traces else None
    repeat_text, argv = _option(argv, "--repeat")
    if repeat_text is not None and not (repeat_text.isdigit() and int(repeat_text) >= 1):
        _usage(f"--repeat needs a whole number >= 1, got {repeat_text!r}")
    repeat = int(repeat_text or 1)
    remote, argv = _option(argv, "--remote")
    if remote and not quick:
        _usage("--remote goes with --quick (the 1-core and Parquet runs are local)")
    sizes = [int(a) for a in argv] or [1_000_000]
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            root = (keep or Path(tmp)) / f"traces-{size}"
            if keep is None or not root.exists():
                gen_s, written = _timed(trace_gen.generate, root, size)
                print(f"(generated in {gen_s:.1f} s)")
            files = list(root.rglob("*.jsonl"))
            mb = sum(f.stat().st_size for f in files) / 1e6
            print(f"== {size} events in {len(files)} runs, {mb:.0f} MB of JSON Lines "
                  f"(Spark heap {driver_memory()}, load average {_load()})", flush=True)
            parquet = Path(tmp) / f"parquet-{size}"
            times, outs = {}, {}

            def spark(name: str, source: str, cores: str, input_format: str) -> None:
                _warm(Path(source))
                outs[name] = Path(tempfile.mkdtemp(dir=tmp))
                result = _child("--spark-once", source, cores, input_format, str(outs[name]),
                                *([remote] if remote and name == PAIR[0] else []))
                times[name] = result["seconds"]
                print(f"  {name:<28} {result['seconds']:8.1f} s  (+ {result['start']:.1f} s "
                      f"session start; load average after {_load()})", flush=True)

            def duck(name: str, source: Path, input_format: str) -> None:
                _warm(source)
                outs[name] = Path(tempfile.mkdtemp(dir=tmp))
                times[name], _ = _timed(duck_job, duck_source(str(source), input_format),
                                        outs[name])
                print(f"  {name:<28} {times[name]:8.1f} s  (load average after {_load()})",
                      flush=True)

            # The pair the target is about, side by side; with --repeat, several pairs and
            # their median: on a shared machine one pair's ratio moves by a tenth either way.
            ratios = []
            for attempt in range(1, repeat + 1):
                if repeat > 1:
                    print(f"  pair {attempt} of {repeat}:")
                spark(PAIR[0], str(root), "2", "json")
                duck(PAIR[1], root, "json")
                ratios.append(times[PAIR[0]] / times[PAIR[1]])
                if repeat > 1:
                    print(f"  spark / duckdb, jsonl:    {ratios[-1]:5.2f}x", flush=True)
                pair_differ = table_differences(outs[PAIR[0]] / "tables", outs[PAIR[1]])
                if pair_differ:
                    break  # (said below) a pair that disagrees is not worth timing again
            ratio = statistics.median(ratios)
            verdict = ("ok" if ratio <= TARGET_RATIO else "target missed") if size >= 10**7 \
                else "(the target applies at 10M)"
            spread = (f" (median of {len(ratios)} pairs, {min(ratios):.2f}x to {max(ratios):.2f}x)"
                      if len(ratios) > 1 else "")
            print(f"  spark / duckdb, jsonl:    {ratio:5.2f}x {verdict}{spread}")
            spark_names = [PAIR[0]]
            if not quick:
                spark("spark 1 core, jsonl", str(root), "1", "json")
                times["compaction to parquet"] = _child("--compact", str(root),
                                                        str(parquet))["seconds"]
                print(f"  {'compaction to parquet':<28} {times['compaction to parquet']:8.1f} s")
                spark("spark 2 cores, parquet", str(parquet), "2", "parquet")
                duck("duckdb 2 threads, parquet", parquet, "parquet")
                pratio = times["spark 2 cores, parquet"] / times["duckdb 2 threads, parquet"]
                cores_ratio = times["spark 1 core, jsonl"] / times["spark 2 cores, jsonl"]
                print(f"  spark / duckdb, parquet:  {pratio:5.2f}x")
                print(f"  spark 1 core / 2 cores:   {cores_ratio:5.2f}x")
                spark_names += ["spark 1 core, jsonl", "spark 2 cores, parquet"]
            for spark_name in spark_names:
                differ = (pair_differ if spark_name == PAIR[0] else  # (compared above)
                          table_differences(outs[spark_name] / "tables", outs[PAIR[1]]))
                print(f"  {spark_name}: every table the same as DuckDB's" if not differ
                      else f"  {spark_name}: tables differ from DuckDB's: " + "; ".join(differ))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    raise SystemExit(main(sys.argv[1:]))
