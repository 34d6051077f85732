"""The report job: read traces, compute every table, write Parquet (and CSV), report.html and a
one-screen summary.

Two ways, the same tables. Small traces (up to onepass.ONE_PASS_BYTES, most reports: the run
that just failed) are read into one partition and every table is computed in one pass,
collected whole and written by this process (onepass.py). Large traces are read in the
background into a cached copy while the tables are planned, and each table is computed by
Spark and written once; only small things come back to the driver for the page and the
summary: a table of at most MAX_COLLECT rows whole, a longer one as a uniform
sample of about that many rows (the page says so), and the figures that must not come from a
sample -- row counts, events, violations per kind, the worst runs and all their rebalances --
computed by Spark over the whole tables.
Progress goes to stderr: each stage as it starts ([2/4] ...) and its time as it ends, so a
long job shows where it is; and so do the
lines the traces lost: one line per file with lines dropped, how many and why (load.py).
"""

from __future__ import annotations

import contextlib
import sys
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable, TextIO

from . import analyses, auth, jvm_lookups, onepass, share, transactions, violations
from .absent import absent_kinds
from .load import Traces, gathered, load
from .spark import server_gone

MAX_COLLECT = 20000
WORST_RUNS = 3


def _csv_ready(df: Any) -> Any:
    """CSV has no arrays, maps or structs: such columns are written as JSON text."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    cols = []
    for field in df.schema.fields:
        if isinstance(field.dataType, (T.ArrayType, T.MapType, T.StructType)):
            cols.append(F.to_json(F.col(field.name)).alias(field.name))
        else:
            cols.append(F.col(field.name))
    return df.select(*cols)


def tables(t: Traces, counts: Any) -> dict[str, Any]:
    """``counts``: ``analyses.request_counts(t)``, which four tables read (cache it)."""
    built: dict[str, Any] = {}
    for group in table_groups(t, counts):
        built.update(group())
    return {name: built[name] for name in TABLES}


# The tables built from one event kind's rows alone, by that kind, with their schemas: empty
# when the traces hold none of it, so the one-pass path writes them from the schema instead
# of building them (absent.py)
ONE_KIND_TABLES: dict[str, dict[str, str]] = {
    transactions.KIND: transactions.SCHEMAS, share.KIND: share.SCHEMAS,
    auth.FAILED: {"failed_logins": auth.SCHEMAS["failed_logins"]},
    auth.DENIED: {"denied_requests": auth.SCHEMAS["denied_requests"]},
    analyses.VERDICT: {"conformance": analyses.CONFORMANCE_SCHEMA}}
# every kind whose absence spares some building (the violations' rules too)
SPARING_KINDS = frozenset(ONE_KIND_TABLES) | frozenset(violations.NEEDS.values())


def empty_tables(absent: frozenset[str]) -> dict[str, str]:
    """The tables ``absent`` kinds leave empty, unbuilt: name -> schema (DDL)."""
    return {name: ddl for kind in absent for name, ddl in ONE_KIND_TABLES.get(kind, {}).items()}


def table_groups(t: Traces, counts: Any, absent: frozenset[str] = frozenset()
                 ) -> list[Callable[[], dict[str, Any]]]:
    """The tables in groups, each a function building its group's DataFrames: what onepass.py
    plans and collects side by side, a group per thread. Building a DataFrame is work for the
    driver's JVM (each step analysed as it is made: some 6,000 calls for the whole report, and
    most of a small report's time), so the groups are about equal in it: the violations alone
    (about half), the rebalances with the other event tables, the request tables.
    ``absent``: event kinds the traces hold none of (absent.py); the tables of
    empty_tables(absent) are left out, and the violations' rules that would find nothing."""
    def events() -> dict[str, Any]:
        reb = analyses.rebalances(t)
        out = {"rebalances": reb, "rebalance_percentiles": analyses.rebalance_percentiles(reb)}
        # transactions, share groups, logins and denials: modules of their own
        if transactions.KIND not in absent:
            out.update(transactions.frames(t.events, t.runs))
        if share.KIND not in absent:
            out.update(_share_frames(t))
        if auth.FAILED not in absent:
            out["failed_logins"] = auth.failed_logins(t.events)
        if auth.DENIED not in absent:
            out["denied_requests"] = auth.denied_requests(t.events)
        return out

    def requests() -> dict[str, Any]:
        out = {"runs": analyses.runs_table(t, counts),
               "client_matrix": analyses.client_matrix(counts),
               "api_versions": analyses.api_versions(t, counts),
               "client_errors": analyses.client_errors(counts)}
        if analyses.VERDICT not in absent:
            out["conformance"] = analyses.conformance(t)
        return out

    return [lambda: {"violations": violations.violations(t, absent)}, events, requests]


