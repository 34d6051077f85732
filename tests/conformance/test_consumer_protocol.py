"""`kafka-emu conformance --group-protocol consumer`: the option, which scenarios run or skip on
each protocol and why, the consumer protocol's server-side rules on hand-made timelines, and two
live scenarios with confluent-kafka on the consumer protocol (KIP-848)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kafka_emu.cli import main
from kafka_emu.conformance import contract, runner
from kafka_emu.conformance.clients import ClientSpec, built_in
from kafka_emu.conformance.profiles import BUILT_IN as PROFILES
from kafka_emu.conformance.scenarios import CATALOGUE
from kafka_emu.errors import ErrorCode

from .test_verdicts import PARTS, T, Timeline

# -- the contract: --group-protocol / --group-remote-assignor, as Kafka's VerifiableConsumer ----

BASE = ["--consumer", "--topic", "t", "--bootstrap-server", "h:1", "--group-id", "g"]


def test_a_client_speaking_the_consumer_protocol_takes_the_flags():
    _, args = contract.parse([*BASE, "--group-protocol", "consumer", "--group-remote-assignor",
                              "range"], "x", group_protocols=("classic", "consumer"))
    assert (args.group_protocol, args.group_remote_assignor) == ("consumer", "range")
    _, args = contract.parse(BASE, "x", group_protocols=("classic", "consumer"))
    assert args.group_protocol == "classic" and args.group_remote_assignor is None


def test_a_classic_only_client_refuses_the_consumer_protocol_instead_of_running_classic(capsys):
    with pytest.raises(SystemExit) as exc:
        contract.parse([*BASE, "--group-protocol", "consumer"], "x")
    assert exc.value.code == 2
    assert "this client speaks only classic" in capsys.readouterr().err


def test_the_group_protocol_may_come_in_the_properties_file_and_a_flag_wins(tmp_path):
    props = tmp_path / "c.properties"
    props.write_text("group.protocol=consumer\ngroup.remote.assignor=uniform\n")
    both = ("classic", "consumer")
    _, args = contract.parse([*BASE, "--consumer.config", str(props)], "x", group_protocols=both)
    assert (args.group_protocol, args.group_remote_assignor) == ("consumer", "uniform")
    assert "group.protocol" not in args.properties  # lifted, not passed on a second time
    _, args = contract.parse([*BASE, "--consumer.config", str(props), "--group-protocol",
                              "classic"], "x", group_protocols=both)
    assert args.group_protocol == "classic"


def test_javas_profile_passes_the_protocol_as_its_flags_the_contract_in_the_file(tmp_path):
    props = {"group.protocol": "consumer", "group.remote.assignor": "range", "client.id": "c"}
    argv = PROFILES["java"].arguments("consumer", props, tmp_path / "j.properties")
    assert argv[:4] == ["--group-protocol", "consumer", "--group-remote-assignor", "range"]
    assert (tmp_path / "j.properties").read_text() == "client.id=c\n"
    PROFILES["contract"].arguments("consumer", props, tmp_path / "c.properties")
    assert "group.protocol=consumer\n" in (tmp_path / "c.properties").read_text()


# -- which scenarios run on which protocol ----------------------------------------------------

CLIENT = ClientSpec(name="both", consumer=("x",))
CLASSIC_ONLY_CLIENT = ClientSpec(name="old", consumer=("x",), unsupported={
    "consumer_protocol": "old has no consumer group protocol"})


@pytest.mark.parametrize("name,why", [
    ("cooperative_valid_assignment", "the broker assigns on the consumer protocol"),
    ("static_consumer_bounce_rolling", "with_eager_assignment"),
    ("dynamic_consumer_bounce_all", "eager rebalance"),
    ("fault_delayed_sync_group", "no SyncGroup"),
])
def test_classic_only_scenarios_are_skipped_on_the_consumer_protocol_naming_why(name, why):
    sc = CATALOGUE[name]
    assert runner.skip_reason(sc, CLIENT, "classic") is None
    reason = runner.skip_reason(sc, CLIENT, "consumer")
    assert reason.startswith("not on the consumer protocol: ") and why in reason


def test_the_remote_assignor_scenario_is_skipped_on_the_classic_protocol():
    sc = CATALOGUE["remote_range_valid_assignment"]
    assert "group_remote_assignor with group_protocol=consumer only" in \
        runner.skip_reason(sc, CLIENT, "classic")
    assert runner.skip_reason(sc, CLIENT, "consumer") is None


def test_kafkas_consumer_protocol_matrix_runs_here():
    """Every test Kafka's consumer_test.py runs with group_protocol=consumer has a scenario that
    runs on it (its classic-only ones are the eager static bounce and assignment_strategy)."""
    runs = {sc.kafka_test.split("(")[0] for sc in CATALOGUE.values()
            if runner.skip_reason(sc, CLIENT, "consumer") is None}
    for test in ("OffsetValidationTest.test_broker_rolling_bounce",
                 "OffsetValidationTest.test_consumer_bounce",
                 "OffsetValidationTest.test_static_consumer_persisted_after_rejoin",
                 "OffsetValidationTest.test_fencing_static_consumer",
                 "OffsetValidationTest.test_consumer_failure",
                 "OffsetValidationTest.test_broker_failure",
                 "OffsetValidationTest.test_group_consumption",
                 "AssignmentValidationTest.test_valid_assignment"):
        assert any(r.startswith(test) for r in runs), test


def test_a_client_without_the_consumer_protocol_skips_every_scenario_naming_it():
    for sc in CATALOGUE.values():
        reason = runner.skip_reason(sc, CLASSIC_ONLY_CLIENT, "consumer")
        assert reason is not None
        assert sc.not_on.get("consumer") or "old has no consumer group protocol" in reason
    assert runner.skip_reason(CATALOGUE["group_consumption"], CLASSIC_ONLY_CLIENT) is None


@pytest.mark.parametrize("client", ["kafka-python", "aiokafka"])
def test_the_built_in_python_clients_without_kip_848_say_so(client):
    assert "KIP-848" in built_in(client).unsupported["consumer_protocol"]
    assert "consumer_protocol" not in built_in("confluent-kafka").unsupported


def test_a_client_without_the_consumer_protocol_is_refused_in_one_line(capsys):
    assert main(["conformance", "--client", "kafka-python", "--group-protocol", "consumer"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("kafka-emu conformance: error: kafka-python cannot run on the consumer "
                   "protocol: kafka-python 3 has no consumer group protocol (no "
                   "ConsumerGroupHeartbeat, KIP-848)")


def test_the_remote_assignor_goes_with_the_consumer_protocol_only(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["conformance", "--client", "confluent-kafka", "--group-remote-assignor", "range"])
    assert exc.value.code == 2
    assert "--group-remote-assignor goes with --group-protocol consumer" in \
        capsys.readouterr().err


def test_list_marks_what_is_skipped_on_the_protocol_asked_for(capsys):
    assert main(["conformance", "--list", "--group-protocol", "consumer"]) == 0
    out = capsys.readouterr().out
    assert "[skipped on consumer: the consumer protocol has no SyncGroup" in out
    assert main(["conformance", "--list"]) == 0
    assert "skipped on classic: group.remote.assignor" in capsys.readouterr().out


# -- the consumer protocol's server-side rules (no generations: epochs and reconciliation) ----

def _reconciled(tl: Timeline, member: str, epoch: int, assigned, pending=()):
    return tl.add("MemberReconciled", member_id=member, member_epoch=epoch, state="stable",
                  assigned=[[T, list(assigned)]] if assigned else [],
                  pending_revocation=[[T, list(pending)]] if pending else [])


def test_a_partition_assigned_before_its_owner_revoked_it_is_caught():
    tl = _reconciled(Timeline(), "m1", 1, [0, 1])
    _reconciled(tl, "m1", 1, [0], pending=[1])  # m1 still owns 1 until it revokes it
    _reconciled(tl, "m2", 2, [1])
    assert tl.rules(partitions=PARTS) == {"assigned-before-revoked"}


def test_a_partition_handed_over_after_the_revocation_or_the_owners_leave_passes():
    tl = _reconciled(Timeline(), "m1", 1, [0, 1])
    _reconciled(tl, "m1", 1, [0], pending=[1])
    _reconciled(tl, "m1", 2, [0])
    _reconciled(tl, "m2", 2, [1])
    tl.add("MemberRemoved", member_id="m1", reason="left_heartbeat")
    _reconciled(tl, "m2", 3, [0, 1])
    assert tl.rules(partitions=PARTS) == set()


def test_a_target_assignment_overlapping_or_leaving_a_partition_out_is_caught():
    tl = Timeline().add("TargetAssignmentComputed", assignment_epoch=4,
                        changed=[["m1", [[T, [0]]]], ["m2", [[T, [0]]]]])
    found = {v.message for v in runner.verdicts.server_rules(tl.events, group_id="g",
                                                             partitions=PARTS)}
    assert {"target assignment epoch 4: orders-0 assigned to members m1 and m2",
            "target assignment epoch 4: [orders-1] assigned to no member"} <= found


def test_a_target_is_the_epochs_changes_on_the_last_and_a_static_successor_inherits():
    tl = Timeline().add("TargetAssignmentComputed", assignment_epoch=1,
                        changed=[["m1", [[T, [0]]]], ["m2", [[T, [1]]]]])
    # a static member restarted: its successor takes its target unchanged (not in `changed`)
    tl.add("MemberRemoved", member_id="m2", reason="replaced")
    tl.add("MemberAdded", member_id="m3", replaces="m2", client_id="c2.2")
    tl.add("TargetAssignmentComputed", assignment_epoch=2, changed=[["m1", [[T, [0]]]]])
    assert tl.rules(partitions=PARTS) == set()


def test_a_commit_after_fenced_member_epoch_before_the_rejoining_heartbeat_is_caught():
    tl = Timeline().request("ConsumerGroupHeartbeat", "m1", error=ErrorCode.FENCED_MEMBER_EPOCH,
                            generation=None, at=100)
    tl.request("OffsetCommit", "m1", generation=3, at=200)
    assert tl.rules() == {"stale-generation-after-told"}


def test_a_commit_after_the_rejoining_heartbeat_passes():
    tl = Timeline().add("FaultFired", member_id="m1", error_code=ErrorCode.UNKNOWN_MEMBER_ID,
                        at_ms=100)
    tl.request("ConsumerGroupHeartbeat", "m1", generation=None, at=150)
    tl.request("OffsetCommit", "m1", generation=3, at=200)
    assert tl.rules() == set()


# -- live, with confluent-kafka on group.protocol=consumer ------------------------------------

def test_fenced_member_epoch_on_heartbeat_is_survived_on_the_consumer_protocol():
    """fault_illegal_generation_on_heartbeat's consumer-protocol form: a ConsumerGroupHeartbeat
    answered FENCED_MEMBER_EPOCH; the member rejoins at epoch 0 before it commits again, and the
    epoch-based server rules judge the run."""
    result = runner.run_scenario(CATALOGUE["fault_illegal_generation_on_heartbeat"],
                                 built_in("confluent-kafka"), group_protocol="consumer")
    assert result.verdict == runner.PASS, result.reason


def test_an_external_contract_client_gets_the_protocol_in_its_properties_file(tmp_path):
    """`kafka-emu conformance --group-protocol consumer` as a user runs it, against the
    confluent-kafka program given as an external command under the documented contract: the
    consumer protocol reaches it in its --consumer.config file, and the broker's assignor
    (checked by the scenario) proves the client used it."""
    consumer = f"{sys.executable} -m kafka_emu.conformance.clients.confluent_kafka --consumer"
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_emu", "conformance", "--consumer", consumer, "--profile",
         "contract", "--name", "ext", "--group-protocol", "consumer", "--scenario",
         "valid_assignment", "--trace-dir", str(tmp_path)],
        check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 scenario(s), consumer protocol" in proc.stdout
    assert "PASS  valid_assignment" in proc.stdout
    logs = tmp_path / "client-logs" / "ext" / "valid_assignment"
    props = (logs / "c1.1.properties").read_text()
    assert "group.protocol=consumer\n" in props and "group.remote.assignor=uniform\n" in props
    assert "heartbeat.interval.ms" not in props  # the broker's on the consumer protocol
