"""The pytest fixtures as a project uses them: configured from pytest.ini and a marker, the
session emulator reset between tests, docstrings in `pytest --fixtures`, trio-native use, and
argument checks. Projects are written to a temporary directory and run by a real pytest."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap

import pytest

from kafka_emu.testing import make_config, run_in_thread
from kafka_emu.testing.wire import WireClient

INI = """
[pytest]
kafka_emu_config =
    group.initial.rebalance.delay.ms = 123
    num.partitions = 2
kafka_emu_topics =
    orders:3
"""

TESTS = '''
import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata


def test_ini_options_configure_the_fixture(kafka_emu):
    assert kafka_emu.config.coordinator.group_initial_rebalance_delay_ms == 123
    assert kafka_emu.config.topics == (("orders", 3),)


@pytest.mark.kafka_emu(settings={"num.partitions": 5}, topics={"audit": 1})
def test_marker_adds_to_the_ini_options(kafka_emu):
    assert kafka_emu.config.num_partitions == 5
    assert kafka_emu.config.coordinator.group_initial_rebalance_delay_ms == 123
    assert dict(kafka_emu.config.topics) == {"orders": 3, "audit": 1}


def test_factory_starts_from_the_ini_options(kafka_emu_factory):
    emu = kafka_emu_factory({"num.partitions": 7})
    assert (emu.config.num_partitions, emu.config.coordinator.group_initial_rebalance_delay_ms) == (7, 123)


def test_shared_first_leaves_state_behind(kafka_emu_shared):
    kafka_emu_shared.create_topic("scratch", 1)
    consumer = KafkaConsumer(bootstrap_servers=kafka_emu_shared.bootstrap_servers,
                             group_id="leftover", enable_auto_commit=False)
    consumer.assign([TopicPartition("orders", 0)])
    consumer.commit({TopicPartition("orders", 0): OffsetAndMetadata(0, "", -1)})
    consumer.close()
    assert kafka_emu_shared.describe_group("leftover").state == "Empty"


def test_shared_second_starts_clean(kafka_emu_shared, kafka_emu_session):
    assert kafka_emu_shared is kafka_emu_session
    assert kafka_emu_shared.describe_group("leftover").state == "Dead"
    names = sorted(t.name for t in kafka_emu_shared._call(lambda: kafka_emu_shared.broker.topics.all()))
    assert names == ["orders"]
'''


def run_pytest(project, *args):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          capture_output=True, text=True, cwd=project, timeout=120)


def test_ini_options_marker_factory_and_reset(tmp_path):
    (tmp_path / "pytest.ini").write_text(INI)
    (tmp_path / "test_project.py").write_text(TESTS)
    result = run_pytest(tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "5 passed" in result.stdout


@pytest.mark.parametrize("ini, fragment", [
    ("kafka_emu_config = novalue", "kafka_emu_config: expected KEY=VALUE, got 'novalue'"),
    ("kafka_emu_topics = orders", "kafka_emu_topics: expected NAME:PARTITIONS, got 'orders'"),
])
def test_bad_ini_lines_are_usage_errors(tmp_path, ini, fragment):
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{ini}\n")
    (tmp_path / "test_x.py").write_text("def test_x(kafka_emu):\n    pass\n")
    result = run_pytest(tmp_path)
    assert result.returncode != 0
    assert fragment in result.stdout + result.stderr


def test_fixture_docstrings_show_in_pytest_fixtures(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    out = run_pytest(tmp_path, "--fixtures").stdout
    for name, phrase in [("kafka_emu", "A fresh kafka-emu for this test"),
                         ("kafka_emu_session", "shared by every test of the session"),
                         ("kafka_emu_shared", "reset for this test"),
                         ("kafka_emu_factory", "starts emulators for this test"),
                         ("kafka_emu_trio", "inside the test's own trio loop")]:
        assert name in out and phrase in textwrap.dedent(out).replace("\n    ", " "), name


def test_list_groups_takes_one_state_as_a_string(kafka_emu):
    from kafka_emu.admin.connection import BrokerConnection
    from kafka_emu.protocol.messages.delete_groups import DeleteGroupsRequest  # noqa: F401

    from tests.broker.test_log_sink import join_and_sync
    with BrokerConnection(kafka_emu.host, kafka_emu.port) as conn:
        join_and_sync(conn, "g-stable", 30000)
        assert [g.group_id for g in kafka_emu.list_groups(states="Stable")] == ["g-stable"]
        assert [g.group_id for g in kafka_emu.list_groups(states=("stable",))] == ["g-stable"]
        assert kafka_emu.list_groups(states="Empty") == ()
    with pytest.raises(TypeError, match="states must be a string or an iterable"):
        kafka_emu.list_groups(states=5)
    with pytest.raises(TypeError, match="states must hold strings"):
        kafka_emu.list_groups(states=[1])


async def test_trio_native_fixture(kafka_emu_trio):
    await kafka_emu_trio.create_topic("t", 2)
    client = await WireClient.connect(kafka_emu_trio.host, kafka_emu_trio.port)
    await client.aclose()
    assert await kafka_emu_trio.list_groups(states="Stable") == ()
    assert await kafka_emu_trio.reset() == ()
    assert [t.name for t in kafka_emu_trio.broker.topics.all()] == []


async def test_thread_fixture_methods_work_inside_a_trio_test(kafka_emu):
    kafka_emu.create_topic("t", 1)
    assert kafka_emu.list_groups() == ()
    assert kafka_emu.describe_group("none").state == "Dead"


def test_reset_keeps_groups_with_members_and_recreates_configured_topics():
    from kafka_emu.admin.connection import BrokerConnection

    from tests.broker.test_log_sink import join_and_sync
    with run_in_thread(make_config(topics={"orders": 2})) as emu:
        emu.create_topic("scratch", 1)
        with BrokerConnection(emu.host, emu.port) as conn:
            join_and_sync(conn, "busy", 30000)
            assert emu.reset() == ("busy",)
        assert sorted(t.name for t in emu._call(lambda: emu.broker.topics.all())) == ["orders"]
        with socket.create_connection((emu.host, emu.port)):
            pass
