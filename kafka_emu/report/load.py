"""Reading traces into DataFrames: the explicit schema, run filters, who each request came from.

Every analysis starts from ``Traces``: the events of the selected runs (one wide DataFrame, the
columns of kafka_emu/trace/schema.py) plus the run table and the requests with their client.

A client is named by what it says of itself (ApiVersions v3+ software name and version,
KIP-511), else by the run's labels ``client`` / ``client_version`` (``--trace-label``), else by
its client id; a client that sends no software version but whose client id ends in one
(aiokafka's default ``aiokafka-0.14.0``) has that version.

A line the report cannot use is dropped and counted, never lost in silence: ``Traces.drops``
has one row per file and reason (DROP_REASONS), which the page and the summary show. Both
readers say why a line went: ours (TraceReader.java) in the column DROPPED, Spark's JSON reader
by keeping the line's text there (PERMISSIVE mode), which drop_reason() sorts the same way.
A compressed file that ends torn is read up to its last whole line: ours counts the rest as one
``torn gzip tail``; Spark's reader skips it (ignoreCorruptFiles), and gzip_tails() finds it in
the files the driver can open.
"""

from __future__ import annotations

import datetime
import zlib
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Callable

import attrs

from . import trace_jar
from .kept import Kept
from .kept import usable as kept_usable
from .onepass import in_force, settings
from .spark import ReportError, server_gone, struct_type


@attrs.frozen
class Traces:
    events: Any  # every record of the selected runs except request_handled (EVENT_COLUMNS)
    runs: Any  # one row per run: run, started_ms, emu_version, labels, broker_api_versions
    requests: Any  # request_handled rows (REQUEST_COLUMNS) with client_name, client_version, err
    # one row per file and reason a line was dropped for: file, reason, lines
    drops: Any = None
    cached: tuple = ()  # what load() cached (the copy of the traces first), for release()
    # drops found outside Spark (gzip_tails(), for Spark's JSON reader): called once, at the end
    more_drops: Callable[[], list[dict]] = list

    # the leaves kept as rows (kept.py), when they are; also in ``cached``
    kept: Kept | None = None

    def read_now(self) -> int | None:
        """Read the traces into the cached copy (or the one-partition checkpoint, or the kept
        rows) now, rather than in the first table's job; how many lines were read (None when
        load() cached nothing)."""
        if self.kept is not None:
            return self.kept.keep_all()
        if self.cached:
            return self.cached[0].count()
        return None

    def ready(self) -> None:
        """Before a job runs a plan over the traces: wait until the kept rows are there (a
        cached copy or a checkpoint needs no wait: the job computes or waits for it)."""
        if self.kept is not None:
            self.kept.ready()

    def release(self) -> None:
        for df in self.cached:
            df.unpersist()


# Only the columns some analysis reads are parsed: the rest (configs, raw protocol bytes,
# KIP-848 fields nothing analyses yet) cost nothing. Requests are most of the lines and need
# few columns; the other events are few and need the rest.
REQUEST_COLUMNS = (
    "run", "seq", "at_ms", "connection_id", "api", "version", "correlation_id", "client_id",
    "group_id", "member_id", "group_instance_id", "generation_id", "latency_ms",
    "throttle_time_ms", "partitions", "session_timeout_ms",
)
EVENT_COLUMNS = (
    "kind", "run", "seq", "at_ms", "connection_id", "correlation_id", "reason", "group_id",
    "member_id", "generation_id", "new", "generation", "members", "offsets", "protocol_type",
    "assignments", "metadata", "topic_partitions", "scenario", "client", "client_version",
    "verdict", "dropped", "action", "old", "leader", "api",
    # transaction_ended (transactions.py), share_records_changed (share.py), logins and
    # denials (auth.py); client_id, a request column, comes top-level as the others do
    "transactional_id", "committed", "cause", "duration_ms",
    "topic", "partition", "first_offset", "last_offset", "delivery_count", "ack_type",
    "listener", "mechanism", "user", "reauthentication", "error_code", "peer", "principal",
    "operation", "resource_type", "resource_name", "client_id",
)
RUN_COLUMNS = ("emu_version", "labels", "broker_api_versions")  # of run_start lines
# why a line was dropped (the readers give the first three; a line with no kind or run is
# useless to every table)
UNPARSABLE, WRONG_TYPE, TORN_GZIP, NO_KIND_OR_RUN = (
    "unparsable", "wrong type", "torn gzip tail", "no kind or run")
