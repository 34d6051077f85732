"""Client profiles: how each verifiable-client program is handed the kit's settings, how a
profile is detected or written by a user, and a missing capability skipping with its name."""

from __future__ import annotations

import json
import stat
import sys

import pytest

from kafka_emu.cli import main
from kafka_emu.conformance import contract, profiles, runner
from kafka_emu.conformance.clients import external
from kafka_emu.conformance.record import parse_line
from kafka_emu.conformance.scenarios import CATALOGUE, Scenario

KIT_PROPS = {"client.id": "c1.1", "heartbeat.interval.ms": 250, "group.instance.id": "g-c1"}


def test_librdkafka_gets_broker_list_and_everything_else_in_its_properties_file(tmp_path):
    p = profiles.load("librdkafka")
    argv = p.arguments("consumer", KIT_PROPS, tmp_path / "c1.1.properties")
    assert argv == ["--consumer.config", str(tmp_path / "c1.1.properties")]
    assert p.bootstrap_flag == "--broker-list"
    # the form librdkafka's read_conf_file takes: key=value, no spaces
    assert (tmp_path / "c1.1.properties").read_text() == \
        "client.id=c1.1\nheartbeat.interval.ms=250\ngroup.instance.id=g-c1\n"
    argv = p.arguments("producer", {"client.id": "p1.1", "acks": "all"}, tmp_path / "p.properties")
    assert argv == ["--producer.config", str(tmp_path / "p.properties")]
    assert "--acks" not in argv and "acks=all\n" in (tmp_path / "p.properties").read_text()


def test_kafkas_java_client_takes_the_instance_id_as_its_own_flag(tmp_path):
    argv = profiles.load("java").arguments("consumer", KIT_PROPS, tmp_path / "c.properties")
    assert argv == ["--group-instance-id", "g-c1", "--consumer.config",
                    str(tmp_path / "c.properties")]
    assert "group.instance.id" not in (tmp_path / "c.properties").read_text()


def test_a_user_profile_in_toml_routes_properties_and_names_what_the_client_lacks(tmp_path):
    f = tmp_path / "my-client.toml"
    f.write_text('summary = "a Go client"\nbootstrap_flag = "--brokers"\nproperties = "flag"\n'
                 'property_flag = "--set"\n[flags]\n"group.instance.id" = "--instance"\n'
                 '[lacks]\ncooperative = "eager listener only"\nstatic = "no KIP-345 yet"\n')
    p = profiles.load(str(f))
    assert (p.name, p.bootstrap_flag) == ("my-client", "--brokers")
    assert p.arguments("consumer", KIT_PROPS, tmp_path / "unused") == [
        "--instance", "g-c1", "--set", "client.id=c1.1", "--set", "heartbeat.interval.ms=250"]
    assert not (tmp_path / "unused").exists()
    assert external("go-client", profile=p).unsupported == {
        "cooperative": "eager listener only", "static": "no KIP-345 yet"}


def test_a_user_profile_in_json_extends_a_built_in_one(tmp_path):
    f = tmp_path / "rdkafka-fork.json"
    f.write_text(json.dumps({"extends": "librdkafka", "name": "fork",
                             "lacks": {"static": "built without KIP-345"}}))
    p = profiles.load(str(f))
    assert p.bootstrap_flag == "--broker-list"
    assert set(p.lacks) == {"consumer_protocol", "cooperative", "static"}


