"""Every example in examples/ runs against kafka-emu and succeeds (a user copies from them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafka_emu.testing import make_config, run_in_thread

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize("script", ["kafka_python_group.py", "confluent_kafka_group.py",
                                    "aiokafka_group.py"])
def test_group_example_consumes_everything(script):
    with run_in_thread(make_config(topics={"orders": 4})) as emu:
        proc = subprocess.run([sys.executable, str(EXAMPLES / script), emu.bootstrap_servers],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{script} failed:\n{proc.stdout}\n{proc.stderr[-3000:]}"
        assert "consumed 20 messages" in proc.stdout
        assert emu.describe_group("billing").state == "Empty"


def test_pytest_fixture_example():
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           str(EXAMPLES / "test_with_fixture.py")],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout
