"""Getting a SparkSession that just works, and the trace schema as a Spark StructType.

Three ways to reach Spark, chosen by the caller and nothing else in the job changes:
- local (default): ``local[*]`` in this process's JVM, set up for a headless machine: driver
  bound to loopback, the UI off, few shuffle partitions, executors' Python = this Python, log4j
  at ERROR into a file under the output directory (the terminal keeps only our own lines);
- ``--master URL``: any Spark master (standalone, YARN, k8s): the same job, same settings minus
  the local-only ones;
- ``--remote sc://HOST:PORT`` or SPARK_REMOTE: a Spark Connect server. Only the DataFrame API is
  used (no RDDs, no SparkContext, no Python UDFs), which is what Spark Connect serves. A
  server that stops answering is given up on about 5 s later (CONNECT_RETRIES), not pyspark's
  ten minutes.
  ``kafka-emu report-server`` (server.py) starts one locally with the same settings as a local
  session (job_confs, local_confs, local_java_options below).

pyspark is imported only inside these functions: importing kafka_emu.report costs nothing and
the server never imports it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from . import class_archive, trace_jar
from .trace_jar import java_tool


class ReportError(Exception):
    """What the user must fix, in one line (missing Java or pyspark, bad option)."""


class ServerGone(ReportError):
    """The Spark Connect server does not answer (exit 1: the input is fine, the machine not)."""


LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {path}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""


def require_pyspark() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ReportError("kafka-emu report needs pyspark: pip install 'kafka-emu[report]'") \
            from None


def java_major(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    for token in (out.stderr + out.stdout).split():
        token = token.strip('"')
        if token[:1].isdigit():
            head = token.split(".")[0].split("-")[0].split("+")[0]
            if head.isdigit():
                return int(head)
    return None


def require_java() -> None:
    """Spark 4 runs on Java 17+: say exactly what is missing, once."""
    java = java_tool("java")
    if java is None:
        raise ReportError("kafka-emu report runs Spark, which needs Java 17 or newer: none found "
                          "(install e.g. Debian's openjdk-17-jre-headless, or set JAVA_HOME)")
    major = java_major(java)
    if major is not None and major < 17:
        raise ReportError(f"kafka-emu report runs Spark, which needs Java 17 or newer; "
                          f"{java} is Java {major}")


# The only filter the report's read has is "kind and run are not null" (the runs are chosen by
# their run_start lines, after the read). Pushed into the JSON reader, it is checked as each
# field of each line is parsed, and it can skip nothing: every whole line has both. Without it
# the parse took about 6% less (5M lines, warm, six runs each: 21.6-23.2 CPU-s, median 22.1,
# against 23.0-23.6, median 23.5).
JSON_FILTER_PUSHDOWN = "spark.sql.json.filterPushdown.enabled"
DATAFRAME_DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"
BROADCAST_TIMEOUT = "spark.sql.broadcastTimeout"


def job_confs(shuffle_partitions: int = 4) -> dict[str, str]:
    """The Spark settings the report's job is written for, wherever Spark runs."""
    return {
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.sql.session.timeZone": "UTC",
        JSON_FILTER_PUSHDOWN: "false",
        "spark.ui.showConsoleProgress": "false",
        # Adaptive execution re-plans each query stage by stage; on this job (about thirty
        # small queries over cached traces, the big joins already broadcast by hint) that
        # waited between stages and compiled more code: with it off, 1M events took 40 s
        # instead of 51 s and a quarter less CPU, the same tables.
        "spark.sql.adaptive.enabled": "false",
        # A broadcast join waits for its small side to be computed, which on a loaded machine
        # (load 14-19 on two cores, 10M events) took longer than the default 300 s and failed
        # the job ("Could not execute broadcast in 300 secs"): slow is fine, failing is not.
        BROADCAST_TIMEOUT: "36000",
        # PySpark 4 records each DataFrame call's Python call site in the JVM for error
        # messages (a walk of the Python stack and three py4j round trips per call: a fifth of
        # a small report's 41,000 round trips). Read once, at the process's first call.
        DATAFRAME_DEBUGGING: "false",
    }


def local_confs(heap: str) -> dict[str, str]:
    """What a Spark in a local JVM (this process's, or a local Spark Connect server's) needs
    on a headless machine: bound to loopback, the UI off, the heap."""
    return {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1",
            "spark.ui.enabled": "false", "spark.driver.memory": heap}


