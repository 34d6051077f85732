"""The report at the sizes people run it (issue 39): the run that just failed, a session's
worth, and a fleet's.

    .venv/bin/python bench/bench_report_sizes.py [--repeat N] [--10m] [--remote sc://HOST:PORT]

In one run, each in a fresh process, interleaved N times (default 1; after the bare session the
reports run in the reverse order every other round), with the class archive built as `make` builds
it, into a cache of the bench's own (_class_archive()):
- a bare local SparkSession started and stopped as the report starts it (its JVM flags and
  class archive: what any report pays at least), and one as pyspark starts it by default
  (what a user's own SparkSession takes);
- `kafka-emu report`'s job (session start, kafka_emu.report.job.run with the page, stop) over
  one run's traces (about 300 events, bench/trace_gen.py) -- target: within 1.5x the bare
  session's start and stop;
- the same over 100,000 events -- target: within 2.5x the bare session;
- with --10m, bench/bench_report.py's pair at 10M events (the job against DuckDB, target 3x).
With --remote, the two small reports also run on that Spark Connect server (a warm
`kafka-emu report-server`), timed from the client's side, session included.
Each report line also says how many Spark stages its job ran (a local session's status
tracker; every stage is a scheduling round, which small traces feel most). Every figure is wall-clock time on whatever machine this is, with its load average beside it:
on a shared machine, read the ratios, not the seconds. A child that fails prints its error
output and the bench goes on with the next. Not a test: it prints and exits 0.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import trace_gen  # noqa: E402

TARGETS = {"small": 1.5, "100k": 2.5}


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def child_bare() -> dict:
    from kafka_emu.report.spark import session
    began = time.perf_counter()
    spark = session(master="local[2]", log_dir=Path(tempfile.mkdtemp()))
    spark.range(1).count()  # (a session that has run one job, as a report's has)
    spark.stop()
    return {"seconds": time.perf_counter() - began}


def child_plain() -> dict:
    """A bare session as pyspark starts one with its defaults (none of the report's JVM
    flags, no class archive): what a user's own SparkSession takes."""
    from pyspark.sql import SparkSession
    began = time.perf_counter()
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false") \
        .getOrCreate()
    spark.range(1).count()
    spark.stop()
    return {"seconds": time.perf_counter() - began}


def child_report(traces: str, remote: str | None = None) -> dict:
    from kafka_emu.report import job
    from kafka_emu.report.spark import session, small_job
    out = Path(tempfile.mkdtemp())
    began = time.perf_counter()
    spark = session(master="local[2]", remote=remote, log_dir=out / "logs",
                    small=small_job([traces]))  # (as `kafka-emu report` starts it)
    started = time.perf_counter()
    job.run(spark, [traces], out)
    ran = time.perf_counter()
    stages = None
    if remote is None:  # (Spark Connect has no status tracker)
        tracker = spark.sparkContext.statusTracker()
        stages = sum(len(info.stageIds) for info in map(tracker.getJobInfo,
                                                         tracker.getJobIdsForGroup(None))
                     if info is not None)
    spark.stop()
    return {"seconds": time.perf_counter() - began, "start": started - began,
            "job": ran - started, "stages": stages}


def _child(*args: str) -> dict | None:
    """A child's JSON line, or None after printing its error output (the bench goes on)."""
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                          env=os.environ | {"PYTHONWARNINGS": "ignore"})
    if proc.returncode != 0:
        print(f"  !! {' '.join(args[:2])} failed (exit {proc.returncode}):")
        for line in (proc.stderr or proc.stdout).strip().splitlines()[-25:]:
            print(f"     {line}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _class_archive(cache: Path) -> None:
    """The class archive as `make` builds it (class_archive.build(): a report over a tiny trace
    that builds every table, whose JVM writes the classes it loaded as it exits), in a cache of
    the bench's own. Whatever JVM first found no archive wrote the user's cache's: a bare
    session's leaves out the thousand-odd classes a report loads beyond Spark's start, and every
    report after it loads them from the jars (about 1 s of a small report's JVM CPU)."""
    from kafka_emu.report import class_archive
    os.environ["KAFKA_EMU_CACHE"] = str(cache)  # (the children inherit it)
    began = time.perf_counter()
    said = class_archive.build()
    print(f"the class archive: {said} ({time.perf_counter() - began:.1f} s)", flush=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        result = (child_bare() if argv[1] == "bare" else child_plain() if argv[1] == "plain"
                  else child_report(argv[2], *argv[3:4]))
        print(json.dumps(result))
        return 0
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 1
    remote = argv[argv.index("--remote") + 1] if "--remote" in argv else None
    with tempfile.TemporaryDirectory() as tmp:
        sizes = {"small": 300, "100k": 100_000}
        roots = {}
        for name, events in sizes.items():
            roots[name] = Path(tmp) / name
            written = trace_gen.generate(roots[name], events)
            mb = sum(f.stat().st_size for f in roots[name].rglob("*.jsonl")) / 1e6
            print(f"{name}: {written} events, {mb:.1f} MB of JSON Lines")
        _class_archive(Path(tmp) / "cache")
        times: dict[str, list[float]] = {}
        for attempt in range(1, repeat + 1):
            print(f"round {attempt} of {repeat} (load average {_load()}):", flush=True)
            steps = [("bare session", ("bare",)), ("plain pyspark session", ("plain",))]
            steps += [(f"report {n}", ("report", str(roots[n]))) for n in sizes]
            if remote:
                steps += [(f"report {n} on {remote}", ("report", str(roots[n]), remote))
                          for n in sizes]
            # the reports take turns running first after the bare session (reversed every
            # other round): under a varying load the first was the faster in each of six
            # rounds of bench_report_ab.py, whichever it was
            if attempt % 2 == 0:
                steps = steps[:2] + steps[:1:-1]
            for label, args in steps:
                result = _child("--child", *args)
                if result is None:
                    continue
                times.setdefault(label, []).append(result["seconds"])
                extra = (f" (session {result['start']:.1f} s + job {result['job']:.1f} s"
                         + (f", {result['stages']} Spark stages" if result.get("stages") else "")
                         + ")" if "job" in result else "")
                print(f"  {label:<36} {result['seconds']:7.1f} s{extra}  load {_load()}",
                      flush=True)
        bare = statistics.median(times.get("bare session", [float("nan")]))
        plain = statistics.median(times.get("plain pyspark session", [float("nan")]))
        print(f"medians of {repeat} (bare session {bare:.1f} s, as the report starts it; "
              f"plain pyspark session {plain:.1f} s):")
        for label, values in times.items():
            if label in ("bare session", "plain pyspark session"):
                continue
            ratio = statistics.median(values) / bare
            size = label.split()[1]
            target = TARGETS.get(size) if " on " not in label else None
            verdict = "" if target is None else \
                (" ok" if ratio <= target else f" target {target}x missed")
            print(f"  {label:<36} {statistics.median(values):7.1f} s  {ratio:5.2f}x the bare "
                  f"session{verdict}; {statistics.median(values) / plain:5.2f}x the plain one")
    if "--10m" in argv:
        print("10M events (bench_report.py --quick 10000000):", flush=True)
        subprocess.run([sys.executable, str(Path(__file__).parent / "bench_report.py"),
                        "--quick", "10000000"], check=False)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    raise SystemExit(main(sys.argv[1:]))
