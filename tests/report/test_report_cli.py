"""``kafka-emu report`` refusing bad input or a missing Java: one line, exit code 2, before
any Spark starts; stopped by Ctrl-C: one line, exit code 130, no JVM left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest


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


@pytest.mark.parametrize("at", ["[1/4] planning the read", "[2/4] reading"])
def test_ctrl_c_stops_the_report_with_one_line(fixture_traces, tmp_path, at):
    """Ctrl-C while the read is planned (a JVM call in flight in this thread) or while the
    tables are collected (in threads): the report stops, says so in one line, exits 130. With
    pyspark's own handler the first printed py4j's tracebacks, or was lost (its handler calls
    the JVM from inside the call it interrupted)."""
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "report", str(fixture_traces),
                             "--master", "local[2]", "--out", str(tmp_path / "out")],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    said = []
    try:
        for line in proc.stderr:
            said.append(line)
            if at in line:
                time.sleep(0.3)  # (into the stage: its JVM calls under way)
                proc.send_signal(signal.SIGINT)
                break
        said += proc.stderr.read().splitlines(keepends=True)
        assert proc.wait(timeout=60) == 130, "".join(said)
    finally:
        proc.kill()
    assert said[-1] == "kafka-emu report: interrupted\n", "".join(said)
    assert all(line.startswith("kafka-emu report: ") for line in said), "".join(said)


def _in_session(sid: int) -> list[int]:
    """The processes of session ``sid`` (Linux's /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid:
                    found.append(int(entry))
            except OSError:  # (gone meanwhile)
                pass
    return found


def _jvm_started(sid: int) -> bool:
    """Whether session ``sid`` has pyspark's gateway JVM (SparkSubmit) among its processes."""
    for pid in _in_session(sid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"org.apache.spark.deploy.SparkSubmit" in f.read():
                    return True
        except OSError:
            pass
    return False


def test_ctrl_c_while_the_jvm_starts_leaves_no_jvm_behind(fixture_traces, tmp_path):
    """Ctrl-C to the whole process group (as a terminal sends it) as soon as the JVM is
    started: the report waits for its gateway, stops it, says so, exits 130, and nothing of it
    is left. Before, that JVM (which ignores Ctrl-C) lost its handshake file and ran on for
    good."""
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "report", str(fixture_traces),
                             "--master", "local[2]", "--out", str(tmp_path / "out")],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not _jvm_started(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _jvm_started(proc.pid), "no JVM started"
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.communicate(timeout=60)[1]
        assert proc.returncode == 130, err
        assert err.splitlines()[-1] == "kafka-emu report: interrupted", err
        deadline = time.monotonic() + 15
        while _in_session(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _in_session(proc.pid) == []
    finally:
        for pid in _in_session(proc.pid):
            os.kill(pid, signal.SIGKILL)
