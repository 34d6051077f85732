"""The admin commands against the real emulator (in a thread), over real sockets."""

import pytest

from kafka_emu.admin import AdminClient, BrokerConnection
from kafka_emu.admin.model import api_rows
from kafka_emu.cli import main
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol.messages.consumer_protocol import (ConsumerProtocolAssignment,
                                                           ConsumerProtocolSubscription,
                                                           TopicPartition, encode_assignment,
                                                           encode_subscription)
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.protocol.messages.sync_group import (SyncGroupRequest,
                                                    SyncGroupRequestAssignment)
from kafka_emu.testing import make_config, run_in_thread


@pytest.fixture(scope="module")
def emu():
    with run_in_thread(make_config({"group.initial.rebalance.delay.ms": 0},
                                   topics={"orders": 3})) as emulator:
        yield emulator


def join_and_sync(conn: BrokerConnection, group: str) -> str:
    """One consumer-protocol member that leads itself and takes orders-0..2; its member id."""
    subscription = encode_subscription(ConsumerProtocolSubscription(topics=["orders"]), 0)

    def join(member_id):
        def build(version):
            return JoinGroupRequest(group_id=group, session_timeout_ms=30000,
                                    rebalance_timeout_ms=30000, member_id=member_id,
                                    protocol_type="consumer", protocols=[
                                        JoinGroupRequestProtocol(name="range",
                                                                 metadata=subscription)])
        return conn.request("JoinGroup", build)[1]

    joined = join("")
    if joined.error_code == ErrorCode.MEMBER_ID_REQUIRED:  # KIP-394, JoinGroup v4+
        joined = join(joined.member_id)
    assert joined.error_code == 0, joined
    assignment = encode_assignment(ConsumerProtocolAssignment(assigned_partitions=[
        TopicPartition(topic="orders", partitions=[0, 1, 2])]), 0)

    def sync(version):
        return SyncGroupRequest(group_id=group, generation_id=joined.generation_id,
                                member_id=joined.member_id, assignments=[
                                    SyncGroupRequestAssignment(member_id=joined.member_id,
                                                               assignment=assignment)],
                                protocol_type="consumer" if version >= 5 else None,
                                protocol_name="range" if version >= 5 else None)

    synced = conn.request("SyncGroup", sync)[1]
    assert synced.error_code == 0, synced
    return joined.member_id


def test_versions_against_the_emulator_is_fully_usable(emu, capsys):
    assert main(["versions", "--bootstrap-server", emu.bootstrap_servers]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    with AdminClient(emu.bootstrap_servers) as client:
        advertised = client.api_versions()
        assert client.bootstrap.api_versions_version == 3  # our first try; no fallback needed
    # The emulator derives what it advertises from the same declarations (STYLE 8), so every
    # API it advertises is one we declare, usable at its highest advertised version.
    rows = [r for r in api_rows(advertised) if r.broker is not None]
    assert {"ApiVersions", "FindCoordinator", "ListGroups", "DescribeGroups"} <= {
        r.name for r in rows}
    assert all(r.ours is not None and r.usable == r.broker.hi for r in rows)
    assert first == (f"Broker {emu.bootstrap_servers} (ApiVersions v3): {len(rows)} APIs "
                     f"advertised, {len(rows)} usable by kafka-emu")


def test_groups_list_and_describe_against_the_emulator(emu, capsys):
    with AdminClient(emu.bootstrap_servers) as client:
        member_id = join_and_sync(client.bootstrap, "admin-test")
        [listed] = [g for g in client.list_groups(states=["stable"])
                    if g.group_id == "admin-test"]
        assert listed.protocol_type == "consumer"

        assert main(["groups", "--bootstrap-server", emu.bootstrap_servers, "--list"]) == 0
        assert "admin-test" in capsys.readouterr().out.splitlines()

        assert main(["groups", "--bootstrap-server", emu.bootstrap_servers, "--list",
                     "--state", "Stable"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0].split() == ["GROUP", "STATE"]
        assert ["admin-test", "Stable"] in [line.split() for line in out]

        assert main(["groups", "--bootstrap-server", emu.bootstrap_servers, "--describe",
                     "--group", "admin-test"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[:4] == ["GROUP:          admin-test", "STATE:          Stable",
                           "PROTOCOL-TYPE:  consumer", "PROTOCOL:       range"]
        row = out[-1].split()
        assert row[0] == member_id and row[-2:] == ["3", "orders(0,1,2)"]