def local_java_options(heap: str, reserve: bool = False) -> list[str]:
    """The local JVM's flags.

    The throughput collector: G1's concurrent threads took CPU from the job's two cores.
    HotSpot's second compiler (C2) only for what runs ten times as often as by default (JDK
    17's Tier4 thresholds x10; the first compiler, C1, as by default): about thirty queries'
    generated classes each run hot briefly, and C2 compiling them cost more than it saved. At
    10M events the compilers took 28-30 CPU-s of the JVM's 165-172 (34-37 of 171-178 with every
    threshold x3, 59-61 of 245-249 by default, measured before later changes to the job); x30
    lost (178).
    The heap grows from the JVM's default start as the job needs it, up to ``heap`` (-Xmx,
    given as spark.driver.memory): a JVM that reserved it all from the start (-Xms) kept it,
    and an idle report-server held 4.8 GB of a shared machine until the kernel killed it.
    ``reserve`` asks for that anyway (-Xms at the heap's size): grown step by step as the
    cached traces filled it, the heap took six full collections at 10M events (about 1.1 s of
    pauses on both cores; the collector 5.7-6.3 CPU-s, 3.3-3.5 reserved), which the benchmark
    does not want to measure. The class metadata's first threshold at 256 MB: the default took
    four more full collections while Spark started."""
    return ["-XX:+UseParallelGC", *([f"-Xms{heap}"] if reserve else []),
            "-XX:MetaspaceSize=256m",
            "-XX:Tier4InvocationThreshold=50000", "-XX:Tier4MinInvocationThreshold=6000",
            "-XX:Tier4CompileThreshold=150000", "-XX:Tier4BackEdgeThreshold=400000"]


# A report over small traces is a few seconds of a cold JVM planning one job: HotSpot's second
# compiler (C2) then competes for the two cores with the work it would speed up, and finishes
# its compilations about when the JVM exits. With the first compiler (C1) only, a 309-event
# report took 19.8-22.7 s instead of 28.2-30.6 s (class archive mapped, interleaved, load 3-4.5).
# Since the one-pass job keeps its rows in the JVM (kept.py), C1 alone also wins at 100,001
# events (46 MB of JSON: the job 8.8-9.0 s against 11.0-14.1 s; C2 took 4.3-4.7 CPU-s, the
# executor 1.7-2 s more without it) and loses at 300,000 (139 MB: 23.7-25.5 s against 22.5-22.7
# s), a crossover about 100 MB: traces of up to SMALL_JOB_BYTES of JSON get it.
SMALL_JOB_FLAGS = ["-XX:TieredStopAtLevel=1"]
SMALL_JOB_BYTES = 64 * 2**20


def small_job(paths: list[str]) -> bool:
    """Whether a report over ``paths`` is small enough for SMALL_JOB_FLAGS (traces on this
    machine's disk, up to SMALL_JOB_BYTES of JSON once decompressed)."""
    from .onepass import json_bytes
    size = json_bytes(paths)
    return size is not None and size <= SMALL_JOB_BYTES