def _share_frames(t: Traces) -> dict[str, Any]:
    from pyspark.sql import functions as F
    # share.changed names a holder's client id from request_handled rows, which the traces
    # keep apart (t.requests): the members' requests join the events for it
    members = t.requests.where(F.col("member_id").isNotNull()).select(
        F.lit("request_handled").alias("kind"), "run", "group_id", "member_id", "client_id")
    rows = share.changed(gathered(t.events.unionByName(members, allowMissingColumns=True)),
                         t.runs)
    return {"share_redeliveries": share.redeliveries(rows),
            "share_poison_by_topic": share.poison_by_topic(rows),
            "share_poison_records": share.poison_records(rows)}


def run(spark: Any, paths: list[str], out: Path, *, csv: bool = False, since: str | None = None,
        until: str | None = None, labels: list[tuple[str, str]] = (),
        progress: Callable[[str], None] | None = None, html_page: bool = True,
        input_format: str = "json", one_pass: bool | None = None) -> dict[str, list]:
    """Run the whole report; returns the collected rows of every table (tests read them).

    ``one_pass``: every table in one pass, collected whole and written by this process
    (onepass.py) -- the way for traces of up to ONE_PASS_BYTES, chosen by their size when
    None; else each table written by Spark and collected up to MAX_COLLECT rows."""
    say = progress or (lambda _msg: None)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    jvm_lookups.install()  # (classic sessions: a third of the round trips to the JVM)
    size = onepass.input_bytes(paths)
    if one_pass is None:
        one_pass = size is not None and size <= onepass.ONE_PASS_BYTES
    stage = Stages(say, (3 if one_pass else len(TABLES) + 2) + html_page)
    partitions = onepass.partitions_for(size)
    reading = _BackgroundRead(spark)
    with onepass.settings(spark, onepass.small_confs(partitions) if one_pass else None):
        # (the traces are read in the background, while the tables are planned: small ones
        # into one partition, large ones into a cached copy the first table's job waits for;
        # small ones from as soon as load() has planned their reading, while it plans the
        # rest, which keeps one core of two busy)
        try:
            with stage("planning the read") if one_pass else contextlib.nullcontext():
                t = load(spark, paths, since=since, until=until, labels=labels,
                         input_format=input_format, say=say,
                         one_partition=one_pass and partitions == 1,
                         read_early=reading.start if one_pass else None)
                # (told from the files' bytes: tables and rules that would find nothing
                # unbuilt)
                absent = (absent_kinds(paths, SPARING_KINDS, input_format) if one_pass
                          else frozenset())
        except BaseException as exc:
            reading.stop(gone=server_gone(spark, exc))
            raise
        results = _compute(spark, t, out, csv, stage, one_pass, absent, reading)
    for line in drop_lines(results["dropped_lines"]):
        say(line)
    if html_page:
        with stage("report.html"):
            from .html import render
            (out / "report.html").write_text(render(results, worst_runs=worst_runs(results),
                                                    sources=[str(p) for p in paths]))
    say(f"done in {time.monotonic() - started:.1f} s")
    return results


TABLES = ("runs", "client_matrix", "api_versions", "client_errors", "rebalances",
          "rebalance_percentiles", "violations", "conformance", "transactions_per_client",
          "transaction_abort_causes", "transaction_commit_percentiles", "share_redeliveries",
          "share_poison_by_topic", "share_poison_records", "failed_logins", "denied_requests")


