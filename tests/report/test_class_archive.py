"""The report JVM's class archive (kafka_emu/report/class_archive.py): written by one JVM as it
exits, promoted only once the JVM's log says it is whole, mapped by the next session's JVM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from kafka_emu.report import class_archive
from kafka_emu.report.trace_jar import java_tool

pytestmark = pytest.mark.skipif(java_tool("java") is None, reason="needs java")

FLAGS = ["-XX:+UseParallelGC"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_EMU_CACHE", str(tmp_path))
    monkeypatch.delenv(class_archive.ENV, raising=False)
    return tmp_path


def _flag(options: list[str], name: str) -> str | None:
    for option in options:
        if option.startswith(f"-XX:{name}="):
            return option.split("=", 1)[1]
    return None


def test_a_dump_is_claimed_and_promoted_only_once_written(cache):
    java = java_tool("java")
    final = class_archive.archive_path(java, FLAGS)
    first = class_archive.options(java, FLAGS)
    partial = _flag(first, "ArchiveClassesAtExit")
    assert partial is not None and _flag(first, "SharedArchiveFile") is None
    log = f"{partial}{class_archive.LOG}"
    assert any(o.startswith("-Xlog:") and log in o for o in first)
    # while that JVM runs (or dumps), nobody else starts a dump, and nothing is mapped
    assert class_archive.options(java, FLAGS) == []
    with open(partial, "wb") as f:  # half written: the log does not say so yet
        f.write(class_archive.DYNAMIC_MAGIC.to_bytes(4, "little") + b"\0" * 100)
    with open(log, "a") as f:
        f.write("[1.0s][info][cds] Shared file region (rw) 0: 10 bytes\n")
    assert class_archive.options(java, FLAGS) == []
    assert not final.exists()
    with open(log, "a") as f:
        f.write("[2.0s][info][cds,dynamic] Written dynamic archive 0x1 - 0x2 "
                "[984 bytes header, 104 bytes total]\n")
    mapped = class_archive.options(java, FLAGS)
    assert _flag(mapped, "SharedArchiveFile") == str(final)
    assert final.is_file() and not os.path.exists(partial) and not os.path.exists(log)
    assert class_archive.options(java, FLAGS) == mapped
    # a file that is not the size it was promoted at is not mapped (a JVM dies on a short one)
    with open(final, "ab") as f:
        f.write(b"more")
    assert _flag(class_archive.options(java, FLAGS), "SharedArchiveFile") is None
    assert not final.exists()
    # other flags, another archive; another heap size, the same
    other = class_archive.options(java, ["-XX:+UseSerialGC"])
    assert _flag(other, "ArchiveClassesAtExit") not in (None, partial)
    assert class_archive.archive_path(java, [*FLAGS, "-Xms4g"]) == final


def test_an_abandoned_dump_is_removed_and_another_claimed(cache):
    java = java_tool("java")
    first = class_archive.options(java, FLAGS)
    partial = _flag(first, "ArchiveClassesAtExit")
    with open(partial, "wb") as f:
        f.write(b"torn")
    old = time.time() - class_archive.DUMP_GRACE_S - 60
    for path in (partial, f"{partial}{class_archive.LOG}"):
        os.utime(path, (old, old))
    again = class_archive.options(java, FLAGS)
    claimed = _flag(again, "ArchiveClassesAtExit")
    assert claimed is not None and claimed != partial
    assert not os.path.exists(partial)


def test_off_means_no_archive_flags(cache, monkeypatch):
    monkeypatch.setenv(class_archive.ENV, "off")
    assert class_archive.options(java_tool("java"), FLAGS) == []
    assert not (cache / "jvm-classes").exists()


SESSION = textwrap.dedent("""
    import json, sys
    from kafka_emu.report.spark import session
    spark = session(master="local[1]", small=sys.argv[1] == "small")
    pid = spark.sparkContext._gateway.proc.pid
    with open(f"/proc/{pid}/maps") as maps:
        mapped = sorted({line.split()[-1] for line in maps if "spark-classes-" in line})
    flags = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    print(json.dumps({"rows": spark.range(7).count(), "mapped": mapped,
                      "c1": "-XX:TieredStopAtLevel=1" in list(flags)}))
    spark.stop()
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads /proc/PID/maps")
def test_built_archive_is_mapped_by_the_next_session(cache):
    """The archive `make` builds (a report's JVM dumping as it exits) is what the next local
    session's JVM maps: its file is among the JVM's memory mappings, and Spark works."""
    said = class_archive.build()
    assert said.startswith("built: "), said
    final = said.removeprefix("built: ")
    assert class_archive.is_archive(final) and os.path.getsize(final) > 10 * 2**20
    assert class_archive.build().startswith("up to date: ")
    # (a small report's JVM compiles with C1 only: the same archive serves it)
    assert _session(cache, "small") == {"rows": 7, "mapped": [final], "c1": True}
    # cut short behind the report's back (its recorded size made to match): HotSpot dies
    # mapping it; the session forgets the archive and starts without it
    with open(final, "r+b") as f:
        f.truncate(os.path.getsize(final) // 2)
    with open(final + class_archive.SIZE, "w") as f:
        f.write(str(os.path.getsize(final)))
    assert _session(cache) == {"rows": 7, "mapped": [], "c1": False}
    assert not os.path.exists(final)
    # (the JVM that died wrote its crash report elsewhere than the working directory)
    assert not list(cache.glob("hs_err_pid*"))


def _session(cache, size: str = "any") -> dict:
    proc = subprocess.run([sys.executable, "-c", SESSION, size], capture_output=True, text=True,
                          timeout=300, cwd=cache, env=os.environ | {"KAFKA_EMU_CACHE": str(cache)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_archive_is_built_by_a_report_that_builds_every_table(tmp_path):
    """(A report leaves unbuilt the tables its traces cannot fill, absent.py: the archive's
    report must not, or its JVM would not load those tables' classes.)"""
    from kafka_emu.report.absent import absent_kinds
    from kafka_emu.report.job import SPARING_KINDS
    (tmp_path / "archive.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in class_archive.trace()))
    assert absent_kinds([str(tmp_path)], SPARING_KINDS) == frozenset()


def test_small_job_is_judged_by_the_traces_on_disk(tmp_path):
    from kafka_emu.report.spark import SMALL_JOB_BYTES, small_job
    small = tmp_path / "small"
    small.mkdir()
    (small / "a.jsonl").write_bytes(b"x" * 1000)
    assert small_job([str(small)])
    big = tmp_path / "big"
    big.mkdir()
    with open(big / "a.jsonl.gz", "wb") as f:  # (compressed: it holds about 12x its size)
        f.truncate(SMALL_JOB_BYTES // 10)
    assert not small_job([str(big)]) and not small_job([str(small), str(big)])
    assert not small_job(["hdfs://namenode/traces"])  # (its size is not known here)
