"""The verdict rules against recorded event streams, in each client dialect.

``streams/rules/<rule>.stream`` holds two variants of one recording that differ in a line or
two: the ``pass`` variant must be judged clean, the ``fail`` variant must break exactly that rule
(or the rules its ``expect`` names). ``streams/runs/`` are whole runs in the dialects of Kafka's
Java VerifiableConsumer, librdkafka's kafkatest_verifiable_client and a client written from
Kafka's docstring alone: each must pass. Written by hand from the documented formats (see each
file's header); the format is ``kafka_emu/conformance/replay.py``'s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_emu.conformance import replay, verdicts
from kafka_emu.conformance.record import Tracker

STREAMS = Path(__file__).with_name("streams")
RULE_FILES = sorted((STREAMS / "rules").glob("*.stream"))
RUN_FILES = sorted((STREAMS / "runs").glob("*.stream"))


def rule_of(path: Path) -> str:
    return path.stem.split("--")[0]


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_the_pass_variant_of_each_rule_passes(path):
    assert replay.judge(replay.load(path, "pass")) == []


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_the_fail_variant_of_each_rule_breaks_that_rule(path):
    rec = replay.load(path, "fail")
    found = replay.judge(rec)
    expected = set(rec.params.get("expect", [rule_of(path)]))
    assert rule_of(path) in expected
    assert replay.rules(found) == expected, [str(v) for v in found]


def test_every_verdict_rule_has_a_recorded_stream():
    # "scenario" is a scenario's own expectation (a wait, an exit), not a rule over a stream
    covered = {rule_of(p) for p in RULE_FILES}
    assert set(verdicts.RULES) - {"scenario"} <= covered
    assert covered <= set(verdicts.RULES)


def test_the_recordings_cover_every_client_dialect():
    dialects = {line.split(":", 1)[1].split()[0] for p in RULE_FILES + RUN_FILES
                for line in p.read_text().splitlines() if line.startswith("# dialect:")}
    assert {"librdkafka", "java", "contract", "kafka-emu"} <= dialects


@pytest.mark.parametrize("path", RUN_FILES, ids=lambda p: p.stem)
def test_a_whole_run_in_each_dialect_passes(path):
    rec = replay.load(path)
    assert replay.judge(rec) == []


def test_librdkafka_ranges_are_read_as_it_means_them():
    """No per-partition count, ``minOffset: -1`` for partitions without new records, and its
    maxOffset repeating the highest offset ever read after a rewind: records 10..12, not 10..14
    (a range that long would make the next report, from 13, look out of order)."""
    rec = replay.load(STREAMS / "runs" / "librdkafka_group_consumption.stream")
    t = Tracker()
    t.feed(rec.log.snapshot())
    assert t.violations == []
    assert [(lo, hi, count) for lo, hi, count, node in t.consumed[("orders", 0)]] == [
        (0, 9, 10), (10, 14, 5), (10, 12, 3), (13, 19, 7)]
    assert t.total_consumed() == 45  # the sum of the reports' counts: 15 + 5 + 5 + 3 + 10 + 7


def test_a_broken_event_is_named_with_its_line():
    [v] = replay.judge(replay.load(STREAMS / "rules" / "contract.stream", "fail"))
    assert v.rule == "contract" and v.node == "c1"
    assert "records_consumed" in v.message and "not JSON" in v.message
    assert '"minOffset": 0,' in v.message  # the offending line, as printed
    violations = replay.judge(replay.load(STREAMS / "rules" / "contract--missing-field.stream",
                                          "fail"))
    assert ["offsets_committed: 'success' must be true or false, got None" in v.message
            for v in violations] == [True, False]
    assert "'partition' must be an integer, got '0'" in violations[1].message


def test_ownership_ends_when_the_emulator_saw_the_member_leave():
    """Issue 37: a consumer that sent LeaveGroup owns nothing from then on, however late it
    prints shutdown_complete; without the emulator's MemberRemoved the same stream overlaps."""
    path = STREAMS / "rules" / "overlapping-assignment.stream"
    passing, failing = replay.load(path, "pass"), replay.load(path, "fail")
    assert verdicts.departures(passing.server, group_id="g") == {"c2.1": [1764380001004.0]}
    [v] = replay.judge(failing)
    assert v.message == "orders-1 assigned to c1 while c2 still owned it (5 ms)"


