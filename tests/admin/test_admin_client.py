"""The admin client's version negotiation against a scripted broker (KIP-35, KIP-511)."""

import pytest

from fake_broker import FakeGroup, group_handlers
from kafka_emu.admin import AdminClient, AdminError, BrokerConnection, UnsupportedApiError
from kafka_emu.admin.connection import parse_bootstrap, software_version
from kafka_emu.admin.model import api_rows, usable_version
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.api_versions import ApiVersion
from kafka_emu.protocol.messages.list_groups import ListGroupsRequest
from kafka_emu.protocol.versions import Versions


def test_usable_version_is_max_of_intersection():
    assert usable_version(Versions(0, 5), Versions(2, 9)) == 5
    assert usable_version(Versions(3, 9), Versions(0, 4)) == 4
    assert usable_version(Versions(0, 2), Versions(3, 4)) is None
    assert usable_version(Versions(0, 2), None) is None


def test_request_picks_max_of_intersection(fake):
    broker = fake({"ListGroups": "0-3", "DescribeGroups": "2-9"}, group_handlers([]))
    with BrokerConnection(broker.host, broker.port) as conn:
        assert conn.api_versions_version == 3
        seen = []
        version, response = conn.request("ListGroups", lambda v: seen.append(v) or
                                         ListGroupsRequest())
        assert (version, seen, response.error_code) == (3, [3], 0)
        assert conn.version_for(BY_NAME["DescribeGroups"]) == 6  # ours stop at 6
        assert conn.version_for(15) == 6
    assert [(r.api, r.version) for r in broker.requests] == [("ApiVersions", 3),
                                                             ("ListGroups", 3)]


def test_api_versions_v3_sends_software_name_and_version(fake):
    broker = fake()
    BrokerConnection(broker.host, broker.port, client_id="me").close()
    [req] = broker.requests
    assert req.client_id == "me"
    assert req.body.client_software_name == "kafka-emu"
    assert req.body.client_software_version == software_version() != ""


def test_falls_back_when_api_versions_v3_is_unsupported(fake):
    # An older broker answers v3 with a v0 body: UNSUPPORTED_VERSION and its own range 0-2.
    broker = fake({"ApiVersions": "0-2", "ListGroups": "0-2"}, group_handlers([]))
    with BrokerConnection(broker.host, broker.port) as conn:
        assert conn.api_versions_version == 2
        assert conn.broker_versions[16] == Versions(0, 2)
        assert conn.request("ListGroups", ListGroupsRequest())[0] == 2
    assert [(r.api, r.version) for r in broker.requests] == [
        ("ApiVersions", 3), ("ApiVersions", 2), ("ListGroups", 2)]
    assert broker.connections == 1  # the retry uses the same connection


def test_falls_back_to_v0_when_the_error_names_no_range(fake):
    broker = fake({"ApiVersions": "0"}, api_versions_error_keys=[])
    with BrokerConnection(broker.host, broker.port) as conn:
        assert conn.api_versions_version == 0
    assert [r.version for r in broker.requests] == [3, 0]


def test_broker_that_refuses_its_own_advertised_version_is_an_error(fake):
    broker = fake({"ApiVersions": "0"}, api_versions_error_keys=[
        ApiVersion(api_key=18, min_version=0, max_version=4)])
    with pytest.raises(AdminError, match="refuses ApiVersions v3"):
        BrokerConnection(broker.host, broker.port)


def test_no_common_version_is_unsupported(fake):
    broker = fake({"ListGroups": "7-9", "DescribeGroups": "none"})
    with BrokerConnection(broker.host, broker.port) as conn:
        with pytest.raises(UnsupportedApiError, match=r"ListGroups: broker .* supports v7-9"):
            conn.request("ListGroups", ListGroupsRequest())
        with pytest.raises(UnsupportedApiError, match="does not support it"):
            conn.version_for("DescribeGroups")
    assert broker.api_names() == ["ApiVersions"]  # nothing unsendable went out


def test_correlation_ids_and_header_checks_over_many_requests(fake):
    broker = fake(None, group_handlers([FakeGroup(group_id="g")]))
    with AdminClient(broker.bootstrap) as client:
        for _ in range(5):
            assert [g.group_id for g in client.list_groups()] == ["g"]


def test_api_versions_and_rows(fake):
    broker = fake({"ListGroups": "0-2", "Heartbeat": "none", "key:1000": "0-3"})
    with AdminClient(broker.bootstrap) as client:
        ranges = client.api_versions()
    assert ranges[16] == Versions(0, 2) and 12 not in ranges and ranges[1000] == Versions(0, 3)
    rows = {r.key: r for r in api_rows(ranges)}
    assert rows[16].usable == 2 and rows[16].name == "ListGroups"
    assert rows[12].broker is None and rows[12].usable is None
    assert rows[1000].name is None and rows[1000].ours is None and rows[1000].usable is None


def test_bootstrap_list_uses_the_first_broker_that_answers(fake, closed_port):
    broker = fake(None, group_handlers([FakeGroup(group_id="g")]))
    with AdminClient(f"127.0.0.1:{closed_port},{broker.bootstrap}") as client:
        assert client.bootstrap.port == broker.port


def test_refused_connection_is_one_line_admin_error(closed_port):
    with pytest.raises(AdminError) as info:
        AdminClient(f"127.0.0.1:{closed_port}")
    assert "cannot connect to 127.0.0.1" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("text", ["localhost", "host:", ":9092", "h:port", "h:70000"])
def test_malformed_bootstrap(text):
    with pytest.raises(ValueError):
        parse_bootstrap(text)
    with pytest.raises(AdminError, match="bad bootstrap server"):
        AdminClient(text)


def test_parse_bootstrap_forms():
    assert parse_bootstrap("a:1, [::1]:9092") == [("a", 1), ("::1", 9092)]
