"""The transactions scenarios' verdict rules against recorded runs (txn_verdicts.py).

``streams/txn/pass--*.json`` must be judged clean (one is a real confluent-kafka run of
txn_hard_bounce_clients, 300 records, two lives per copier); each ``fail--*.json`` differs from
a passing recording in a line or two and must break exactly the rules its ``expect`` names.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_emu.conformance import txn_verdicts
from kafka_emu.conformance.record import Violation

STREAMS = Path(__file__).with_name("streams") / "txn"
FILES = sorted(STREAMS.glob("*.json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_there_are_recordings_of_both_kinds():
    assert any(p.stem.startswith("pass--") for p in FILES)
    assert any(p.stem.startswith("fail--") for p in FILES)


@pytest.mark.parametrize("path", [p for p in FILES if p.stem.startswith("pass--")],
                         ids=lambda p: p.stem)
def test_passing_recordings_pass(path):
    doc = _load(path)
    assert doc["expect"] == []
    assert txn_verdicts.judge(doc["recording"]) == []


@pytest.mark.parametrize("path", [p for p in FILES if p.stem.startswith("fail--")],
                         ids=lambda p: p.stem)
def test_failing_recordings_break_exactly_their_rules(path):
    doc = _load(path)
    found = txn_verdicts.judge(doc["recording"])
    assert doc["expect"], "a fail recording names the rules it breaks"
    assert {v.rule for v in found} == set(doc["expect"]), [str(v) for v in found]
    assert all(v.rule in txn_verdicts.RULES for v in found)


def test_the_real_recording_bounced_each_copier():
    rec = _load(STREAMS / "pass--recorded-hard-bounce-clients.json")["recording"]
    for copier, events in rec["copiers"].items():
        assert len({life for life, _ev in events}) >= 2, copier


def test_exactly_once_names_what_it_found():
    found = txn_verdicts.exactly_once(["1", "2", "3"], ["1", "1", "9"], who="reader")
    assert [v.rule for v in found] == ["txn-duplicate", "txn-lost", "txn-unexpected"]
    assert "2, 3" in found[1].message and "9" in found[2].message


def test_order_is_judged_only_with_check_order_and_nothing_else_broken():
    assert txn_verdicts.exactly_once(["1", "2"], ["2", "1"], who="r") == []
    assert [v.rule for v in txn_verdicts.exactly_once(["1", "2"], ["2", "1"], who="r",
                                                      check_order=True)] == ["txn-order"]
    # a lost record is the finding, not the order it shifted
    assert [v.rule for v in txn_verdicts.exactly_once(["1", "2"], ["2"], who="r",
                                                      check_order=True)] == ["txn-lost"]


def test_a_copier_that_printed_nothing_is_unfinished():
    assert txn_verdicts.copier_rules("copier-0", [], 10) == [
        Violation("copier-unfinished", "0 life/lives, none printed shutdown_complete with "
                  "remaining 0", node="copier-0")]