def test_departure_times_are_wall_clock_across_advances_of_the_emulator_clock():
    """The kit expires sessions by moving the coordinator's clock forward; a removal's
    wall-clock time is its at_ms less every advance before it."""
    events = [
        {"seq": 1, "type": "MemberAdded", "group_id": "g", "member_id": "m1", "client_id": "c1.1",
         "at_ms": 1000},
        {"seq": 2, "type": "TimeAdvanced", "at_ms": 11500, "by_ms": 10000},
        {"seq": 3, "type": "MemberRemoved", "group_id": "g", "member_id": "m1",
         "reason": "session_expired", "pending": False, "at_ms": 11600},
        {"seq": 4, "type": "MemberAdded", "group_id": "g", "member_id": "m2", "client_id": "c2.1",
         "at_ms": 11700},
        {"seq": 5, "type": "MemberAdded", "group_id": "g", "member_id": "m3", "client_id": "c2.2",
         "replaces": "m2", "at_ms": 11800},  # a static successor replaces m2
        {"seq": 6, "type": "MemberRemoved", "group_id": "g", "member_id": "p1",
         "reason": "pending_expired", "pending": True, "at_ms": 11900},
        {"seq": 7, "type": "MemberRemoved", "group_id": "other", "member_id": "m3",
         "reason": "left", "pending": False, "at_ms": 12000},
    ]
    assert verdicts.departures(events, group_id="g") == {"c1.1": [1600.0], "c2.1": [1800.0]}


def test_a_failed_run_is_kept_as_a_recording_that_judges_the_same(tmp_path):
    """runner writes a failed scenario's events as a recording beside its client logs; read
    back, it gives the same verdict (the clients' lines kept as printed; the run below is
    judged with every duplicate counted, so the failed commit's redelivery is one)."""
    from types import SimpleNamespace

    from kafka_emu.conformance import profiles, runner

    for path in (STREAMS / "rules" / "overlapping-assignment.stream",
                 STREAMS / "runs" / "librdkafka_group_consumption.stream"):
        rec = replay.load(path, "fail")
        ends = {(t, int(p)): e for t, _, p in [k.rpartition("-") for k in
                                               rec.params.get("log_end", {})]
                for e in [rec.params["log_end"][f"{t}-{p}"]]}
        h = SimpleNamespace(scenario="x", group="g", log=rec.log, server_events=rec.server,
                            client=SimpleNamespace(name="c", profile=profiles.CONTRACT),
                            log_end=lambda ends=ends: ends)
        runner._dump_recording(h, tmp_path / "events.stream")
        again = replay.load(tmp_path / "events.stream")
        assert again.params == {"group": "g", "log_end": rec.params.get("log_end", {})}
        # the run's own ending policy (duplicates, commits) is the scenario's, not recorded
        rec.params = dict(again.params)
        assert [str(v) for v in replay.judge(again)] == [str(v) for v in replay.judge(rec)]
    assert "Created assignment" not in (tmp_path / "events.stream").read_text()  # not events
    assert '"_totcount": 35' in (tmp_path / "events.stream").read_text()  # lines as printed


def test_a_cooperative_listener_s_deltas_are_not_read_as_whole_assignments():
    """The same run read as an eager listener's (each assignment replacing the last) would
    leave c1 with nothing (and reading partition 0 without it); and its first generation,
    which withholds the moving partition, is not an invalid one (KIP-429)."""
    text = (STREAMS / "runs" / "java_cooperative.stream").read_text()
    eager = replay.parse(text.replace('"incremental": true', '"incremental": false'))
    assert replay.rules(replay.judge(eager)) == {"invalid-assignment",
                                                 "consumed-unassigned-partition"}
    assert replay.judge(replay.parse(text.replace("cooperative-sticky", "sticky"))) != []
