"""`kafka-emu conformance --matrix` for real: two versions of kafka-python (pure Python, so the
two pip installs take seconds; cached in kafka-emu's cache directory for later runs), each in
its own venv, one short scenario each, through the CLI as a user runs it; the summary, the
traces and the report's matrix agree."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kafka_emu.conformance import envs
from kafka_emu.report import matrix as report_matrix

VERSIONS = ("2.0.6", "3.0.12")


def test_two_kafka_python_versions_each_in_its_own_env(tmp_path):
    out = tmp_path / "matrix"
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_emu.cli", "conformance", "--matrix",
         f"kafka-python=={','.join(VERSIONS)}", "--scenario", "group_consumption",
         "--trace-dir", str(out)], capture_output=True, text=True, timeout=600, check=False)
    offline = ("Connection", "Network is unreachable", "Temporary failure in name resolution",
               "No matching distribution found")
    if "not installable" in proc.stdout and any(w in proc.stdout for w in offline):
        pytest.skip(f"PyPI unreachable from here: {proc.stdout[-300:]}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    cells = [json.loads(line) for line in (out / "matrix.jsonl").read_text().splitlines()]
    assert [(c["column"], c["verdict"]) for c in cells] == [
        (f"kafka-python {v}", "pass") for v in VERSIONS]
    for c, v in zip(cells, VERSIONS, strict=True):
        # the env holds that version, and the cell's run is that scenario's traced run
        python = envs.env_python(envs.python_env_dir("kafka-python", v))
        assert envs.installed_version(python, "kafka-python") == v
        first = json.loads((out / c["trace"]).read_text().splitlines()[0])
        assert first["run"] == c["run"]
        assert first["labels"] == {"suite": "conformance", "scenario": "group_consumption",
                                   "client": "kafka-python", "client_version": v,
                                   "group_protocol": "classic",
                                   "heartbeat.interval.ms": "250"}
        assert (out / c["client_logs"]).is_dir()
    assert "#1 kafka-python 2.0.6: 1 pass, 0 fail, 0 skip" in proc.stdout
    page = report_matrix.section(report_matrix.load([out]))
    assert page.count("class='pass'") == 2 and "data-open-run" in page
