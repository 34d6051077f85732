"""A report whose Spark Connect server dies mid-job gives up within seconds, in one line
(issue 33, finding 7: it waited 275 s and more without a word, pyspark's retries being about
ten minutes), and a report-server's JVM takes the heap it is given (--memory) without
reserving it (an idle one held 4.8 GB of a shared machine)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from . import traces
from .test_report_connect import _free_port


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_a_report_gives_up_in_one_line_when_its_connect_server_dies_mid_job(tmp_path):
    port = _free_port()
    said = tmp_path / "server-stderr.txt"
    env = {k: v for k, v in os.environ.items()
           if k not in ("SPARK_REMOTE", "KAFKA_EMU_REPORT_MEMORY",
                        "KAFKA_EMU_REPORT_RESERVE_MEMORY")}
    with open(said, "wb") as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "kafka_emu", "report-server", "--port", str(port),
             "--memory", "768m", "--log-dir", str(tmp_path / "logs")],
            stdout=subprocess.DEVNULL, stderr=err, env=env)
    report = None
    try:
        deadline = time.monotonic() + 300  # (a hang guard: a cold JVM on a busy machine)
        while "ready on" not in said.read_text():
            assert server.poll() is None, said.read_text()
            assert time.monotonic() < deadline, "kafka-emu report-server did not start"
            time.sleep(0.5)
        (jvm,) = _children(server.pid)
        argv = (Path("/proc") / str(jvm) / "cmdline").read_bytes().split(b"\0")
        assert b"-Xmx768m" in argv
        assert not [a for a in argv if a.startswith(b"-Xms")]

        root = tmp_path / "traces"
        traces.build(root)
        report = subprocess.Popen(
            [sys.executable, "-m", "kafka_emu", "report", str(root), "--out",
             str(tmp_path / "out"), "--remote", f"sc://127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        guard = threading.Timer(600, report.kill)  # a hang guard, not a timed assertion
        guard.start()
        lines = []
        try:
            for line in report.stderr:
                lines.append(line)
                if "[1/" in line:  # mid-job: the traces are being read, tables planned
                    os.killpg(jvm, signal.SIGKILL)
                    break
            lines += report.stderr.readlines()
            report.wait()
        finally:
            guard.cancel()
        assert report.returncode == 1, "".join(lines)
        errors = [line for line in lines if "error" in line.lower() or "Traceback" in line]
        assert errors == [
            f"kafka-emu report: error: the Spark Connect server at sc://127.0.0.1:{port} "
            f"stopped answering; gave up after 5 s of retries\n"], "".join(lines)
        assert lines[-1] == errors[0]
        # the rest is the job's progress: no warning, retry notice or stack trace of pyspark's
        assert all(line.startswith("kafka-emu report: ") for line in lines), "".join(lines)
    finally:
        for pid in _children(server.pid):  # (its JVM first: in a session of its own)
            os.killpg(pid, signal.SIGKILL)
        for proc in (report, server):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