@pytest.mark.parametrize("text,message", [
    ('bootstrap = "--brokers"\n', "unknown key(s) bootstrap"),
    ('[lacks]\ntransactions = "no"\n', "unknown capabilities transactions"),
    ('properties = "env"\n', 'properties must be "file" or "flag"'),
    ('bootstrap_flag = "brokers"\n', "must be a flag"),
    ('extends = "go"\n', "extends 'go'"),
    ('detect = "x"\n', "detect must be a list"),
    ("name = \n", "profile "),  # not TOML
])
def test_a_bad_user_profile_is_one_line_and_exit_2(tmp_path, capsys, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(profiles.ProfileError, match=message.replace("(", r"\(").replace(
            ")", r"\)")):
        profiles.load(str(f))
    with pytest.raises(SystemExit) as exc:
        main(["conformance", "--consumer", "x", "--profile", str(f), "--scenario",
              "valid_assignment"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message.split("(")[0].strip() in err


def test_an_unknown_profile_name_lists_the_known_ones():
    with pytest.raises(profiles.ProfileError, match="java, librdkafka, kafka-emu"):
        profiles.load("rust")


def _program(tmp_path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_profiles_are_detected_from_what_help_prints(tmp_path):
    rdkafka = _program(tmp_path, "kafkatest_verifiable_client",
                       'print("10:13:20.101: argument: --help ")\n'
                       'print("10:13:20.101: librdkafka version 2.3.0 (0x20300ff)", '
                       'file=sys.stderr)\nsys.exit(1)')
    java = _program(tmp_path, "verifiable-consumer.sh",
                    'print("usage: verifiable-consumer [-h] --topic TOPIC [--group-protocol '
                    'GROUP_PROTOCOL]")')
    old = _program(tmp_path, "old-client", 'print("flags: --topic --broker-list --group-id")')
    other = _program(tmp_path, "other-client", 'print("usage: other --bootstrap-server B")')
    assert profiles.detect([rdkafka])[0].name == "librdkafka"
    assert profiles.detect([java])[0].name == "java"
    guessed, why = profiles.detect([old])
    assert (guessed.name, guessed.bootstrap_flag) == ("contract", "--broker-list")
    assert "--broker-list only" in why
    assert profiles.detect([other])[0] == profiles.CONTRACT
    assert profiles.detect([str(tmp_path / "missing")])[0] == profiles.CONTRACT


def test_a_program_that_ignores_help_and_runs_on_is_stopped_and_taken_for_the_contract(
        tmp_path, monkeypatch):
    monkeypatch.setattr(profiles, "DETECT_TIMEOUT_S", 0.5)
    forever = _program(tmp_path, "forever", 'print("consuming", flush=True)\ntime.sleep(60)')
    assert profiles.detect([forever])[0] == profiles.CONTRACT


def test_the_kit_s_settings_reach_the_built_in_clients_through_the_properties_file(tmp_path):
    conf = tmp_path / "c.properties"
    conf.write_text("client.id=c1.1\ngroup.instance.id=g-c1\nenable.auto.commit=true\n")
    _, args = contract.parse(["--consumer", "--topic", "t", "--group-id", "g",
                              "--bootstrap-server", "h:1", "--consumer.config", str(conf)], "x")
    assert args.group_instance_id == "g-c1" and args.enable_autocommit
    assert args.properties == {"client.id": "c1.1"}  # lifted, not passed on twice
    conf.write_text("acks=all\n")
    _, args = contract.parse(["--producer", "--topic", "t", "--bootstrap-server", "h:1",
                              "--producer.config", str(conf)], "x")
    assert args.acks == -1 and args.properties == {}
    _, args = contract.parse(["--producer", "--topic", "t", "--bootstrap-server", "h:1",
                              "--producer.config", str(conf), "--acks", "1"], "x")
    assert args.acks == 1  # a flag given as well wins


def test_a_scenario_needing_what_the_profile_lacks_is_skipped_naming_it():
    client = external("kafkatest_verifiable_client --consumer",
                      profile=profiles.load("librdkafka"), name="librdkafka")
    cooperative = Scenario(name="cooperative_bounce", summary="", kafka_test="",
                           run=lambda h: pytest.fail("must not run"),
                           needs=frozenset({"cooperative"}))
    result = runner.run_scenario(cooperative, client)
    assert result.verdict == runner.SKIP
    assert result.reason.startswith("needs cooperative rebalancing (an incremental rebalance "
                                    "listener), which librdkafka lacks: ")
    assert "eager-only" in result.reason
    # librdkafka's client takes group.instance.id from its properties file: static runs
    assert "static" in CATALOGUE["static_consumer_bounce_rolling"].needs
    assert "static" not in client.unsupported


@pytest.mark.parametrize("line,expected", [
    ("10:13:20.101: argument: --topic orders", None),
    ("Created assignment", None),
    ('{"status": "connected"}', None),
    ("{ not json at all", None),
    ('{ "name": "shutdown_complete" }', {"name": "shutdown_complete"}),
    ('{ "name": "partitions_revoked", "partitions": [ {  "topic": "t",',
     "kit_bad_line"),
])
def test_stdout_lines_are_events_noise_or_broken_events(line, expected):
    event = parse_line(line)
    if expected == "kit_bad_line":
        assert event["name"] == "kit_bad_line" and event["event"] == "partitions_revoked"
    else:
        assert event == expected


def test_built_in_clients_without_cooperative_rebalancing_skip_its_scenario():
    from kafka_emu.conformance.clients import UNSUPPORTED, ClientSpec

    sc = CATALOGUE["cooperative_valid_assignment"]
    assert sc.needs == {"cooperative"}
    for name in ("kafka-python", "aiokafka", "kafkajs"):
        client = ClientSpec(name=name, consumer=("false",), unsupported=UNSUPPORTED[name])
        result = runner.run_scenario(sc, client)
        assert result.verdict == runner.SKIP
        assert result.reason.startswith(f"needs cooperative rebalancing (an incremental "
                                        f"rebalance listener), which {name} lacks: ")
        assert result.reason.endswith(UNSUPPORTED[name]["cooperative"])
