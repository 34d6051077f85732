"""Kafka's transactions system test (txn_scenarios.py) against the built-in copiers, over real
sockets: every scenario passes with the confluent-kafka copier (copiers SIGTERMed and SIGKILLed,
brokers of a three-broker cluster bounced, random aborts), three each with the aiokafka,
kafka-python and kafkajs copiers (their whole catalogues run with ``kafka-emu conformance
--transactions --client NAME``); a known client bug labels the failures it explains; a copier
that leaves its offsets out of its transactions fails; the CLI lists and refuses as the consumer
catalogue does.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from kafka_emu.cli import main
from kafka_emu.conformance import runner, txn_scenarios, txn_verdicts
from kafka_emu.conformance.harness import ScenarioFailed
from kafka_emu.conformance.txn_scenarios import COPIERS, TXN_CATALOGUE, run_txn_scenario

pytest.importorskip("confluent_kafka")

BROKEN = (sys.executable, str(Path(__file__).with_name("broken_copier.py")))


def check(result) -> None:
    """A stall explained by a known client bug (known_bugs.py, with its evidence) is an
    expected failure, not hidden: the reason names it. Anything else must pass."""
    if result.verdict == runner.FAIL and result.reason.startswith(f"known {result.client} bug"):
        pytest.xfail(result.reason)
    assert result.verdict == runner.PASS, result.reason


@pytest.mark.parametrize("name", list(TXN_CATALOGUE))
def test_the_confluent_copier_passes(name, tmp_path):
    check(run_txn_scenario(TXN_CATALOGUE[name], COPIERS["confluent-kafka"],
                           client="confluent-kafka", workdir=tmp_path))


@pytest.mark.parametrize("name", ["txn_hard_bounce_clients", "txn_hard_bounce_brokers",
                                  "txn_random_aborts"])
def test_the_aiokafka_copier_passes(name, tmp_path):
    pytest.importorskip("aiokafka")
    result = run_txn_scenario(TXN_CATALOGUE[name], COPIERS["aiokafka"], client="aiokafka",
                              workdir=tmp_path)
    assert result.verdict == runner.PASS, result.reason


# kafka-python's broker bounces are left out: they fail when its transactional request bug hits
# (known_bugs.py), which costs the whole wait; the whole catalogue runs from the CLI
@pytest.mark.parametrize("name", ["txn_hard_bounce_clients", "txn_hard_bounce_clients_group_id",
                                  "txn_random_aborts"])
def test_the_kafka_python_copier_passes(name, tmp_path):
    pytest.importorskip("kafka")
    check(run_txn_scenario(TXN_CATALOGUE[name], COPIERS["kafka-python"],
                           client="kafka-python", workdir=tmp_path))


@pytest.mark.parametrize("name", ["txn_hard_bounce_clients", "txn_clean_bounce_brokers",
                                  "txn_random_aborts"])
def test_the_kafkajs_copier_passes(name, tmp_path):
    if shutil.which("node") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI must provide Node.js for the kafkajs copier")
        pytest.skip("Node.js is not installed")
    _, argv, _ = txn_scenarios.copier_command("kafkajs", None)
    result = run_txn_scenario(TXN_CATALOGUE[name], argv, client="kafkajs", workdir=tmp_path)
    assert result.verdict == runner.PASS, result.reason


def test_a_known_copier_bug_labels_only_the_stall_it_explains(tmp_path, monkeypatch):
    # the verdict stays FAIL; the reason names the library's bug -- for its scenarios, and only
    # when the copier stalled (a lost or duplicated record is a plain failure)
    def stall(h):
        raise ScenarioFailed("timed out waiting for copier-0 to copy all its records")
    monkeypatch.setattr(txn_scenarios, "copy_transactionally", stall)
    bounce = run_txn_scenario(TXN_CATALOGUE["txn_hard_bounce_brokers"], BROKEN,
                              client="kafka-python", workdir=tmp_path)
    assert bounce.verdict == runner.FAIL
    assert bounce.reason.startswith("known kafka-python bug: kafka-python 3.0.12 drops")
    assert bounce.reason.endswith(")") and "timed out waiting for copier-0" in bounce.reason
    other = run_txn_scenario(TXN_CATALOGUE["txn_random_aborts"], BROKEN, client="kafka-python",
                             workdir=tmp_path)
    assert other.verdict == runner.FAIL and not other.reason.startswith("known")
    monkeypatch.setattr(txn_scenarios, "copy_transactionally", lambda h: [
        txn_verdicts.Violation("txn-lost", "1 record never copied")])
    lost = run_txn_scenario(TXN_CATALOGUE["txn_hard_bounce_brokers"], BROKEN,
                            client="confluent-kafka", workdir=tmp_path)
    assert lost.verdict == runner.FAIL and lost.reason.startswith("txn-lost")


def test_a_copier_without_offsets_in_its_transactions_fails(tmp_path):
    result = run_txn_scenario(TXN_CATALOGUE["txn_clean_bounce_clients"], BROKEN,
                              client="broken", workdir=tmp_path)
    assert result.verdict == runner.FAIL
    rules = {v.rule for v in result.violations}
    assert {"txn-duplicate", "copier-overcount"} <= rules, result.reason
    assert "txn-lost" not in rules
    # the failed run's recording is left for txn_verdicts.judge, the emulator's events in it
    rec = json.loads((tmp_path / "txn_clean_bounce_clients" / "recording.json").read_text())
    assert {e["type"] for e in rec["server"]} == {"TransactionBegun", "TransactionEnded"}
    assert {v.rule for v in txn_verdicts.judge(rec)} == rules


def test_a_bounce_after_the_copy_is_a_failure_not_a_pass(tmp_path, monkeypatch):
    # the copiers finish before any bounce: the scenario must say it tested nothing
    monkeypatch.setattr(txn_scenarios.TxnHarness, "bounce_brokers", lambda self: None)
    result = run_txn_scenario(TXN_CATALOGUE["txn_clean_bounce_brokers"],
                              COPIERS["confluent-kafka"], workdir=tmp_path)
    assert result.verdict == runner.FAIL
    assert {v.rule for v in result.violations} == {"txn-no-bounce"}


def test_cli_lists_the_transactions_catalogue(capsys):
    assert main(["conformance", "--transactions", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in TXN_CATALOGUE)
    assert "TransactionsTest.test_transactions" in out


def test_cli_prints_the_catalogue_as_a_markdown_table(capsys):
    assert main(["conformance", "--transactions", "--list", "--markdown"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("| scenario |") and len(lines) == 2 + len(TXN_CATALOGUE)
    assert all(f"| `{name}` |" in "\n".join(lines) for name in TXN_CATALOGUE)


def test_cli_refuses_unknown_scenarios_and_copiers(capsys):
    assert main(["conformance", "--transactions", "--scenario", "nope"]) == 2
    with pytest.raises(KeyError, match="no built-in copier 'nope'.*kafka-python, kafkajs"):
        txn_scenarios.copier_command("nope", None)


def test_cli_says_when_the_kafkajs_copier_has_no_node(capsys, monkeypatch):
    from kafka_emu.conformance.clients import node
    monkeypatch.setattr(node.shutil, "which", lambda name: None)
    assert main(["conformance", "--transactions", "--client", "kafkajs"]) == 2
    assert "`node` is not on PATH" in capsys.readouterr().err
