"""The kit against a program that takes flags and prints events as librdkafka's
kafkatest_verifiable_client does (``rdkafka_like_client.py``), live: the profile is detected,
the producer gets acks=all through its properties file, and records_consumed without
per-partition counts is read (issue 37: 1 scenario passed, 25 failed with ``KeyError('count')``
and 0 acknowledgements)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RDKAFKA_LIKE = f"{sys.executable} {Path(__file__).with_name('rdkafka_like_client.py')}"


def test_it_refuses_the_flags_the_kit_used_to_pass():
    proc = subprocess.run([*RDKAFKA_LIKE.split(), "--producer", "--topic", "t", "--broker-list",
                           "127.0.0.1:1", "--acks", "-1"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 1
    assert "Unknown option or missing argument to --acks" in proc.stderr
    assert "argument: --topic t" in proc.stdout  # its arguments, on stdout


def test_a_librdkafka_style_client_passes_produce_consume_validate(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_emu", "conformance", "--name", "rdkafka-like",
         "--consumer", f"{RDKAFKA_LIKE} --consumer", "--producer", f"{RDKAFKA_LIKE} --producer",
         "--scenario", "produce_consume_validate"],
        check=False, capture_output=True, text=True, timeout=300)
    assert "profile librdkafka (detected: its --help output says 'librdkafka version'): " \
           "bootstrap --broker-list; lacks consumer_protocol, cooperative" in proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS  produce_consume_validate" in proc.stdout


def test_a_client_refusing_a_flag_fails_naming_the_flag_and_the_command_line():
    """Given the wrong profile (the contract's --bootstrap-server), the program exits before
    its first event; the failure quotes the argv and the program's own complaint."""
    from kafka_emu.conformance import profiles, runner
    from kafka_emu.conformance.clients import external

    client = external(f"{RDKAFKA_LIKE} --consumer", profile=profiles.CONTRACT, name="wrong")
    [result] = runner.run_all(runner.select(["valid_assignment"]), client)
    assert result.verdict == runner.FAIL
    assert "c1 exited (code 1) before printing any event" in result.reason
    assert "(profile contract)? argv: " in result.reason
    assert "--bootstrap-server 127.0.0.1:" in result.reason
    assert "Unknown option --bootstrap-server" in result.reason