DROP_REASONS = (UNPARSABLE, WRONG_TYPE, TORN_GZIP, NO_KIND_OR_RUN)
DROPPED = "_dropped"  # the readers' column saying why a line was dropped
CLIENT_COLUMNS = ("client_software_name", "client_software_version")  # of request lines
# what only the other kinds need
EVENT_ONLY_COLUMNS = tuple(c for c in dict.fromkeys(EVENT_COLUMNS + RUN_COLUMNS)
                           if c not in REQUEST_COLUMNS and c != "kind")


# A client id that ends in a version, as aiokafka's and kafka-python's defaults do
# ("aiokafka-0.14.0", "kafka-python-2.0.2"): the version a client that sends no KIP-511
# software version (ApiVersions v0-2) still reveals. The bench's DuckDB twin uses the same
# pattern (RE2 and Java read it alike).
CLIENT_ID_VERSION = r"^[A-Za-z][A-Za-z0-9_.]*(?:-[A-Za-z][A-Za-z0-9_.]*)*-v?([0-9]+(?:[.][0-9]+)+)$"


def _non_empty(col: Any) -> Any:
    """``col``, null when empty (a label "client_version=" says nothing)."""
    from pyspark.sql import functions as F
    return F.when(col != "", col)


def ordered(df: Any, *cols: Any) -> Any:
    """A table sorted for output: gathered into one partition and sorted there.

    Every table is written as one file and is small next to the traces, and a global
    ``orderBy`` would range-partition it: Spark first samples its input to find the ranges,
    which computes the whole plan below (windows over every request, the scans of the cached
    traces) twice. In a one-partition job (onepass.py) the rows are gathered with a coalesce
    (gathered()), which is no shuffle: each shuffle is a Spark stage, and small traces feel
    every stage."""
    if one_partition_job(df):
        return gathered(df).sortWithinPartitions(*cols)
    return df.repartition(1).sortWithinPartitions(*cols)


def one_partition_job(df: Any) -> bool:
    """Whether ``df`` is planned for one partition (onepass.small_confs(1), whose traces
    load() reads into one partition): one shuffle partition."""
    spark, key = df.sparkSession, "spark.sql.shuffle.partitions"
    value = in_force(spark, key)  # (set by onepass.settings(), as a one-pass job's is)
    return str(spark.conf.get(key) if value is None else value) == "1"


def gathered(df: Any) -> Any:
    """``df`` said to be in one partition, in a one-partition job (else ``df`` as it is).

    A union's output has as many partitions as its inputs together, and a join's output
    names both sides' partitionings: a grouping, a join or a sort above either shuffles the
    rows, in one partition, into one partition -- a Spark stage each. A coalesce to one
    partition says "one partition" without a shuffle."""
    return df.coalesce(1) if one_partition_job(df) else df


def distinct_count(col: str) -> Any:
    """How many distinct non-null values of ``col`` a group has (as countDistinct, a long).

    Two countDistinct in one grouping are planned as an Expand (a copy of each row per
    distinct column) and two groupings, the rows shuffled between them even when they are in
    one partition; a set per group needs neither (the columns counted this way are few per
    group: runs, peers, client ids, transactional ids)."""
    from pyspark.sql import functions as F
    return F.size(F.collect_set(col)).cast("long")


def nearest(value: Any, when: Any, frame: Any, name: str) -> Any:
    """``value`` on the window frame's nearest row (its last) where ``when`` holds, as ``name``.

    For "the next row of a kind", give a frame in the reverse order that ends before the row:
    Spark computes a frame running to the partition's end again for every row (quadratic in
    the partition), a frame growing from its start once."""
    from pyspark.sql import functions as F
    return F.last(F.when(when, value), True).over(frame).alias(name)


def _ms(text: str, end: bool) -> int:
    """An ISO date or timestamp (UTC unless it says otherwise) as epoch ms; a bare date used
    as --until means the end of that day."""
    try:
        value = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ReportError(f"expected a date or timestamp like 2026-11-24 or "
                          f"2026-11-24T18:00, got {text!r}") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    if end and len(text) <= 10:
        value += datetime.timedelta(days=1)
    return int(value.timestamp() * 1000)


def parse_label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ReportError(f"expected --label key=value, got {text!r}")
    return key.strip(), value.strip()


def read_json_lines(spark: Any, paths: list[str],
                    say: Callable[[str], None] = lambda _message: None,
                    drops: bool = False) -> Any:
    """The trace files under ``paths`` (JSON Lines, any compression Hadoop knows) as a DataFrame
    of the whole trace schema; a line that does not parse is dropped -- or, with ``drops``, is a
    row whose column DROPPED says why (drop_reason()), every other column null.

    Read with the report's own reader (trace_jar.py: the same rows in about half the CPU of
    Spark's JSON reader) when the session has its jar, else with Spark's JSON reader, saying
    why. ``$KAFKA_EMU_TRACE_READER=json`` asks for Spark's reader."""
    return _read(spark, paths, say, drops)[0]