class Stages:
    """The terminal's stage counter: ``[i/n] name`` as a stage starts, and its time when it
    ends (``[i/n] name: 2.1 s``)."""

    def __init__(self, say: Callable[[str], None], total: int) -> None:
        self.say, self.total, self.done = say, total, 0

    @contextlib.contextmanager
    def __call__(self, name: str):
        self.done += 1
        label = f"[{self.done}/{self.total}] {name}"
        self.say(label)
        began = time.monotonic()
        yield
        self.say(f"{label}: {time.monotonic() - began:.1f} s")


class _BackgroundRead:
    """The traces' reading as a Spark job in a thread of its own, tagged so that it can be
    cancelled: started by load() (``read_early``) or by _compute(), whichever comes first."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafka-emu-read")
        self.tag = f"kafka-emu-read-{uuid.uuid4().hex}"
        self.future: Future | None = None

    def start(self, read: Callable[[], Any]) -> None:
        if self.future is None:
            self.future = self.pool.submit(_tagged, self.spark, self.tag, read)

    def stop(self, gone: bool) -> None:
        """Cancel the read if it runs (rather than wait for it to end on its own), unless the
        Spark Connect server went, which can cancel nothing."""
        if self.future is not None and not gone:
            _cancel(self.spark, self.tag, self.future)
        self.pool.shutdown(wait=not gone, cancel_futures=True)


def _compute(spark: Any, t: Traces, out: Path, csv: bool, stage: Stages, one_pass: bool,
             absent: frozenset[str], reading: _BackgroundRead) -> dict[str, list]:
    """Every table and figure of the report, with the traces read in the background."""
    # Reading the traces is most of a large job and keeps every core busy; planning the tables
    # is the driver's alone (several seconds at first, while the JVM warms up). Read in the
    # background meanwhile: the first table's job then waits for that read (Spark shares the
    # stage and the cached blocks) instead of starting it.
    reading.start(t.read_now)  # (unless load() started it)
    done: list = []
    gone = False
    try:
        if one_pass:
            results = onepass.compute(spark, t, out, csv, stage, max_rows=MAX_COLLECT,
                                      worst=WORST_RUNS, absent=absent)
        else:
            results = _table_by_table(t, out, csv, stage, done)
        reading.future.result()  # (done long ago: the first table waited for it)
        return results
    except BaseException as exc:
        # a Spark Connect server that went cannot cancel or forget anything: say so now
        # rather than after more rounds of retries
        gone = server_gone(spark, exc)
        raise
    finally:
        reading.stop(gone)  # (a finished read has nothing to cancel: its thread just ends)
        if not gone:
            for df in done:
                df.unpersist()
            t.release()


def _table_by_table(t: Traces, out: Path, csv: bool, stage: Stages, done: list) -> dict:
    """Large traces: each table computed, written by Spark and collected (at most MAX_COLLECT
    rows of it) in turn; the figures counted over the whole tables by Spark."""
    results: dict[str, list] = {}
    totals: dict[str, int] = {}
    counts = analyses.request_counts(t).cache()
    done.append(counts)
    built = tables(t, counts)
    for name, df in built.items():
        with stage(name):
            # kept until the end: a later table may be built from this one (the percentiles
            # from the rebalances), and the tables are small next to the traces
            df = df.cache()
            done.append(df)
            df.coalesce(1).write.mode("overwrite").parquet(str(out / "tables" / name))
            if csv:
                (_csv_ready(df).coalesce(1).write.mode("overwrite").option("header", "true")
                 .csv(str(out / "csv" / name)))
            results[name] = _collect(df, name, totals)
    with stage("figures over the whole tables"):
        results.update(_whole_table_figures(built, totals))
        results.update(losses(t))
    with stage("the runs' timelines"):
        results.update(_run_views(t, counts, built, results))
    return results


RUN_VIEWS = 50  # runs whose view a large report's page carries
TIMELINE_ROWS = 60000  # rows of run timelines the page carries at most


def _run_views(t: Traces, counts: Any, built: dict[str, Any], results: dict) -> dict:
    """The timelines of the runs a person looks at first (the worst, then those with the most
    violations), RUN_VIEWS at most, and every connection's client."""
    from pyspark.sql import functions as F
    runs = list(worst_runs(results))
    per_run = (built["violations"].groupBy("run").count()
               .orderBy(F.desc("count"), "run").limit(RUN_VIEWS).collect())
    runs += [r["run"] for r in per_run if r["run"] not in runs]
    runs = runs[:RUN_VIEWS]
    timeline = (analyses.run_timeline(t).where(F.col("run").isin(runs))
                .limit(TIMELINE_ROWS).collect()) if runs else []
    clients = analyses.connection_clients(counts).limit(TIMELINE_ROWS * 4).collect()
    return {"timeline": sorted((r.asDict(recursive=True) for r in timeline),
                               key=lambda r: (r["run"], r["seq"])),
            "connections": [r.asDict() for r in clients]}


