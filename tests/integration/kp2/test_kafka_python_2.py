"""kafka-python 2.x (what most existing code runs) forms a consumer group against kafka-emu.

kafka-python 2.x and 3.x cannot share one environment, so the client runs in the second venv
`.venv-kp2` (created by the Makefile: kafka-python==2.3.3) as a subprocess of this test. On CI
(env CI=true) a missing .venv-kp2 is a failure; locally it is a skip with the command to run.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ..helpers import assert_disjoint_cover, unique

ROOT = Path(__file__).resolve().parents[3]
PYTHON = ROOT / ".venv-kp2" / "bin" / "python"
SCRIPT = Path(__file__).with_name("group_script.py")


@pytest.fixture
def kp2_python() -> Path:
    if not PYTHON.exists():
        why = (f"{PYTHON} is missing; create it with: python3 -m venv .venv-kp2 && "
               ".venv-kp2/bin/pip install 'kafka-python==2.3.3'")
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(why)
        pytest.skip(why)
    return PYTHON


def test_kafka_python_2_group_of_three(kafka_emu_factory, kp2_python):
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 6})
    proc = subprocess.run([str(kp2_python), str(SCRIPT), emu.bootstrap_servers, topic, group],
                          capture_output=True, text=True, timeout=60, cwd="/")
    assert proc.returncode == 0, f"kafka-python 2 script failed:\n{proc.stdout}\n{proc.stderr[-3000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["kafka_python_version"].startswith("2."), result["kafka_python_version"]
    assert_disjoint_cover([{tuple(tp) for tp in a} for a in result["assignments"]], topic, 6)
    records = result["records"]
    assert len(records) == 120 and len({(p, o) for p, o, _ in records}) == 120
    assert sorted(v for _, _, v in records) == sorted(f"m-{i}" for i in range(120))
    assert emu.describe_group(group).state == "Empty"