def _read(spark: Any, paths: list[str], say: Callable[[str], None],
          drops: bool) -> tuple[Any, bool]:
    """read_json_lines(), and whether our reader reads it."""
    from pyspark.sql import types as T
    schema = struct_type()
    if drops:
        schema = T.StructType(schema.fields + [T.StructField(DROPPED, T.StringType(), True)])
    reader = (spark.read.schema(schema)
              .option("recursiveFileLookup", "true")
              .option("pathGlobFilter", "*.jsonl*"))
    if trace_jar.wanted():
        try:
            ours = reader.format(trace_jar.FORMAT)
            if drops:
                ours = ours.option("droppedColumn", DROPPED)
            ours = ours.load(list(paths))
            # (Spark Connect looks for the data source only when asked for the schema)
            _ = ours.schema
            return ours, True
        except Exception as exc:  # any failure here has the fallback below ...
            if server_gone(spark, exc):  # ... but a Spark Connect server that went: no reader
                raise  # will do, and the job says so in one line
            say(f"reading with Spark's JSON reader: {_why_not_ours(exc)}")
    if not drops:
        return reader.option("mode", "DROPMALFORMED").json(list(paths)), False
    # PERMISSIVE keeps a bad line's text in DROPPED (and what of it parsed in the other
    # columns: nulled here, as ours leaves them); a compressed file that fails part way is
    # read up to there (the rest is skipped, and found by gzip_tails())
    from pyspark.sql import functions as F
    raw = (reader.option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", DROPPED)
           .option("ignoreCorruptFiles", "true").json(list(paths)))
    reason = drop_reason(F.col(DROPPED))
    return raw.select(*(F.when(reason.isNull(), F.col(c)).alias(c) for c in raw.columns
                        if c != DROPPED), reason.alias(DROPPED)), False


def drop_reason(text: Any) -> Any:
    """Why Spark's JSON reader could not read a line, from its text (null: it could): a value
    of the wrong type in a column read when the line is a JSON object, else unparsable (torn,
    not JSON, or not an object) -- as our reader says it. Whether it is an object is asked of
    the same JSON parser with nothing to convert: a schema of one string field, which takes
    any value, named as no trace field is, which is set only when the line does not parse."""
    from pyspark.sql import functions as F
    probe = "_kafka_emu_not_an_object"
    parsed = F.from_json(text, f"`{probe}` string", {"mode": "PERMISSIVE",
                                                     "columnNameOfCorruptRecord": probe})
    return F.when(text.isNotNull(), F.when(parsed.getField(probe).isNull(), F.lit(WRONG_TYPE))
                  .otherwise(F.lit(UNPARSABLE)))


def gzip_tails(paths: list[str]) -> list[dict]:
    """One drop row for each gzip trace file under ``paths`` that does not decompress to its
    end (what Spark's JSON reader, with ignoreCorruptFiles, skips without a word). Only the
    files this process can open are checked: a path with a scheme (hdfs://, s3a://) is not."""
    found = []
    for name in paths:
        if "://" in name and not name.startswith("file:"):
            continue
        root = Path(name.removeprefix("file://").removeprefix("file:"))
        files = [root] if root.is_file() else [
            p for p in sorted(root.rglob("*.jsonl*.gz"))
            if not any(_hidden(part) for part in p.relative_to(root).parts)]
        for path in files:
            if path.name.endswith(".gz") and not _whole_gzip(path):
                found.append({"file": str(path.absolute()), "reason": TORN_GZIP, "lines": 1})
    return found


def _hidden(name: str) -> bool:
    """What Spark's file listing leaves out (as TraceSource.java's hidden())."""
    return ((name.startswith("_") and "=" not in name) or name.startswith(".")
            or name.endswith("._COPYING_"))


def _whole_gzip(path: Path) -> bool:
    """Whether the file is gzip members, each whole, and nothing after them (as Hadoop's codec,
    which our reader uses, reads it: Python's gzip module would let trailing zeros pass).
    Streamed, so memory stays small whatever the file holds."""
    with open(path, "rb") as stream:
        member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        started = False  # whether the current member has had any byte
        data = b""
        while True:
            data = data or stream.read(1 << 20)
            if not data:
                return member.eof or not started
            started = True
            try:
                while data and not member.eof:
                    member.decompress(data, 1 << 22)
                    data = member.unconsumed_tail
            except zlib.error:
                return False
            if member.eof:
                data = member.unused_data
                member = zlib.decompressobj(16 + zlib.MAX_WBITS)
                started = False


