"""A deliberately broken client fails the scenarios it should, for the reason it should; the
same program plugged in through the CLI's --consumer path (with librdkafka's --broker-list
spelling) makes the command exit 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafka_emu.conformance import runner
from kafka_emu.conformance.clients import external

BROKEN = Path(__file__).with_name("broken_client.py")


def broken(mode: str):
    return external(f"{sys.executable} {BROKEN} --break {mode} --consumer", name=f"broken-{mode}")


def rules(result) -> set[str]:
    return {v.rule for v in result.violations}


def test_a_client_committing_unprocessed_records_fails_with_loss():
    [result] = runner.run_all(runner.select(["group_consumption"]), broken("commit-ahead"))
    assert result.verdict == runner.FAIL
    # Either the kit saw the commit beyond the consumed position, or the records the next owner
    # skipped, or both (which depends on how far the consumers had read when the group moved).
    assert rules(result) & {"commit-ahead-of-position", "lost-records"}, result.reason
    assert "commit-ahead-of-position" in rules(result)


def test_a_client_ignoring_revocation_fails_the_assignment_checks():
    # the assignment never becomes valid: give up waiting after 8 s instead of 30
    [result] = runner.run_all(runner.select(["valid_assignment"]), broken("ignore-revocation"),
                              wait_s=8)
    assert result.verdict == runner.FAIL
    assert rules(result) & {"invalid-assignment", "overlapping-assignment"}, result.reason


@pytest.mark.parametrize("mode,scenario,exit_code", [
    ("commit-ahead", "consumer_bounce_clean_rolling", 1),
])
def test_the_cli_reports_a_broken_external_client(mode, scenario, exit_code, tmp_path):
    junit = tmp_path / "out.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_emu", "conformance", "--name", "broken",
         "--consumer", f"{sys.executable} {BROKEN} --break {mode} --consumer",
         "--bootstrap-flag", "broker-list", "--scenario", scenario, "--junit-xml", str(junit)],
        check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == exit_code, proc.stdout + proc.stderr
    assert f"FAIL  {scenario}" in proc.stdout
    assert "1 failed" in proc.stdout
    assert "<failure" in junit.read_text()
