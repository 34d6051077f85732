"""AdminClient.list_groups / describe_groups and the ``groups`` command against a fake broker."""

import pytest

from fake_broker import FakeGroup, FakeMember, group_handlers
from kafka_emu.admin import AdminClient
from kafka_emu.cli import main
from kafka_emu.protocol.messages.consumer_protocol import (ConsumerProtocolAssignment,
                                                           TopicPartition, encode_assignment)

GROUPS = [FakeGroup(group_id="orders", state="Stable"),
          FakeGroup(group_id="audit", state="Empty"),
          FakeGroup(group_id="billing", state="PreparingRebalance", protocol_type="connect")]


def assignment(*tps, version=0):
    return encode_assignment(ConsumerProtocolAssignment(assigned_partitions=[
        TopicPartition(topic=t, partitions=list(p)) for t, p in tps]), version)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_prints_sorted_ids(fake, capsys):
    broker = fake(None, group_handlers(GROUPS))
    code, out, err = run(capsys, "groups", "--bootstrap-server", broker.bootstrap, "--list")
    assert (code, out, err) == (0, "audit\nbilling\norders\n", "")
    listed = [r for r in broker.requests if r.api == "ListGroups"]
    assert [(r.version, r.body.states_filter) for r in listed] == [(5, [])]


def test_list_state_without_values_shows_every_group_with_its_state(fake, capsys):
    broker = fake(None, group_handlers(GROUPS))
    code, out, _ = run(capsys, "groups", "--bootstrap-server", broker.bootstrap, "--list",
                       "--state")
    assert code == 0
    assert out.splitlines() == ["GROUP    STATE",
                                "audit    Empty",
                                "billing  PreparingRebalance",
                                "orders   Stable"]


@pytest.mark.parametrize("argv", [["stable", "EMPTY"], ["Stable,empty"]])
def test_list_state_filter_is_case_insensitive_and_sent_as_states_filter(fake, capsys, argv):
    broker = fake(None, group_handlers(GROUPS))
    code, out, _ = run(capsys, "groups", "--bootstrap-server", broker.bootstrap, "--list",
                       "--state", *argv)
    assert code == 0
    assert out.splitlines() == ["GROUP   STATE", "audit   Empty", "orders  Stable"]
    [listed] = [r for r in broker.requests if r.api == "ListGroups"]
    assert listed.body.states_filter == ["Stable", "Empty"]  # the broker's spelling


def test_state_filter_on_a_pre_kip_518_broker_uses_describe_groups(fake, capsys):
    broker = fake({"ListGroups": "0-3"}, group_handlers(GROUPS))
    code, out, _ = run(capsys, "groups", "--bootstrap-server", broker.bootstrap, "--list",
                       "--state", "preparingrebalance")
    assert code == 0
    assert out.splitlines() == ["GROUP    STATE", "billing  PreparingRebalance"]
    assert [(r.api, r.version) for r in broker.requests if r.api != "Metadata"] == [
        ("ApiVersions", 3), ("ListGroups", 3), ("DescribeGroups", 6)]


def test_plain_list_on_an_old_broker_does_not_describe(fake):
    broker = fake({"ListGroups": "0-1"}, group_handlers(GROUPS))
    with AdminClient(broker.bootstrap) as client:
        listed = client.list_groups()
    assert [(g.group_id, g.state) for g in listed] == [("audit", None), ("billing", None),
                                                       ("orders", None)]
    assert "DescribeGroups" not in broker.api_names()


def test_list_groups_api_states_filter(fake):
    broker = fake(None, group_handlers(GROUPS))
    with AdminClient(broker.bootstrap) as client:
        assert [g.group_id for g in client.list_groups(states=["empty"])] == ["audit"]
        assert [g.state for g in client.list_groups(states=())] == [
            "Empty", "PreparingRebalance", "Stable"]
        with pytest.raises(ValueError, match="invalid state"):
            client.list_groups(states=["nap"])


