"""The one label for a failure a client's known bug explains (known_bugs.py): each bug labels
its scenarios' failures only as far as its evidence reaches -- a copier's stall, a share
consumer's dying words, never beside a lost or doubled record where it says so -- and the same
way on every path (consumer, share and transaction scenarios, a user's profile, a matrix
column)."""

from __future__ import annotations

import attrs

from kafka_emu.conformance import known_bugs, matrix, profiles, runner
from kafka_emu.conformance.clients import external
from kafka_emu.conformance.harness import ScenarioFailed
from kafka_emu.conformance.known_bugs import KnownBug, label, of
from kafka_emu.conformance.scenarios import CATALOGUE
from kafka_emu.conformance.txn_scenarios import TXN_CATALOGUE

EVERY_SCENARIO = [*CATALOGUE, *TXN_CATALOGUE]
SHARE = [name for name, sc in CATALOGUE.items() if sc.kind == "share"]
STALL = "timed out waiting for copier-0 to copy all its records (copier logs in /tmp/x)"
DIED = ("c2 exited (code -6) while waiting for 30 more records consumed; stderr: python: "
        "rdkafka_broker.c:5221: rd_kafka_broker_destroy_final: Assertion "
        "`!rkb->rkb_share_fetch_session.toppars_to_add' failed. (client logs in /tmp/x)")


def labels(bugs, client, reason, violations=()):
    """The scenarios whose failure with ``reason`` the bugs label."""
    return [name for name in EVERY_SCENARIO
            if label(bugs, client=client, scenario=name, reason=reason,
                     violations=violations) is not None]


def test_the_label_names_the_client_the_bug_and_what_broke():
    bug = KnownBug(scenario="broker_failure", bug="it forgets")
    assert label([bug], client="mine", scenario="broker_failure", reason="lost 3") == \
        "known mine bug: it forgets -- lost 3"
    assert label([bug], client="mine", scenario="broker_rolling_bounce", reason="lost 3") is None


def test_a_consumer_group_bug_labels_every_failure_of_its_scenarios_and_no_other():
    aiokafka = of("aiokafka")
    assert labels(aiokafka, "aiokafka", "overlapping-assignment: c1 and c2 own t-0") == [
        "fencing_static_consumer_stable", "fencing_static_consumer_all",
        "fault_coordinator_load_in_progress_on_offset_fetch"]
    reason = label(aiokafka, client="aiokafka", scenario="fencing_static_consumer_all",
                   reason="overlapping-assignment: c1 and c2", violations=["overlap"])
    assert reason is not None and reason.startswith(
        "known aiokafka bug: aiokafka 0.14 sends OffsetCommit v2/v3")
    assert labels(of("kafkajs"), "kafkajs", "rebalanced") == ["broker_rolling_bounce",
                                                              "broker_failure"]


def test_a_copier_bug_labels_only_the_stall_of_a_broker_bounce():
    bounces = ["txn_clean_bounce_brokers", "txn_hard_bounce_brokers",
               "txn_clean_bounce_brokers_ordered", "txn_hard_bounce_brokers_ordered"]
    for client in ("kafka-python", "confluent-kafka"):
        assert sorted(labels(of(client), client, STALL)) == sorted(bounces)
        # not a lost, duplicated or unexpected record, not a stall beside one
        assert labels(of(client), client, "txn-lost: 1 record never copied") == []
        assert labels(of(client), client, STALL, violations=["txn-lost"]) == []
    got = label(of("kafka-python"), client="kafka-python", scenario="txn_hard_bounce_brokers",
                reason=STALL)
    assert got == f"known kafka-python bug: {of('kafka-python')[0].bug} -- {STALL}"
    assert got.startswith("known kafka-python bug: kafka-python 3.0.12 drops")
    # aiokafka's copier has no known bug (its consumer's label only its consumer scenarios)
    assert not set(labels(of("aiokafka"), "aiokafka", STALL)) & set(TXN_CATALOGUE)


def test_a_share_bug_is_told_only_by_its_evidence_in_a_share_scenario():
    assert labels(of("confluent-kafka"), "confluent-kafka", DIED) == SHARE
    got = label(of("confluent-kafka"), client="confluent-kafka",
                scenario="share_broker_rolling_bounce", reason=DIED)
    assert got is not None and got.startswith("known confluent-kafka bug: librdkafka 2.16 ")
    assert "decommissioned" in got and got.endswith(DIED)
    # not for another client, not beside a lost record, not for another death
    assert labels(of("kafka-python"), "kafka-python", DIED) == []
    assert labels(of("confluent-kafka"), "confluent-kafka", DIED, violations=["lost"]) == []
    assert labels(of("confluent-kafka"), "confluent-kafka",
                  "c2 exited (code -6) while waiting; stderr: Assertion `x' failed.") == []