def _is_connect(spark: Any) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _tagged(spark: Any, tag: str, fn: Callable[[], None],
            what: str = "reading the traces") -> None:
    """``fn`` with its Spark jobs marked ``tag`` (for this thread), so _cancel can stop them:
    a tag on Spark Connect, a job group on a classic session (whose interruptTag does not
    reach jobs started from Python)."""
    if _is_connect(spark):
        spark.addTag(tag)
    else:
        spark.sparkContext.setJobGroup(tag, f"kafka-emu report: {what}",
                                       interruptOnCancel=True)
    fn()


def _cancel(spark: Any, tag: str, running: Future) -> None:
    """Cancel ``tag``'s jobs until ``running`` ends: its job may not have started yet when
    asked first (Spark cancels only the jobs already running)."""
    while not running.done():
        try:
            if _is_connect(spark):
                spark.interruptTag(tag)
            else:
                spark.sparkContext.cancelJobGroup(tag)
        except Exception:  # noqa: BLE001 -- best effort on a path that is already failing
            return
        wait([running], timeout=0.2)


def _collect(df: Any, name: str, totals: dict[str, int]) -> list[dict]:
    """The table's rows, or a uniform sample of about MAX_COLLECT of them when it is longer:
    a plot of the first rows Spark happens to return would show whichever runs came first."""
    rows = df.limit(MAX_COLLECT + 1).collect()  # one job for a short table, not two
    totals[name] = n = len(rows)
    if n > MAX_COLLECT:
        totals[name] = n = df.count()
        rows = df.sample(withReplacement=False, fraction=min(1.0, 1.2 * MAX_COLLECT / n),
                         seed=1).limit(MAX_COLLECT).collect()
    return [r.asDict(recursive=True) for r in rows]


def _whole_table_figures(built: dict[str, Any], totals: dict[str, int]) -> dict[str, list]:
    """What the page and the summary count, from the whole tables rather than collected rows."""
    from pyspark.sql import functions as F
    reb, vio = built["rebalances"], built["violations"]
    events = built["runs"].agg(F.sum("events").alias("events")).collect()[0]["events"] or 0
    kinds = vio.groupBy("kind").count().collect()
    longest = reb.groupBy("run").agg(F.max(F.coalesce("duration_ms", F.lit(0))).alias("longest"))
    per_run = vio.groupBy("run").agg(F.count("*").alias("violations"))
    ranked = (longest.join(per_run, "run", "left").fillna(0, ["violations"])
              .orderBy(F.desc("longest"), F.desc("violations"), "run").limit(WORST_RUNS))
    worst = [r["run"] for r in ranked.collect()]
    worst_rebalances = reb.filter(F.col("run").isin(worst)).collect() if worst else []
    return {
        "table_rows": [{"table": name, "rows": n} for name, n in totals.items()],
        "run_events": [{"runs": totals["runs"], "events": events}],
        "violation_kinds": sorted(({"kind": r["kind"], "count": r["count"]} for r in kinds),
                                  key=lambda r: r["kind"]),
        "worst_runs": [{"run": run} for run in worst],
        "worst_run_rebalances": [r.asDict(recursive=True) for r in worst_rebalances],
    }


