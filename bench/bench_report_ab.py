"""A change to the report against a git revision, interleaved (issue 39): is it faster?

    .venv/bin/python bench/bench_report_ab.py [--rounds N] [--events 300] [--base REV] [--plain]

The revision (default HEAD) is exported into a temporary directory (`git archive`, with the
trace reader's jars of this tree beside its sources: a jar is named by its sources' digest, so
only the matching one is used); then, in each of N rounds (default 3), each in a fresh process:
a bare local SparkSession started and stopped, the report over the same traces
(bench/trace_gen.py) with the revision's kafka_emu, and with this work tree's (the two in
turn first, round by round). Each report line
gives the session's start and every stage's time as the job's own stage counter reports it,
with the load average and the CPU time (driver JVM and Python) beside it; at the end the
medians and their ratios to the bare session.
On a shared machine, read the ratios of the same round, not the seconds: a change that only
overlaps work (two threads) can lose under load, where the CPU it gets is what counts.
``--plain`` adds a bare session as pyspark starts one with its defaults (none of the report's
JVM flags, no class archive): the time a user's own SparkSession takes to start.
Not a test: it prints and exits 0.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
sys.path.insert(0, str(HERE))


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


PLAIN = "--plain"  # a bare session as pyspark starts one: none of the report's JVM flags


def child(traces: str | None) -> dict:
    from kafka_emu.report.spark import session
    out = Path(tempfile.mkdtemp())
    began = time.perf_counter()
    if traces == PLAIN:
        from pyspark.sql import SparkSession
        traces = None
        spark = (SparkSession.builder.master("local[2]")
                 .config("spark.ui.enabled", "false").getOrCreate())
    else:
        from kafka_emu.report import spark as report_spark
        # (as `kafka-emu report` starts it; a revision from before small_job() had no such hint)
        small = (traces is not None and hasattr(report_spark, "small_job")
                 and report_spark.small_job([traces]))
        spark = session(master="local[2]", log_dir=out / "logs", **({"small": True} if small else {}))
    started = time.perf_counter() - began
    stages: list[str] = []
    if traces is None:
        spark.range(1).count()  # (a session that has run one job, as a report's has)
    else:
        from kafka_emu.report import job

        def progress(message: str) -> None:
            if message.startswith("[") and message.endswith(" s"):  # "[2/4] name: 5.1 s"
                name, _, took = message.partition("] ")[2].rpartition(": ")
                stages.append(f"{name} {took}")
        job.run(spark, [traces], out, progress=progress)
    cpu = _jvm_cpu(spark) + time.process_time()
    spark.stop()
    shutil.rmtree(out, ignore_errors=True)
    return {"seconds": time.perf_counter() - began, "start": started, "stages": stages,
            "cpu": cpu}


def _jvm_cpu(spark) -> float:
    """The local driver JVM's CPU seconds so far (user and system, from /proc), 0 where
    there is no /proc: what a change costs whatever the load, where the wall time says what
    it gains on an idle machine (overlapping work) or loses on a busy one."""
    try:
        pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except Exception:  # noqa: BLE001 -- a figure beside the figure: none rather than a failure
        return 0.0


def _export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(TREE), "archive", rev, "kafka_emu"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    for jar in (TREE / "kafka_emu" / "report" / "jvm").glob("*.jar"):
        shutil.copy(jar, into / "kafka_emu" / "report" / "jvm")
    return into


def _run(pythonpath: Path | None, traces: str | None) -> dict | None:
    env = os.environ | {"PYTHONWARNINGS": "ignore"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    proc = subprocess.run([sys.executable, __file__, "--child", *([traces] if traces else [])],
                          capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        print("  !! failed:")
        for line in (proc.stderr or proc.stdout).strip().splitlines()[-25:]:
            print(f"     {line}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1] if len(argv) > 1 else None)))
        return 0
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    events = int(argv[argv.index("--events") + 1]) if "--events" in argv else 300
    rev = argv[argv.index("--base") + 1] if "--base" in argv else "HEAD"
    import trace_gen
    with tempfile.TemporaryDirectory() as tmp:
        base = _export(rev, Path(tmp))
        traces = Path(tmp) / "traces"
        print(f"{trace_gen.generate(traces, events)} events; base {rev}, against this tree")
        sides = [("bare session", TREE, None), (f"report at {rev}", base, str(traces)),
                 ("report, this tree", TREE, str(traces))]
        if "--plain" in argv:  # (and the bare session as pyspark's defaults start it)
            sides.insert(1, ("plain pyspark session", TREE, PLAIN))
        times: dict[str, list[float]] = {}
        cpus: dict[str, list[float]] = {}
        for attempt in range(1, rounds + 1):
            print(f"round {attempt} of {rounds} (load average {_load()}):", flush=True)
            # the two reports swap places every round: under a varying load the one run
            # first after the bare session was the faster in each of six rounds
            order = sides if attempt % 2 else [*sides[:-2], sides[-1], sides[-2]]
            for label, path, where in order:
                result = _run(path, where)
                if result is None:
                    continue
                times.setdefault(label, []).append(result["seconds"])
                cpus.setdefault(label, []).append(result.get("cpu", 0.0))
                detail = "; ".join([f"session {result['start']:.1f}", *result["stages"],
                                    f"CPU {result.get('cpu', 0.0):.1f} s"])
                print(f"  {label:<22} {result['seconds']:7.1f} s  load {_load()}  ({detail})",
                      flush=True)
        bare = statistics.median(times.get("bare session", [float("nan")]))
        print(f"medians of {rounds}:")
        for label, values in times.items():
            print(f"  {label:<22} {statistics.median(values):7.1f} s  "
                  f"{statistics.median(values) / bare:5.2f}x the bare session, "
                  f"CPU {statistics.median(cpus[label]):.1f} s (driver JVM and Python)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    raise SystemExit(main(sys.argv[1:]))
