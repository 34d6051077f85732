"""`kafka-emu conformance --matrix SPEC`: reading SPEC, the columns it makes (both group
protocols where a version has them), and bad input as one line and exit 2."""

from __future__ import annotations

import pytest

from kafka_emu.cli import main
from kafka_emu.conformance import matrix
from kafka_emu.conformance.scenarios import CATALOGUE


def test_a_spec_names_clients_and_their_exact_versions():
    got = matrix.parse(" confluent-kafka==2.3.0, 2.6.1 ; kafka-python==3.0.12;")
    assert got == {"confluent-kafka": ("2.3.0", "2.6.1"), "kafka-python": ("3.0.12",)}


def test_the_default_matrix_has_four_versions_of_each_python_client_and_kafkajs():
    got = matrix.parse("default")
    assert set(got) == {"confluent-kafka", "kafka-python", "aiokafka", "kafkajs"}
    for client in ("confluent-kafka", "kafka-python", "aiokafka"):
        assert len(got[client]) >= 4
    assert got["kafkajs"]


def test_consumer_protocol_columns_only_where_the_version_has_kip_848():
    cols = matrix.columns(matrix.parse("confluent-kafka==2.3.0,2.10.1;aiokafka==0.14.0"))
    assert [c.name for c in cols] == ["confluent-kafka 2.3.0", "confluent-kafka 2.10.1",
                                      "confluent-kafka 2.10.1 (consumer)", "aiokafka 0.14.0"]
    only = matrix.columns(matrix.parse("confluent-kafka==2.3.0,2.10.1"), "consumer")
    assert [c.slug for c in only] == ["confluent-kafka-2.10.1-consumer"]


def test_a_version_without_kip_848_lacks_the_consumer_protocol_capability(monkeypatch):
    monkeypatch.setattr(matrix.envs, "python_env", lambda dist, version, log=None: "/py")
    old = matrix.client_for("confluent-kafka", "2.3.0")
    new = matrix.client_for("confluent-kafka", "2.16.1")
    assert "consumer_protocol" in old.unsupported and "consumer_protocol" not in new.unsupported
    assert old.consumer[0] == "/py" and old.library_version == "2.3.0"


def test_known_bugs_stay_with_the_version_their_evidence_came_from(monkeypatch):
    monkeypatch.setattr(matrix.envs, "python_env", lambda dist, version, log=None: "/py")
    assert matrix.client_for("aiokafka", "0.14.0").known_bugs
    assert not matrix.client_for("aiokafka", "0.10.0").known_bugs


@pytest.mark.parametrize("spec", ["", ";", "bogus", "kafka-python", "nope==1.0",
                                  "kafka-python==", "kafka-python==3.0.x",
                                  "kafka-python==3.0.12,3.0.12",
                                  "kafka-python==3.0.12;kafka-python==2.0.6",
                                  "kafka-python==3.0.12 aiokafka==0.14.0"])
def test_bad_specs_are_refused_naming_the_part(spec):
    with pytest.raises(matrix.SpecError):
        matrix.parse(spec)


@pytest.mark.parametrize("argv", [
    ["conformance", "--matrix", "bogus"],
    ["conformance", "--matrix", "kafka-python==latest"],
    ["conformance", "--matrix", "kafka-python==3.0.12", "--client", "aiokafka"],
    ["conformance", "--matrix", "kafka-python==3.0.12", "--scenario", "nope"],
    ["conformance", "--matrix", "kafka-python==3.0.12", "--group-protocol", "consumer"],
    ["conformance", "--matrix", "kafka-python==3.0.12", "--junit-xml", "x.xml"],
])
def test_bad_matrix_usage_is_one_line_and_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err


def test_an_uninstallable_version_is_a_column_of_skips_saying_why(tmp_path, monkeypatch):
    def refuse(dist, version, log=None):
        raise matrix.envs.EnvUnavailable(f"cannot install {dist}=={version}: no wheel")
    monkeypatch.setattr(matrix.envs, "python_env", refuse)
    scenarios = [CATALOGUE[n] for n in ("group_consumption", "valid_assignment")]
    cells = matrix.run({"aiokafka": ("0.1.0",)}, scenarios, tmp_path)
    assert [c["verdict"] for c in cells] == ["skip", "skip"]
    assert all("not installable" in c["reason"] and "no wheel" in c["reason"] for c in cells)
    assert (tmp_path / "matrix.jsonl").read_text().count("\n") == 2
    text = matrix.table(cells)
    assert "aiokafka 0.1.0: 0 pass, 0 fail, 2 skip" in text and "no wheel" in text


def test_the_catalogue_table_for_the_readme_comes_from_the_declarations(capsys):
    assert main(["conformance", "--list", "--markdown"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    assert len(rows) == 2 + len(CATALOGUE)
    for sc, row in zip(CATALOGUE.values(), rows[2:], strict=True):
        assert row.startswith(f"| `{sc.name}` |") and row.count(" | ") == 4
        assert " ".join(sc.kafka_test.split()).replace("|", "\\|") in row


def test_markdown_goes_with_list(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["conformance", "--markdown", "--client", "kafka-python"])
    assert exc.value.code == 2


def test_kafka_python_before_2_3_lacks_static_membership(monkeypatch):
    monkeypatch.setattr(matrix.envs, "python_env", lambda dist, version, log=None: "/py")
    assert "static" in matrix.client_for("kafka-python", "2.2.21").unsupported
    assert "group_instance_id" in matrix.client_for("kafka-python", "2.0.6").unsupported["static"]
    assert "static" not in matrix.client_for("kafka-python", "2.3.3").unsupported