def losses(t: Traces) -> dict[str, list]:
    """What the traces lost before the report saw it: the lines dropped, per file and reason
    (load.py: unparsable, wrong type, torn gzip tail, no kind or run), and per run the events
    its writer said in run_end it could not write."""
    from pyspark.sql import functions as F
    drops = [r.asDict() for r in t.drops.collect()] + t.more_drops()
    for r in drops:
        r["file"] = _local_path(r["file"])
    lost = (t.events.where((F.col("kind") == "run_end") & (F.col("dropped") > 0))
            .select("run", F.col("dropped").alias("events_lost")).collect())
    return {"dropped_lines": sorted(drops, key=lambda r: (r["file"], r["reason"])),
            "writer_lost": sorted((r.asDict() for r in lost), key=lambda r: r["run"])}


MAX_DROP_LINES = 10


def drop_lines(drops: list[dict]) -> list[str]:
    """One line per file with lines dropped, saying how many and why (the first
    MAX_DROP_LINES files, then how many more)."""
    per_file: dict[str, list[dict]] = {}
    for r in drops:
        per_file.setdefault(r["file"], []).append(r)
    out = []
    for file, rows in list(per_file.items())[:MAX_DROP_LINES]:
        total = sum(r["lines"] for r in rows)
        why = ", ".join(f"{r['lines']} {r['reason']}" for r in rows)
        out.append(f"skipped {total} line{'s' * (total != 1)} of {file}: {why}")
    if len(per_file) > MAX_DROP_LINES:
        out.append(f"skipped lines in {len(per_file) - MAX_DROP_LINES} more files "
                   f"(report.html lists them all)")
    return out


def _local_path(name: str | None) -> str:
    """A file as Spark names it (file:///a%20b/c) as the user wrote it (/a b/c)."""
    from urllib.parse import unquote, urlsplit
    if not name:
        return "(unknown file)"
    if name.startswith("file:"):
        return unquote(urlsplit(name).path)
    return name


def worst_runs(results: dict[str, list]) -> list[str]:
    """The runs with the longest rebalance (then the most violations), ranked over the whole
    tables by ``_whole_table_figures``."""
    return [r["run"] for r in results["worst_runs"]]


def summary(results: dict[str, list], out: Path, stream: TextIO = sys.stdout) -> None:
    """At most about one screen of text."""
    w = stream.write
    (totals,) = results["run_events"]
    w(f"kafka-emu report: {totals['runs']} runs, {totals['events']} events\n")
    w("clients (requests, errors, connections, runs):\n")
    for r in results["client_matrix"][:8]:
        w(f"  {r['client_name']} {r['client_version']}: {r['requests']} requests, "
          f"{r['error_responses']} errors, {r['connections']} connections, {r['runs']} runs\n")
    if len(results["client_matrix"]) > 8:
        w(f"  ... {len(results['client_matrix']) - 8} more\n")
    w("rebalance duration ms (p50 / p95 / p99, count):\n")
    for r in results["rebalance_percentiles"][:6]:
        w(f"  {r['client_name']} {r['client_version']}: {r['p50_ms']} / {r['p95_ms']} / "
          f"{r['p99_ms']} ({r['rebalances']})\n")
    w("violations: " + (", ".join(f"{r['kind']} {r['count']}" for r in results["violation_kinds"])
                        or "none") + "\n")
    if results["conformance"]:
        failed = [r for r in results["conformance"] if r["verdict"] != "pass"]
        w(f"conformance: {len(results['conformance']) - len(failed)} pass, {len(failed)} fail"
          "\n")
    drops = results.get("dropped_lines", [])
    if drops:
        reasons: dict[str, int] = {}
        for r in drops:
            reasons[r["reason"]] = reasons.get(r["reason"], 0) + r["lines"]
        w(f"skipped lines: {sum(reasons.values())} in {len({r['file'] for r in drops})} files ("
          + ", ".join(f"{reason} {n}" for reason, n in sorted(reasons.items())) + ")\n")
    lost = results.get("writer_lost", [])
    if lost:
        w("events lost by the writer (run_end): " + ", ".join(
            f"{r['run']} {r['events_lost']}" for r in lost[:5]) +
          (f", ... {len(lost) - 5} more runs" if len(lost) > 5 else "") + "\n")
    w(f"written: {out / 'report.html'} and {out / 'tables'}/*.parquet\n")