def _why_not_ours(exc: Exception) -> str:
    """Why the session cannot read with our reader, in one line: the jar's own reason when
    there is no jar (no JDK, ...), else the first line of Spark's error."""
    try:
        trace_jar.jar()
    except trace_jar.JarUnavailable as missing:
        return f"the {trace_jar.FORMAT} reader is not built ({missing})"
    java = getattr(exc, "java_exception", None)  # py4j's errors name the JVM call first
    lines = str(java.getMessage() if java is not None else exc).strip().splitlines()
    return (lines[0] if lines else repr(exc))[:300]


def load(spark: Any, paths: list[str], *, since: str | None = None, until: str | None = None,
         labels: list[tuple[str, str]] = (), input_format: str = "json",
         cache: bool = True, say: Callable[[str], None] = lambda _message: None,
         one_partition: bool = False,
         read_early: Callable[[Callable[[], Any]], None] | None = None) -> Traces:
    """``input_format="parquet"`` reads traces compacted to Parquet with the same schema;
    ``read_early``, with ``one_partition``, is given the read (what Traces.read_now does) as
    soon as it is planned, to start it in the background while the rest is planned;
    JSON Lines are read as read_json_lines() says (``say`` hears which reader, when it is not
    ours).

    With ``cache`` (the default) the traces are read once, parsing only the columns some
    analysis reads, hash-partitioned by run and kept in memory (spilling to disk when it
    must); parsing JSON is most of what the job costs, so no line is parsed twice. Every table
    reads that copy, and since nearly every analysis groups or orders within a run, Spark finds
    the rows already clustered and shuffles only small aggregates. Within each partition the
    copy is sorted by API and kind, so the cached batches (10,000 rows, each with its columns'
    min and max) mostly hold one kind or one API, and a table reading a few of them (the other
    events, JoinGroups, Fetches) decodes only their batches. (API first: the sort compares
    rows by a key's first bytes before the whole key, and every request's kind begins alike;
    the other events, which have no API, come first, sorted by kind.) The request lines'
    client and error are computed from the copy as each table reads it (a broadcast join with
    the run table, which is small)."""
    from pyspark.sql import functions as F

    more_drops = list  # (nothing found outside Spark)
    if input_format == "parquet":
        raw = (spark.read.schema(struct_type()).parquet(*paths)
               .withColumn(DROPPED, F.lit(None).cast("string")))
    else:
        raw, ours = _read(spark, paths, say, drops=True)
        if not ours:
            more_drops = partial(gzip_tails, list(paths))
    first_partition_error = F.col("partition_errors").getItem(0).getField("error_code")
    # every row the readers give is kept here: a dropped line, or one with no kind or run, as
    # a row with its reason and file (and no kind, so that no table reads it)
    reason = F.coalesce(F.col(DROPPED), F.when(F.col("kind").isNull() | F.col("run").isNull(),
                                               F.lit(NO_KIND_OR_RUN)))
    raw = raw.withColumn(DROPPED, reason)
    kept = F.col(DROPPED).isNull()
    is_request = F.col("kind") == "request_handled"
    lines = raw.select(
        F.when(kept, F.col("kind")).alias("kind"), *REQUEST_COLUMNS, *CLIENT_COLUMNS,
        F.col(DROPPED).alias("drop_reason"),
        F.when(~kept, F.input_file_name()).alias("drop_file"),
        # the other kinds' own columns in one struct, null on request lines: the shuffle and
        # the cached copy then carry ~20 columns per request line instead of ~36 (a row has
        # a slot for every column, null or not)
        F.when(~is_request, F.struct(*EVENT_ONLY_COLUMNS)).alias("event"),
        # the error a request got: top-level where the API has one, else the first
        # partition's (OffsetCommit, Produce, ... have only per-partition codes)
        F.when(F.coalesce(F.col("error_code"), F.lit(0)) != 0, F.col("error_code"))
        .when(F.size("partition_errors") > 0, first_partition_error)
        .otherwise(F.lit(0)).cast("long").alias("err"))
    cached: list = []
    store = Kept(spark) if cache and one_partition and kept_usable(spark, paths) else None
    if store is not None:
        # small traces in a local session: the lines kept as rows in the driver's JVM
        # (kept.py), one partition of them, as are the three leaves below; computed in the
        # background from here (read_early), each as soon as it is planned. (The read's tasks,
        # one per split of the files, keep their rows themselves: no shuffle into one.)
        lines = store.frame(lines)
        cached.append(store)
        if read_early is not None:
            read_early(store.keep_all)
    elif cache:
        if one_partition:
            # small traces (onepass.py): read into one partition, kept as a local checkpoint
            # -- which, unlike a cached copy, tells the plans above it that the rows are in
            # one partition: Spark then knows every grouping, window and join has its rows in
            # place and plans no shuffle for them (given the size estimates of
            # onepass.small_confs()). Planned without adaptive execution, which would run the
            # shuffle's stage as the checkpoint is made (to plan the rest from its output):
            # then the read runs when read_now() or a table first reads the checkpoint, in
            # the background while the tables are planned (and on as many cores as the files
            # have splits, where a coalesce would read them all in one task)
            with settings(spark, {"spark.sql.adaptive.enabled": "false"}):
                lines = lines.repartition(1).localCheckpoint(eager=False)
            cached.append(lines)
            if read_early is not None:  # (Traces.read_now, from here: while the rest is planned)
                read_early(lines.count)
        else:
            lines = lines.repartition("run").sortWithinPartitions("api", "kind").cache()
            cached.append(lines)

    try:
        # every run's events (the run_start lines among them): the selected runs come from here.
        # Written as two ranges: Spark skips cached batches by a range, not by an inequality.
        not_request = (F.col("kind") < "request_handled") | (F.col("kind") > "request_handled")
        all_events = lines.where(not_request).select(
            "kind", *(c for c in REQUEST_COLUMNS if c in EVENT_COLUMNS), "event.*")
        runs = all_events.where(F.col("kind") == "run_start").select(
            "run", F.col("at_ms").alias("started_ms"), "emu_version", "labels",
            "broker_api_versions")
        if since:
            runs = runs.where(F.col("started_ms") >= _ms(since, end=False))
        if until:
            runs = runs.where(F.col("started_ms") < _ms(until, end=True))
        for key, value in labels:
            runs = runs.where(F.col("labels").getItem(key) == value)
        runs = runs.dropDuplicates(["run"])
        if cache and not one_partition:
            runs = runs.cache()
            cached.append(runs)

        events = (all_events.join(F.broadcast(runs.select("run")), "run", "left_semi")
                  .select(*EVENT_COLUMNS))
        # runs has one row per run: the inner join keeps the selected runs' requests and brings
        # each its run's labels
        requests = (lines.where(is_request)
                    .join(F.broadcast(runs.select("run", F.col("labels").alias("run_labels"))),
                          "run")
                    .select(
                        *REQUEST_COLUMNS,
                        F.coalesce(F.col("client_software_name"),
                                   F.col("run_labels").getItem("client"), F.col("client_id"),
                                   F.lit("unknown")).alias("client_name"),
                        F.coalesce(F.col("client_software_version"),
                                   _non_empty(F.col("run_labels").getItem("client_version")),
                                   _non_empty(F.regexp_extract(F.col("client_id"),
                                                               CLIENT_ID_VERSION, 1)),
                                   F.lit("unknown")).alias("client_version"),
                        "err"))
        if one_partition:
            # (a join's output names both sides' partitionings; Spark keeps a join above it in one
            # partition only when each side is exactly "one partition": a coalesce says so)
            events, requests = events.coalesce(1), requests.coalesce(1)
            if store is not None:
                try:  # (each planned as it is registered, the three at once, as below)
                    with ThreadPoolExecutor(3, thread_name_prefix="kafka-emu-plan") as pool:
                        runs, events, requests = pool.map(store.frame, (runs, events, requests))
                finally:
                    store.seal()
            elif cache:
                # each a leaf of its own in every plan above it (computed in the first job that
                # reads it, once): the report builds some 700 plans over these three, and Spark
                # analyses each whole as it is built (and deduplicates a self-join's or a union's
                # copies of a relation by rewriting the subtree) -- on the plans read from here
                # rather than from the lines. (Each is planned as it is made, the three at once:
                # planning is the driver JVM's work, one call at a time per thread.)
                with ThreadPoolExecutor(3, thread_name_prefix="kafka-emu-plan") as pool:
                    runs, events, requests = pool.map(lambda df: df.localCheckpoint(eager=False),
                                                      (runs, events, requests))
    except BaseException:
        if store is not None:
            store.seal()  # (the background read, waiting for the leaves, then ends)
        raise
    drops = (lines.where(F.col("drop_reason").isNotNull())
             .groupBy(F.col("drop_file").alias("file"), F.col("drop_reason").alias("reason"))
             .agg(F.count(F.lit(1)).alias("lines")))
    return Traces(events=events, runs=runs, requests=requests, drops=drops,
                  cached=tuple(cached), more_drops=more_drops, kept=store)