def test_list_groups_asks_every_broker_of_the_cluster(fake):
    other = fake(None, group_handlers([FakeGroup(group_id="elsewhere")]), node_id=2)
    handlers = group_handlers(GROUPS[:1])

    def metadata(broker, version, req):
        from kafka_emu.protocol.messages.metadata import MetadataResponse, MetadataResponseBroker
        return MetadataResponse(brokers=[
            MetadataResponseBroker(node_id=1, host=broker.host, port=broker.port),
            MetadataResponseBroker(node_id=2, host=other.host, port=other.port)])

    boot = fake(None, {**handlers, "Metadata": metadata}, node_id=1)
    with AdminClient(boot.bootstrap) as client:
        assert [g.group_id for g in client.list_groups()] == ["elsewhere", "orders"]


MEMBERS = (
    FakeMember(member_id="consumer-2-bbb", client_id="consumer-2", client_host="/10.0.0.2",
               group_instance_id="instance-b",
               assignment=assignment(("orders", [2]), ("audit", [0]), version=3)),
    FakeMember(member_id="consumer-1-aaa", client_id="consumer-1",
               assignment=assignment(("orders", [1, 0]), ("orders", [3]))),
    FakeMember(member_id="consumer-3-ccc", client_id="consumer-3", assignment=assignment()),
    FakeMember(member_id="consumer-4-ddd", client_id="consumer-4", assignment=b"\x00"),
)


def test_describe_prints_members_with_decoded_assignments(fake, capsys):
    broker = fake(None, group_handlers([FakeGroup(
        group_id="orders", members=MEMBERS,
        committed=(("orders", 0, 40), ("orders", 3, 100), ("gone", 0, 7)))]))
    code, out, err = run(capsys, "groups", "--bootstrap-server", broker.bootstrap,
                         "--describe", "--group", "orders")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "GROUP:          orders",
        "STATE:          Stable",
        "PROTOCOL-TYPE:  consumer",
        "PROTOCOL:       range",
        "",
        "GROUP   TOPIC   PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID     "
        "HOST        CLIENT-ID",
        "orders  audit   0          -               100             -    consumer-2-bbb  "
        "/10.0.0.2   consumer-2",
        "orders  gone    0          7               100             93   -               -"
        "           -",
        "orders  orders  0          40              100             60   consumer-1-aaa  "
        "/127.0.0.1  consumer-1",
        "orders  orders  1          -               100             -    consumer-1-aaa  "
        "/127.0.0.1  consumer-1",
        "orders  orders  2          -               100             -    consumer-2-bbb  "
        "/10.0.0.2   consumer-2",
        "orders  orders  3          100             100             0    consumer-1-aaa  "
        "/127.0.0.1  consumer-1",
        "",
        "MEMBER-ID       GROUP-INSTANCE-ID  CLIENT-ID   HOST        #PARTITIONS  ASSIGNMENT",
        "consumer-1-aaa  -                  consumer-1  /127.0.0.1  3            orders(0,1,3)",
        "consumer-2-bbb  instance-b         consumer-2  /10.0.0.2   2            "
        "audit(0),orders(2)",
        "consumer-3-ccc  -                  consumer-3  /127.0.0.1  0            -",
        "consumer-4-ddd  -                  consumer-4  /127.0.0.1  -            -",
    ]
    assert [(r.api, r.version) for r in broker.requests] == [
        ("ApiVersions", 3), ("FindCoordinator", 6), ("DescribeGroups", 6),
        ("FindCoordinator", 6), ("OffsetFetch", 10), ("Metadata", 13), ("ListOffsets", 11)]
    find = broker.requests[1].body
    assert (find.coordinator_keys, find.key_type) == (["orders"], 0)


def test_describe_non_consumer_group_shows_no_assignment(fake, capsys):
    group = FakeGroup(group_id="workers", protocol_type="connect", protocol="sessioned",
                      members=(FakeMember(member_id="w1", assignment=assignment(("t", [0]))),))
    broker = fake(None, group_handlers([group]))
    code, out, _ = run(capsys, "groups", "--bootstrap-server", broker.bootstrap,
                       "--describe", "--group", "workers")
    assert code == 0
    assert out.splitlines()[-1].split() == ["w1", "-", "client", "/127.0.0.1", "-", "-"]


