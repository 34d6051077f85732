"""The same report job, unchanged, against a Spark Connect server: one started here by
``kafka-emu report-server`` (pyspark's own server jar, set up as the report's local session),
on loopback, and stopped the way a user stops it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter

import pyarrow.parquet as pq
import pytest

from . import traces
from .test_report_job import EXPECTED_VIOLATIONS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafka_emu", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    port = _free_port()
    logs = tmp_path_factory.mktemp("connect")
    said = logs / "stderr.txt"
    with open(said, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kafka_emu", "report-server", "--port", str(port),
             "--log-dir", str(logs)], stdout=subprocess.DEVNULL, stderr=err,
            env=os.environ | {"KAFKA_EMU_REPORT_MEMORY": "1g"})
    try:
        deadline = time.monotonic() + 300
        while "ready on" not in said.read_text():
            assert proc.poll() is None, said.read_text() + (logs / "spark.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "kafka-emu report-server did not start in 300 s"
            time.sleep(0.5)
        (line,) = said.read_text().splitlines()
        assert f"ready on sc://127.0.0.1:{port}" in line
        yield f"sc://127.0.0.1:{port}"
        # stopped as a service manager stops it: SIGTERM, then the server is gone with it
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 0, said.read_text()
        assert said.read_text().splitlines()[-1] == "kafka-emu report-server: stopping"
        assert not _listening(port)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_report_server_refuses_a_log_dir_it_cannot_write(tmp_path):
    (tmp_path / "file").write_text("")
    result = _cli("report-server", "--port", str(_free_port()), "--log-dir",
                  str(tmp_path / "file" / "logs"))
    assert result.returncode == 2
    assert result.stderr == (f"kafka-emu report-server: error: cannot write Spark's log in "
                             f"{tmp_path / 'file' / 'logs'}: Not a directory\n")


def test_report_server_refuses_a_port_in_use_or_out_of_range():
    # (exit 1 for a port in use, as `kafka-emu serve`: the input is fine, the machine is not)
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        busy = _cli("report-server", "--port", str(port))
    assert busy.returncode == 1
    assert busy.stderr == (f"kafka-emu report-server: error: 127.0.0.1:{port} is in use "
                           "(choose another --port)\n")
    low = _cli("report-server", "--port", "80")
    assert low.returncode == 2
    assert low.stderr.strip().splitlines()[-1].endswith(
        "argument --port: expected a port from 1024 to 65535, got '80'")


def test_the_report_runs_unchanged_on_spark_connect(connect_server, tmp_path):
    root = tmp_path / "traces"
    traces.build(root)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "SPARK_REMOTE"}
    proc = subprocess.run([sys.executable, "-m", "kafka_emu", "report", str(root), "--out",
                           str(out), "--remote", connect_server], capture_output=True,
                          text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr
    rows = pq.read_table(out / "tables" / "violations").to_pylist()
    found: dict[str, dict[str, int]] = {}
    for (kind, run), n in Counter((r["kind"], r["run"]) for r in rows).items():
        found.setdefault(kind, {})[run] = n
    assert found == EXPECTED_VIOLATIONS
    reb = pq.read_table(out / "tables" / "rebalance_percentiles").to_pylist()
    assert [(r["client_name"], r["rebalances"], r["p50_ms"]) for r in reb] == [
        ("kafka-python", 5, 3200)]
    assert (out / "report.html").read_text().count("class='chart'") == 5  # and the run view


READ_ON_CONNECT = """
import sys
from kafka_emu.report.load import read_json_lines
from kafka_emu.report.spark import session
spark = session(remote=sys.argv[1])
said = []
df = read_json_lines(spark, [sys.argv[2]], said.append)
print(said)
print(df._explain_string(extended=False))
print(df.where("kind is not null and run is not null").count())
"""


def test_a_connect_session_reads_with_the_reports_own_reader(connect_server, tmp_path):
    # session() uploads the reader's jar to the server for the session (Spark Connect's
    # artifacts); the server had no jar of ours when it started
    root = tmp_path / "traces"
    traces.build(root)
    proc = subprocess.run([sys.executable, "-c", READ_ON_CONNECT, connect_server, str(root)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    said, *plan, count = proc.stdout.strip().splitlines()
    assert said == "[]"
    assert "BatchScan kafka-emu-traces" in "\n".join(plan)
    lines = sum(1 for path in root.rglob("*.jsonl") for line in path.read_text().splitlines()
                if line.startswith("{") and line.endswith("}"))
    assert int(count) == lines
