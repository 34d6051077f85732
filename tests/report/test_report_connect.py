"""The same report job, unchanged, against a Spark Connect server: one started here from
pyspark's own distribution (its wheel carries the Spark Connect server jar), on loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from . import traces
from .test_report_job import EXPECTED_VIOLATIONS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    import pyspark
    home = Path(pyspark.__file__).parent
    port = _free_port()
    log = tmp_path_factory.mktemp("connect") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(home / "bin" / "spark-submit"), "--class",
             "org.apache.spark.sql.connect.service.SparkConnectServer", "--master", "local[2]",
             "--conf", f"spark.connect.grpc.binding.port={port}",
             "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
             "--conf", "spark.driver.bindAddress=127.0.0.1",
             "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.ui.enabled=false",
             "--conf", "spark.sql.shuffle.partitions=2", "spark-internal"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env=os.environ | {"SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable})
    try:
        deadline = time.monotonic() + 300
        while b"Spark Connect server started" not in log.read_bytes():
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "Spark Connect server did not start in 300 s"
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


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
    assert (out / "report.html").read_text().count("<svg") == 4
