"""The HTTP control endpoint driven from Node (plain ``fetch``) next to kafkajs: the
language-neutral path of the control plane (issue 9). Scripts: ``node/control.mjs``."""

from __future__ import annotations

import json

import pytest

from kafka_emu.control.operations import all_operations

from .test_node_clients import NODE_DIR, run_node  # node_modules: tests/conftest.py

TOPICS = {"control-topic": 4}


@pytest.fixture
def emu(kafka_emu_factory, node_modules):  # noqa: F811
    return kafka_emu_factory({"group.initial.rebalance.delay.ms": 0}, topics=TOPICS,
                             control_port=0)


@pytest.fixture
def scenario(emu, monkeypatch):
    """Run a control.mjs scenario against ``emu`` and return its checked RESULT."""
    monkeypatch.setenv("KAFKA_EMU_CONTROL", emu.control_url)  # the script's child inherits it
    monkeypatch.setenv("KAFKA_EMU_CONTROL_TOKEN", emu.control_token)
    return lambda name: _run(name, emu)


def _run(name: str, emu) -> dict:
    proc = run_node(NODE_DIR / "control.mjs", name, emu.bootstrap_servers)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    detail = f"exit {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    assert lines, f"control.mjs {name}: no RESULT line; {detail}"
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["ok"] and proc.returncode == 0, f"{name} failed: {result.get('error')}\n{detail}"
    return result


def test_fetch_from_node_reads_the_document_and_runs_operations(emu, scenario):
    result = scenario("http")
    assert result["openapi"].startswith("3.1") and result["health"] == "up"
    assert set(all_operations()) <= set(result["operations"])
    assert result["created"]["partitions"] == 2
    assert ["from-node", 2] in result["topics"]
    for key, status in [("create_again", 409), ("malformed", 400), ("unknown_path", 404),
                        ("wrong_method", 405), ("bad_fault", 400), ("removed", 200),
                        ("removed_again", 404)]:
        answer = result[key]
        assert answer["status"] == status, (key, answer)
        assert answer["type"] == "application/json", (key, answer)
        if status != 200:
            assert answer["body"]["error"]["message"], (key, answer)
    assert "NoSuchApi" in result["bad_fault"]["body"]["error"]["message"]
    assert result["faults_listed"] == [result["fault"]["id"]]
    assert emu.faults() == []  # removed over HTTP, seen from Python


def test_kafkajs_rejoins_after_a_commit_fault_added_over_http(scenario):
    result = scenario("faults")
    assert result["fired"] == 1 and result["active"] is False
    assert any(after > before for before, after in zip(result["joins_before"],
                                                       result["joins_after"])), result
    assert result["consumed"] == 20


SESSION_TIMEOUT_MS = 45000  # control.mjs's session.timeout.ms


def test_kafkajs_member_killed_then_expired_over_http_long_before_its_session_ends(scenario):
    """One member of two (a child process) is SIGKILLed; one heartbeat later the test moves the
    emulator's time to the group's next session deadline over HTTP: exactly the dead member
    expires, and the survivor takes every partition -- without waiting out the 45 s."""
    result = scenario("session")
    assert result["doomed"] and result["survivor"] and result["doomed"] != result["survivor"]
    assert result["expired"] == [result["doomed"]], result
    # time jumped by most of a session (the dead member's deadline), not by nothing
    assert SESSION_TIMEOUT_MS / 2 < result["advanced_ms"] <= SESSION_TIMEOUT_MS, result
    # the survivor owned all four partitions before the session could have run out on its own
    assert result["took_ms"] < SESSION_TIMEOUT_MS, result
