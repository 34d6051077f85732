"""The examples of docs/how-to/control-over-http.md, run as written with the outputs their
comments promise: the serve command (on free ports instead of 9092/9093), then the curl, Node and
ctl blocks against it, with the token the serve command printed in $KAFKA_EMU_CONTROL_TOKEN (the
blocks read it from there). The page marks these blocks not-run for tests/docs/test_examples.py,
which would check only their exit codes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).parents[2] / "docs" / "how-to" / "control-over-http.md"
EXAMPLE_CONTROL = "127.0.0.1:9093"


def _blocks() -> list[tuple[str, str]]:
    return re.findall(r"^```(\w+)\n(.*?)^```", PAGE.read_text(), flags=re.M | re.S)


def _block(language: str, containing: str) -> str:
    found = [code for lang, code in _blocks() if lang == language and containing in code]
    assert len(found) == 1, f"expected one {language} block with {containing!r}"
    return found[0]


def _require(tool: str) -> None:
    if shutil.which(tool) is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{tool} not on PATH: CI must provide it", pytrace=False)
        pytest.skip(f"{tool} not on PATH")


@pytest.fixture(scope="module")
def served():
    """The page's serve command, on free ports; yields (bootstrap, control host:port, the
    environment with $KAFKA_EMU_CONTROL_TOKEN set to the token it printed)."""
    serve = next(line for line in _block("sh", "kafka-emu serve").splitlines()
                 if line.startswith("kafka-emu serve"))
    argv = serve.split()[1:]
    argv[argv.index("--port") + 1] = "0"
    argv[argv.index("--control-port") + 1] = "0"
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        bootstrap = proc.stdout.readline().strip()
        control = proc.stdout.readline().strip()
        token = proc.stdout.readline().strip()
        assert control.startswith("control: http://"), (bootstrap, control)
        assert token.startswith("control-token: "), token
        env = dict(os.environ, KAFKA_EMU_CONTROL_TOKEN=token.removeprefix("control-token: "))
        yield bootstrap, control.removeprefix("control: http://"), env
    finally:
        proc.terminate()
        proc.wait(30)


def _shell(code: str, control: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    # `kafka-emu` is this interpreter's entry point, whichever environment runs the tests
    bin_dir = str(Path(sys.executable).parent)
    env = dict(env, PATH=bin_dir + os.pathsep + env.get("PATH", ""))
    return subprocess.run(["bash", "-euo", "pipefail", "-c", code.replace(EXAMPLE_CONTROL, control)],
                          capture_output=True, text=True, timeout=120, env=env)


def test_the_curl_example_adds_and_lists_a_fault(served):
    _require("curl")
    _, control, env = served
    proc = _shell(_block("sh", "curl"), control, env)
    assert proc.returncode == 0, proc.stderr
    added, listed = [json.loads(line) for line in proc.stdout.splitlines()]
    rule = added["result"]
    assert rule["error"] == "REBALANCE_IN_PROGRESS" and rule["match"]["api"] == "OffsetCommit"
    assert rule["id"] in [r["id"] for r in listed["result"]]


def test_the_node_example_creates_a_topic_then_gets_409(served, tmp_path):
    _require("node")
    _, control, env = served
    script = tmp_path / "example.mjs"
    script.write_text(_block("js", "fetch").replace(EXAMPLE_CONTROL, control))
    proc = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    assert first.startswith("200 ") and "payments" in first
    assert second == "409 topic 'payments' already exists"


def test_the_ctl_example_runs_each_line(served):
    _, control, env = served
    proc = _shell(_block("sh", "kafka-emu ctl"), control, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert '"operation": "add-fault"' in proc.stdout  # from `list`
    assert "delay" in proc.stdout and "Heartbeat" in proc.stdout  # the text listing
    removed = int(re.search(r'"removed": (\d+)', proc.stdout).group(1))
    assert removed >= 1  # clear-faults removed at least the rule added above
    assert "advanced_ms: 1000" in proc.stdout.splitlines()  # time moved, shown as text