def log_options(log_dir: Path) -> list[str]:
    """log4j at ERROR into log_dir/spark.log (the terminal keeps only our own lines)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    props = log_dir / "log4j2.properties"
    props.write_text(LOG4J.format(path=log_dir / "spark.log"))
    return [f"-Dlog4j2.configurationFile=file:{props}"]


MEMORY_ENV = "KAFKA_EMU_REPORT_MEMORY"  # the heap's maximum, as --memory
RESERVE_ENV = "KAFKA_EMU_REPORT_RESERVE_MEMORY"  # "1": the whole heap from the start


def java_size(text: str) -> str:
    """A memory size as Java writes it (512m, 6g); ReportError when it is not one."""
    value = text.strip().lower()
    if not re.fullmatch(r"[1-9][0-9]*[kmgt]?", value):
        raise ReportError(f"expected a memory size like 512m or 6g, got {text!r}")
    return value


def local_heap(memory: str | None = None) -> str:
    """A local JVM's heap maximum: ``memory`` (--memory), else $KAFKA_EMU_REPORT_MEMORY, else
    driver_memory()."""
    return java_size(memory or os.environ.get(MEMORY_ENV) or driver_memory())


def reserve_heap(reserve: bool | None = None) -> bool:
    """Whether the local JVM reserves its whole heap from the start: ``reserve``
    (--reserve-memory), else $KAFKA_EMU_REPORT_RESERVE_MEMORY=1; no by default."""
    if reserve is not None:
        return reserve
    return os.environ.get(RESERVE_ENV, "").strip().lower() in ("1", "true", "yes")


def session(*, master: str | None = None, remote: str | None = None, log_dir: Path | None = None,
            cores: int | None = None, shuffle_partitions: int = 4, memory: str | None = None,
            reserve: bool | None = None, small: bool = False) -> Any:
    """A SparkSession for the report (see the module doc for the three ways). ``memory`` and
    ``reserve``: the local JVM's heap (local_heap(), reserve_heap()). ``small``: the session is
    for one report over small traces (SMALL_JOB_BYTES), whose local JVM then compiles with
    HotSpot's first compiler only (SMALL_JOB_FLAGS)."""
    require_pyspark()
    remote = remote or os.environ.get("SPARK_REMOTE")
    from pyspark.sql import SparkSession

    confs = job_confs(shuffle_partitions)
    if remote:
        # Spark Connect: the server owns the configuration; only session-level SQL confs here.
        _warm_up()
        quiet()
        spark = SparkSession.builder.remote(remote).getOrCreate()
        patient(spark)
        try:
            for key in ("spark.sql.shuffle.partitions", "spark.sql.session.timeZone",
                        JSON_FILTER_PUSHDOWN, BROADCAST_TIMEOUT):
                spark.conf.set(key, confs[key])
        except Exception as exc:
            if server_gone(spark, exc):
                raise ServerGone(f"no Spark Connect server answers at {remote} (gave up "
                                 f"after {CONNECT_GIVE_UP_S} s of retries)") from None
            raise
        jar = trace_reader_jar()
        if jar is not None:
            try:  # the trace reader, into this session's class path on the server
                spark.addArtifacts(str(jar))
            except Exception:  # already there, or refused: load() then falls back
                pass
        return spark
    require_java()
    _warm_up()
    # The executors' Python is ours (no UDFs need it, but Spark checks it exists and matches).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    local = master is None or master.startswith("local")
    builder = (SparkSession.builder.appName("kafka-emu report")
               .master(master or (f"local[{cores}]" if cores else "local[*]")))
    java_options: list[str] = []
    archive: list[str] = []
    if local:  # (only a local session starts its own JVM)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        heap = local_heap(memory)
        confs.update(local_confs(heap))
        java_options = local_java_options(heap, reserve_heap(reserve))
        from pyspark import SparkContext
        if SparkContext._gateway is None:  # (else this process's JVM is up, flags and all)
            # (from the flags before the log's, which name this run's directory: the archive
            # is shared by every run with the same flags)
            archive = class_archive.options(java_tool("java"), java_options)
        if small:  # (after the archive's flags: the compilers do not shape the archive)
            java_options += SMALL_JOB_FLAGS
        # a JVM that dies (HotSpot mapping a damaged class archive) writes its crash report
        # with the run's logs, not into the user's working directory
        crashes = log_dir if log_dir is not None else Path(tempfile.gettempdir())
        java_options.append(f"-XX:ErrorFile={crashes / 'hs_err_pid%p.log'}")
    jar = trace_reader_jar()
    if jar is not None:  # the trace reader, on the driver's and every executor's class path
        confs["spark.jars"] = str(jar)
    for key, value in confs.items():
        builder = builder.config(key, value)
    if log_dir is not None:
        options = log_options(log_dir)
        java_options += options
        os.environ["SPARK_SUBMIT_OPTS"] = (os.environ.get("SPARK_SUBMIT_OPTS", "") + " " +
                                           " ".join(options)).strip()
    quiet()
    try:
        return _launch(builder, java_options + archive, log_dir)
    except Exception:
        mapped = class_archive.mapped(archive)
        if mapped is None:
            raise
        # a JVM that cannot start on the archive (HotSpot crashes on some damage no checksum
        # catches): forget it, start without
        class_archive.discard(mapped)
        return _launch(builder, java_options, log_dir)


def _launch(builder: Any, java_options: list[str], log_dir: Path | None) -> Any:
    if java_options:
        builder = builder.config("spark.driver.extraJavaOptions", " ".join(java_options))
    if log_dir is None:
        return builder.getOrCreate()
    # The JVM inherits our stderr when it starts: hand it the log file instead, so its warnings
    # and stack traces stay out of the terminal for the whole job.
    with open(log_dir / "spark.log", "ab") as log_file:
        saved = os.dup(2)
        os.dup2(log_file.fileno(), 2)
        try:
            return builder.getOrCreate()
        finally:
            os.dup2(saved, 2)
            os.close(saved)


# How long a report waits for a Spark Connect server that stopped answering: pyspark's own
# policy retries for about ten minutes (15 tries, backoff x4 up to a minute), which a user takes
# for a hang. These five waits, 0.2 s doubling to 2 s, ride out a busy server's hiccup (a long
# garbage collection) and give up about 5 s after the server went.
CONNECT_RETRIES = dict(max_retries=5, initial_backoff=200, backoff_multiplier=2.0,
                       max_backoff=2000, jitter=0)
CONNECT_GIVE_UP_S = 5


def patient(spark: Any) -> None:
    """A Spark Connect session's retries as CONNECT_RETRIES says."""
    from pyspark.sql.connect.client.retries import DefaultPolicy
    spark.client.set_retry_policies([DefaultPolicy(**CONNECT_RETRIES)])
    # ExecutePlan's own re-sends (an operation the server no longer knows) are bounded
    # separately, by an hour, and only in the client's constructor
    if hasattr(spark.client, "_max_retry_exception_elapsed_time"):
        spark.client._max_retry_exception_elapsed_time = 30.0


