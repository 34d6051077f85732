"""The HTTP control endpoint driven from Node (plain ``fetch``) next to kafkajs: the
language-neutral path of the control plane (issue 9). Scripts: ``node/control.mjs``."""

from __future__ import annotations

import json

import pytest

from kafka_emu.control.operations import all_operations

from .test_node_clients import NODE_DIR, node_modules, run_node  # noqa: F401 -- a fixture

TOPICS = {"control-topic": 4}


@pytest.fixture
def emu(kafka_emu_factory, node_modules):  # noqa: F811
    return kafka_emu_factory({"group.initial.rebalance.delay.ms": 0}, topics=TOPICS,
                             control_port=0)


@pytest.fixture
def scenario(emu, monkeypatch):
    """Run a control.mjs scenario against ``emu`` and return its checked RESULT."""
    monkeypatch.setenv("KAFKA_EMU_CONTROL", emu.control_url)  # the script's child inherits it
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