def test_describe_empty_group(fake, capsys):
    broker = fake(None, group_handlers([FakeGroup(group_id="idle", state="Empty")]))
    code, out, _ = run(capsys, "groups", "--bootstrap-server", broker.bootstrap,
                       "--describe", "--group", "idle")
    assert code == 0
    assert out.splitlines()[1] == "STATE:          Empty"
    assert out.splitlines()[-1] == "Consumer group 'idle' has no active members."


@pytest.mark.parametrize("describe_versions", ["0-6", "0-5"])
def test_describe_missing_group_is_exit_1(fake, capsys, describe_versions):
    broker = fake({"DescribeGroups": describe_versions},
                  group_handlers([FakeGroup(group_id="orders", members=MEMBERS[:1])]))
    code, out, err = run(capsys, "groups", "--bootstrap-server", broker.bootstrap,
                         "--describe", "--group", "ghost", "--group", "orders")
    assert code == 1
    assert err == "kafka-emu: error: consumer group 'ghost' does not exist\n"
    assert out.startswith("GROUP:          orders\n")


def test_old_find_coordinator_and_describe_versions(fake):
    broker = fake({"FindCoordinator": "0", "DescribeGroups": "0-3"},
                  group_handlers([FakeGroup(group_id="orders", members=MEMBERS[:2])]))
    with AdminClient(broker.bootstrap) as client:
        [d] = client.describe_groups(["orders"])
    assert [(r.api, r.version) for r in broker.requests] == [
        ("ApiVersions", 3), ("FindCoordinator", 0), ("DescribeGroups", 3)]
    assert broker.requests[1].body.key == "orders"
    assert {m.member_id: m.group_instance_id for m in d.members} == {
        "consumer-2-bbb": None, "consumer-1-aaa": None}  # v4 added GroupInstanceId


def test_describe_goes_to_the_coordinator(fake):
    coordinator = fake(None, group_handlers([FakeGroup(group_id="orders", members=MEMBERS)]),
                       node_id=7)
    boot = fake(None, group_handlers([], coordinator=coordinator))
    with AdminClient(boot.bootstrap) as client:
        [d] = client.describe_groups(["orders"])
    assert len(d.members) == 4
    assert boot.api_names() == ["ApiVersions", "FindCoordinator"]
    assert coordinator.api_names() == ["ApiVersions", "DescribeGroups"]


def test_coordinator_not_available_is_retried(fake):
    calls = []
    handlers = group_handlers([FakeGroup(group_id="orders")])
    real_find = handlers["FindCoordinator"]

    def flaky_find(broker, version, req):
        from kafka_emu.protocol.messages.find_coordinator import (Coordinator,
                                                                  FindCoordinatorResponse)
        calls.append(version)
        if len(calls) < 3:
            return FindCoordinatorResponse(coordinators=[Coordinator(
                key="orders", error_code=15, host="", port=-1, node_id=-1)])
        return real_find(broker, version, req)

    broker = fake(None, {**handlers, "FindCoordinator": flaky_find})
    with AdminClient(broker.bootstrap) as client:
        [d] = client.describe_groups(["orders"])
    assert d.state == "Stable" and len(calls) == 3


def test_find_coordinator_error_gives_up_at_the_timeout(fake, capsys):
    def find(broker, version, req):
        from kafka_emu.protocol.messages.find_coordinator import (Coordinator,
                                                                  FindCoordinatorResponse)
        return FindCoordinatorResponse(coordinators=[Coordinator(
            key=k, error_code=15, host="", port=-1, node_id=-1) for k in req.coordinator_keys])

    broker = fake(None, {"FindCoordinator": find})
    code, out, err = run(capsys, "groups", "--bootstrap-server", broker.bootstrap,
                         "--timeout", "200", "--describe", "--group", "g")
    assert (code, out) == (1, "")
    assert err == ("kafka-emu: error: FindCoordinator for group 'g': "
                   "COORDINATOR_NOT_AVAILABLE\n")
