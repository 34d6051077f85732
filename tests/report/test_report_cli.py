"""``kafka-emu report`` refusing bad input or a missing Java: one line, exit code 2, before
any Spark starts."""

from __future__ import annotations

import os
import subprocess
import sys


def report(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafka_emu", "report", *args],
                          capture_output=True, text=True, timeout=120,
                          env=os.environ | (env or {}))


def test_missing_java_is_one_clear_line(tmp_path):
    proc = report(str(tmp_path), "--out", str(tmp_path / "out"),
                  env={"JAVA_HOME": str(tmp_path / "no-java")})
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "needs Java 17 or newer" in proc.stderr


def test_bad_label_and_missing_traces_are_one_line_each(tmp_path):
    proc = report(str(tmp_path), "--out", str(tmp_path / "out"), "--label", "nokey")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "key=value" in proc.stderr
    proc = report(str(tmp_path / "nothing-here"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "no such trace file" in proc.stderr


def test_out_is_required():
    proc = report("traces")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
