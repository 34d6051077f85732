"""The client contract's shared pieces, the built-in client registry and `kafka-emu
conformance` as a user runs it (a real subprocess for the end-to-end cases)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import jsonschema
import pytest

from kafka_emu.cli import main
from kafka_emu.conformance import contract
from kafka_emu.conformance.clients import ClientUnavailable, built_in, node
from kafka_emu.conformance.scenarios import CATALOGUE
from kafka_emu.trace import schema


def test_assignor_names_accept_java_class_names_and_short_names():
    assert contract.assignor_names(None) == ["range"]
    assert contract.assignor_names("org.apache.kafka.clients.consumer.RoundRobinAssignor,"
                                   "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
                                   ) == ["roundrobin", "cooperative-sticky"]
    assert contract.assignor_names("Range") == ["range"]


def test_properties_files_are_read_like_java(tmp_path):
    f = tmp_path / "c.properties"
    f.write_text("# comment\n! another\nclient.id = c1.1\nheartbeat.interval.ms=250\n"
                 "a: b\n\nnot a setting\n")
    assert contract.read_properties(str(f)) == {"client.id": "c1.1",
                                                "heartbeat.interval.ms": "250", "a": "b"}


def test_the_mode_and_either_bootstrap_spelling_parse():
    mode, args = contract.parse(["--topic", "t", "--broker-list", "h:1", "--group-id", "g",
                                 "--consumer", "--enable-autocommit"], "x")
    assert mode == "consumer" and args.bootstrap == "h:1" and args.enable_autocommit
    assert args.reset_policy == "earliest" and args.session_timeout == 30000
    mode, args = contract.parse(["--producer", "--topic", "t", "--bootstrap-server", "h:2",
                                 "--max-messages", "5"], "x")
    assert mode == "producer" and args.bootstrap == "h:2" and args.acks == -1


def test_max_messages_trims_a_poll_as_kafka_does():
    batches = {("t", 0): [0, 1, 2], ("t", 1): [5, 6]}
    assert contract.limit(batches, 0, -1) == batches
    assert contract.limit(batches, 1, 5) == {("t", 0): [0, 1, 2], ("t", 1): [5]}


def test_events_are_one_flushed_json_line_each():
    out = io.StringIO()
    ev = contract.Events(out)
    ev.records_consumed({("t", 0): [3, 4, 5]})
    ev.offsets_committed({("t", 0): 6}, partition_errors={("t", 0): "REBALANCE_IN_PROGRESS"})
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["name"] == "records_consumed" and first["count"] == 3
    assert first["partitions"] == [{"topic": "t", "partition": 0, "count": 3, "minOffset": 3,
                                    "maxOffset": 5}]
    assert second["success"] is False and second["offsets"][0]["error"] == \
        "REBALANCE_IN_PROGRESS" and isinstance(second["timestamp"], int)


def test_kafkajs_says_plainly_when_node_is_missing(monkeypatch):
    monkeypatch.setattr(node.shutil, "which", lambda _name: None)
    with pytest.raises(ClientUnavailable, match="needs Node.js: `node` is not on PATH"):
        built_in("kafkajs")


def test_a_built_in_client_whose_library_is_missing_is_one_line_and_exit_2(monkeypatch, capsys):
    from kafka_emu.conformance import clients

    def missing():
        raise ClientUnavailable("the aiokafka client needs the aiokafka package: pip install "
                                "aiokafka")
    monkeypatch.setitem(clients.BUILT_IN, "aiokafka", missing)
    assert main(["conformance", "--client", "aiokafka", "--scenario", "valid_assignment"]) == 2
    assert capsys.readouterr().err.strip().endswith("pip install aiokafka")


@pytest.mark.parametrize("argv", [
    ["conformance"],
    ["conformance", "--client", "confluent-kafka", "--scenario", "nope"],
    ["conformance", "--client", "nope"],
    ["conformance", "--producer", "x"],
    ["conformance", "--consumer", "x", "--bootstrap-flag", "servers"],
])
def test_bad_usage_is_one_line_and_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err


def test_list_shows_every_scenario_with_its_kafka_test(capsys):
    assert main(["conformance", "--list"]) == 0
    out = capsys.readouterr().out
    for sc in CATALOGUE.values():
        assert sc.name in out and sc.kafka_test in out


def test_an_external_client_plugs_in_and_traces_carry_the_verdict(tmp_path):
    """The built-in confluent-kafka program given as an external command, addressed with
    librdkafka's --broker-list spelling; the scenario's run is traced and its verdict
    recorded beside it."""
    consumer = f"{sys.executable} -m kafka_emu.conformance.clients.confluent_kafka --consumer"
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_emu", "conformance", "--consumer", consumer,
         "--bootstrap-flag", "broker-list", "--name", "ext", "--scenario", "valid_assignment",
         "--trace-dir", str(tmp_path),
         "--junit-xml", str(tmp_path / "j.xml")],
        check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS  valid_assignment" in proc.stdout
    assert "1 passed, 0 failed, 0 skipped" in proc.stdout
    traces = sorted(tmp_path.glob("date=*/run=*.jsonl"))
    records = [json.loads(line) for t in traces for line in t.read_text().splitlines()]
    validator = jsonschema.Draft202012Validator(json.loads(schema.SCHEMA_FILE.read_text()))
    for record in records:  # every line, the verdict too, is valid against the trace schema
        validator.validate(record)
    starts = [r for r in records if r["kind"] == "run_start"]
    # the scenario's own run (its events) and the verdict's run, both labelled
    assert len(traces) == 2 and all(r["labels"]["scenario"] == "valid_assignment" and
                                    r["labels"]["client"] == "ext" for r in starts)
    assert any(r["kind"] == "request_handled" for r in records)
    [verdict] = [r for r in records if r["kind"] == "scenario_verdict"]
    assert verdict["verdict"] == "pass" and verdict["scenario"] == "valid_assignment"
    assert verdict["client"] == "ext" and verdict["seconds"] > 0
    assert (tmp_path / "client-logs" / "ext" / "valid_assignment").is_dir()
    assert 'name="valid_assignment"' in (tmp_path / "j.xml").read_text()
