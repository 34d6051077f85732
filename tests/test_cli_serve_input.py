"""``kafka-emu serve`` input Kafka would refuse is one line and exit 2, never a traceback
(issue 33, finding 6: ``--topic t:10001`` ended in a 40-line traceback with exit 1)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kafka_emu.log.catalogue import MAX_RECORDS_PER_USER_OP


def _serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafka_emu", "serve", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args, fragment", [
    (["--topic", f"t:{MAX_RECORDS_PER_USER_OP + 1}"], "at most 9999"),
    (["--topic", f"t:{MAX_RECORDS_PER_USER_OP}"], "at most 9999"),  # 1 + partitions records
    (["--topic", "t:99999999999999999999"], "at most 9999"),
    (["--topic", "t:2", "--topic", "t:3"], "'t' already exists"),  # refused while starting
    (["--topic", "__consumer_offsets:1"], "internal"),  # the control plane refuses it too
    (["--control-port", "0", "--control-token", "has space"], "control token"),
    (["--control-port", "0", "--control-token", ""], "control token"),
])
def test_serve_input_kafka_refuses_is_one_line_and_exit_2(args, fragment):
    result = _serve(*args)
    lines = result.stderr.splitlines()
    assert (result.returncode, len(lines)) == (2, 1), result.stderr[-3000:]
    assert fragment in lines[0] and "Traceback" not in result.stderr, lines[0]
