"""``kafka-emu report TRACES... --out DIR``: the PySpark report over trace files.

    kafka-emu report traces/ --out report/ [--csv] [--master URL | --remote sc://HOST:PORT]
                     [--since 2026-11-01] [--until 2026-11-30] [--label client=aiokafka ...]
                     [--memory 4g] [--reserve-memory]
    kafka-emu report-server [--host 127.0.0.1] [--port 15002] [--master local[*]]
                            [--log-dir DIR] [--memory 4g] [--reserve-memory]
                            (reports then run with --remote sc://HOST:PORT)

Exit codes: 0 done, 1 the job failed (Spark's own log is in OUT/logs/spark.log), 2 bad input
or something missing (pyspark, Java): one line on stderr either way; 130 interrupted (Ctrl-C),
with one line too. report-server: 0 stopped
by Ctrl-C or SIGTERM, 1 the port is taken or the server ended on its own, 2 as for report.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any


def add_commands(sub) -> None:
    report = sub.add_parser("report", help="a PySpark report across trace files")
    report.add_argument("traces", nargs="+", metavar="TRACES",
                        help="trace files or directories (read recursively)")
    report.add_argument("--out", required=True, type=Path, metavar="DIR",
                        help="where report.html, tables/*.parquet (and csv/) go")
    report.add_argument("--csv", action="store_true", help="also write the tables as CSV")
    where = report.add_mutually_exclusive_group()
    where.add_argument("--master", help="a Spark master URL (default local[*])")
    where.add_argument("--remote", metavar="sc://HOST:PORT",
                       help="a Spark Connect server (default: $SPARK_REMOTE if set)")
    report.add_argument("--since", metavar="DATE", help="only runs started at or after DATE")
    report.add_argument("--until", metavar="DATE", help="only runs started before the end of DATE")
    report.add_argument("--label", dest="labels", action="append", default=[],
                        metavar="KEY=VALUE", help="only runs with this trace label (repeatable)")
    _memory_options(report)
    report.set_defaults(run=partial(run_report, report))

    server = sub.add_parser("report-server",
                            help="a local Spark Connect server that reports can share")
    server.add_argument("--host", default="127.0.0.1", help="address to listen on "
                        "(default 127.0.0.1)")
    server.add_argument("--port", type=_port, default=15002,
                        help="port to listen on (default 15002, Spark Connect's)")
    server.add_argument("--master", default="local[*]",
                        help="the Spark master the server runs on (default local[*])")
    server.add_argument("--log-dir", type=Path, metavar="DIR",
                        help="where Spark's log goes (default: a new temporary directory)")
    _memory_options(server)
    server.set_defaults(run=partial(run_server, server))


def _memory_options(parser) -> None:
    parser.add_argument("--memory", type=_size, metavar="SIZE",
                        help="the local JVM's heap at most, e.g. 4g (default "
                             "$KAFKA_EMU_REPORT_MEMORY, else a quarter of the memory, 1g-8g)")
    parser.add_argument("--reserve-memory", action="store_true", default=None,
                        help="reserve that heap whole from the start: a little faster on large "
                             "traces, but held until the JVM exits (default "
                             "$KAFKA_EMU_REPORT_RESERVE_MEMORY=1, else no)")


def _size(text: str) -> str:
    import argparse
    from .spark import ReportError, java_size
    try:
        return java_size(text)
    except ReportError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _port(text: str) -> int:
    import argparse
    # (Spark's own rule for the ports it listens on)
    if not text.isdigit() or not 1024 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1024 to 65535, got {text!r}")
    return int(text)


def run_server(parser, args) -> int:
    from .server import serve
    from .spark import ReportError
    try:
        return serve(args.host, args.port, master=args.master, log_dir=args.log_dir,
                     memory=args.memory, reserve=args.reserve_memory)
    except ReportError as exc:
        parser.exit(2, f"kafka-emu report-server: error: {exc}\n")


def run_report(parser, args) -> int:
    try:
        return _run_report(parser, args)
    except KeyboardInterrupt:  # (the session stopped, its jobs with it: see _run_report)
        print("kafka-emu report: interrupted", file=sys.stderr)
        return 130


@contextlib.contextmanager
def _held_interrupt() -> Iterator[list]:
    """A Ctrl-C while the block runs is held until it ends (the list yielded says whether one
    came); a second one raises at once. The block starts the local JVM: interrupted before its
    gateway answered, that JVM (which ignores Ctrl-C: pyspark starts it so) lost its handshake
    file, never learnt that its Python had gone, and outlived the report for good."""
    came: list = []
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # (started so: nothing to hold)
        yield came
        return

    def hold(signum: int, frame: Any) -> None:
        if came:
            raise KeyboardInterrupt
        came.append(signum)
    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield came
    finally:
        signal.signal(signal.SIGINT, previous)


def _run_report(parser, args) -> int:
    from .load import parse_label
    from .spark import (CONNECT_GIVE_UP_S, ReportError, ServerGone, server_gone, session,
                        small_job)

    remote = args.remote or os.environ.get("SPARK_REMOTE")
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # (e.g. `&` in a script)
    try:
        labels = [parse_label(text) for text in args.labels]
        missing = [p for p in args.traces if not Path(p).exists() and "://" not in p]
        if missing and not args.remote:
            raise ReportError(f"no such trace file or directory: {missing[0]}")
        with _held_interrupt() as interrupted:
            spark = session(master=args.master, remote=args.remote, log_dir=args.out / "logs",
                            memory=args.memory, reserve=args.reserve_memory,
                            small=small_job([str(p) for p in args.traces]))
    except ServerGone as exc:
        parser.exit(1, f"kafka-emu report: error: {exc}\n")
    except ReportError as exc:
        parser.exit(2, f"kafka-emu report: error: {exc}\n")
    # pyspark's own Ctrl-C handler cancels the jobs through the JVM's gateway from inside
    # whatever gateway call this thread was in: a reentrant call on the same connection, which
    # fails, and once in some 25 tries here the Ctrl-C was lost (the report ran to its end).
    # Ours only raises; spark.stop() below cancels what is running. (A report started with
    # Ctrl-C ignored ignores it still, whatever pyspark installed.)
    signal.signal(signal.SIGINT, signal.SIG_IGN if ignored else signal.default_int_handler)
    if interrupted:
        spark.stop()
        raise KeyboardInterrupt
    from . import job

    def progress(message: str) -> None:
        print(f"kafka-emu report: {message}", file=sys.stderr, flush=True)

    try:
        results = job.run(spark, [str(p) for p in args.traces], args.out, csv=args.csv,
                          since=args.since, until=args.until, labels=labels, progress=progress)
    except ReportError as exc:
        parser.exit(2, f"kafka-emu report: error: {exc}\n")
    except Exception as exc:  # Spark's errors are long; the log has the rest
        if server_gone(spark, exc):
            print(f"kafka-emu report: error: the Spark Connect server at {remote} stopped "
                  f"answering; gave up after {CONNECT_GIVE_UP_S} s of retries", file=sys.stderr)
            return 1
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        print(f"kafka-emu report: error: the job failed: {first[:300]} "
              f"(see {args.out / 'logs' / 'spark.log'})", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    job.summary(results, args.out)
    return 0