def test_a_matrix_column_keeps_a_bug_to_the_release_its_evidence_came_from(monkeypatch):
    assert of("aiokafka", "0.14.0") == of("aiokafka") and of("aiokafka", "0.10.0") == ()
    assert of("kafkajs", "2.1.0") == ()
    # the share consumer's and the copiers' bugs are not kept to a release
    assert of("confluent-kafka", "2.15.0") == of("confluent-kafka")
    monkeypatch.setattr(matrix.envs, "python_env", lambda dist, version, log=None: "/py")
    column = matrix.client_for("confluent-kafka", "2.16.1")
    assert labels(column.known_bugs, "confluent-kafka", DIED) == SHARE
    early = matrix.client_for("confluent-kafka", "2.6.1", group_protocol="consumer")
    got = label(early.known_bugs, client="confluent-kafka", scenario="group_consumption",
                reason="consumed-out-of-order", violations=["x"])
    assert got is not None and got.startswith(
        "known confluent-kafka bug: librdkafka 2.6.1 has the consumer protocol as early")
    assert labels(matrix.client_for("confluent-kafka", "2.16.1", group_protocol="consumer")
                  .known_bugs, "confluent-kafka", "consumed-out-of-order") == []


def test_a_profiles_known_bugs_label_its_scenarios_and_a_users_profile_extends_them():
    rdkafka = external("prog --consumer", profile=profiles.BUILT_IN["librdkafka"],
                       name="librdkafka")
    assert labels(rdkafka.known_bugs, "librdkafka", "exited -6") == [
        "fault_illegal_generation_on_heartbeat", "fault_unknown_member_id_on_heartbeat",
        "fault_coordinator_not_available_on_commit"]
    assert "assignment lost" in label(rdkafka.known_bugs, client="librdkafka",
                                      scenario="fault_illegal_generation_on_heartbeat",
                                      reason="exited -6")
    mine = profiles.from_dict({"extends": "librdkafka", "known_bugs": {"broker_failure": "x"}},
                              default_name="mine", where="test")
    spec = external("prog", profile=mine, name="mine")
    assert label(spec.known_bugs, client="mine", scenario="broker_failure", reason="lost") == \
        "known mine bug: x -- lost"
    assert "fault_unknown_member_id_on_heartbeat" in labels(spec.known_bugs, "mine", "-6")
    # the share scenarios run the kit's share program of the client's name: its bug comes along
    own = profiles.from_dict({"known_bugs": {"broker_failure": "x"}}, default_name="own",
                             where="test")
    named = external("prog", profile=own, name="confluent-kafka")
    assert sorted(labels(named.known_bugs, "confluent-kafka", DIED)) == sorted(
        ["broker_failure", *SHARE])
    assert known_bugs.from_profile({}) == ()


def _failing(name, message):
    """The catalogue's scenario ``name`` with its run failing at once with ``message``."""
    def run(h):
        raise ScenarioFailed(message)
    return attrs.evolve(CATALOGUE[name], run=run)


def test_the_runner_labels_a_share_and_a_consumer_scenario_through_the_clients_bugs(tmp_path):
    # a real emulator per scenario; the client never starts, the scenario fails as it would
    spec = external("false", profile=profiles.from_dict(
        {"known_bugs": {"group_consumption": "it stalls"}}, default_name="own", where="test"),
        name="confluent-kafka")
    died = runner.run_scenario(_failing("share_multiple_partitions", DIED.split(" (client")[0]),
                               spec, workdir=tmp_path)
    assert died.verdict == runner.FAIL
    assert died.reason.startswith("known confluent-kafka bug: librdkafka 2.16 (confluent-kafka")
    assert f"rd_kafka_broker_destroy_final: Assertion `!rkb->rkb_share_fetch_session." \
        f"toppars_to_add' failed. (client logs in {tmp_path}" in died.reason
    other = runner.run_scenario(_failing("share_multiple_partitions", "c2 exited (code 1)"),
                                spec, workdir=tmp_path)
    assert other.verdict == runner.FAIL and other.reason.startswith("c2 exited (code 1)")
    stuck = runner.run_scenario(_failing("group_consumption", "timed out waiting for c1"), spec,
                                workdir=tmp_path)
    assert stuck.verdict == runner.FAIL
    assert stuck.reason.startswith("known confluent-kafka bug: it stalls -- timed out waiting")