def server_gone(spark: Any, exc: BaseException) -> bool:
    """Whether ``exc`` says the session's Spark Connect server can no longer be reached
    (gRPC's UNAVAILABLE once the retries gave up). When it does, the session stops retrying,
    so that what is left to do (cancel, release, stop) fails at once instead of waiting again."""
    if not type(spark).__module__.startswith("pyspark.sql.connect"):
        return False
    seen = exc
    gone = False
    while seen is not None and not gone:
        code = getattr(seen, "code", None)
        try:
            gone = callable(code) and getattr(code(), "name", "") == "UNAVAILABLE"
        except Exception:  # noqa: BLE001 -- (code() of a non-gRPC error: not ours to judge)
            gone = False
        gone = gone or "StatusCode.UNAVAILABLE" in str(seen)
        seen = seen.__cause__ or seen.__context__
    if gone:
        spark.client.set_retry_policies([])
    return gone


def trace_reader_jar() -> Path | None:
    """The jar of the report's trace reader (trace_jar.py), or None: load() then reads with
    Spark's JSON reader and says why."""
    try:
        return trace_jar.jar()
    except trace_jar.JarUnavailable:
        return None


def physical_memory() -> int | None:
    """Bytes of memory this process may use: the machine's, or its container's limit when
    lower (cgroup v2 or v1); None when the platform does not say."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None
    for limit_file in ("/sys/fs/cgroup/memory.max",
                       "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def driver_memory(total: int | None = None) -> str:
    """The local JVM's heap: a quarter of the memory there is, between 1 GiB and 8 GiB.

    In local mode the driver's heap holds the cached traces and every task's sorts and
    aggregations; at 10M events (4.8 GB of JSON) the parsed copy is about 1.1 GB, which a
    fixed 2 GiB heap spilled to disk while the garbage collector ran all the time. A quarter
    leaves the rest of a small laptop to the Python side and everything else. It is a
    maximum: the heap grows to it only as the job needs (local_java_options())."""
    total = physical_memory() if total is None else total
    if not total:
        return "2g"
    mib = total // 4 // 2**20
    return f"{max(1024, min(8192, mib))}m"


def quiet() -> None:
    """pyspark's own Python-side warnings and error loggers: not for the user's terminal (the
    report says what failed in one line)."""
    import logging
    import warnings
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"pyspark\..*")
    warnings.filterwarnings("ignore", category=UserWarning, module=r"pyspark\..*")
    for name in ("DataFrameQueryContextLogger", "pyspark", "py4j"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # py4j also logs to the root logger itself (logging.exception, with a traceback: "Exception
    # while sending command.", and for a Ctrl-C "KeyboardInterrupt while sending command.")
    root = logging.getLogger()
    if _from_py4j not in root.filters:
        root.addFilter(_from_py4j)


def _from_py4j(record: Any) -> bool:
    """A filter of the root logger: False for what py4j's own modules log there."""
    return f"{os.sep}py4j{os.sep}" not in record.pathname


def _warm_up() -> None:
    """Import what the job's first step needs, the trace schema (about 0.4 s of imports: the
    trace package brings its writer, and trio), in a thread of its own while the session
    starts -- seconds in which this thread only waits for the JVM or the server. The job's
    own import then finds it done (or waits for it: imports hold a lock per module)."""
    threading.Thread(target=_import_trace_schema, name="kafka-emu-warm-up", daemon=True).start()


def _import_trace_schema() -> None:
    try:
        from ..trace import schema  # noqa: F401
    except Exception:  # noqa: BLE001 -- the job's own import says why, where it is read
        pass


# -- the trace schema as Spark types, from the one declaration --------------------------------

def struct_type() -> Any:
    """The StructType of a trace line: every field of every kind (kafka_emu/trace/schema.py)."""
    from pyspark.sql import types as T

    from ..trace import schema as trace

    scalars = {"string": T.StringType(), "long": T.LongType(), "double": T.DoubleType(),
               "boolean": T.BooleanType()}

    def convert(tp: Any) -> Any:
        if isinstance(tp, trace.Scalar):
            return scalars[tp.name]
        if isinstance(tp, trace.ArrayOf):
            return T.ArrayType(convert(tp.element), containsNull=True)
        if isinstance(tp, trace.MapOf):
            return T.MapType(T.StringType(), convert(tp.value), valueContainsNull=True)
        if isinstance(tp, trace.StructOf):
            return T.StructType([T.StructField(n, convert(t), True) for n, t in tp.fields])
        raise TypeError(tp)

    return T.StructType([T.StructField(name, convert(tp), True)
                         for name, tp in trace.columns()])
