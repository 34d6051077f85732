"""Several listeners on one emulator and on each broker of a cluster; Metadata, FindCoordinator
and DescribeCluster answer with the endpoints of the listener the client came in on; TLS with the
generated CA, a failed handshake closing only its connection, mTLS and the principal taken from
the client certificate."""

import ssl

import pytest
import trio

from kafka_emu.broker.config import BrokerConfig
from kafka_emu.broker.server import serve
from kafka_emu.protocol.messages.describe_cluster import API as DESCRIBE_CLUSTER
from kafka_emu.protocol.messages.describe_cluster import DescribeClusterRequest
from kafka_emu.protocol.messages.find_coordinator import API as FIND_COORDINATOR
from kafka_emu.protocol.messages.find_coordinator import FindCoordinatorRequest
from kafka_emu.protocol.messages.metadata import API as METADATA
from kafka_emu.protocol.messages.metadata import MetadataRequest
from kafka_emu.security.listeners import parse_listeners
from kafka_emu.security.tls import map_principal
from kafka_emu.testing import make_config
from kafka_emu.testing.wire import WireClient

@pytest.fixture
def start_broker(nursery):
    """start_broker(settings, brokers=n) -> BoundAddress (this module's: with a cluster size)."""

    async def start(settings=None, **kwargs):
        from functools import partial
        return await nursery.start(partial(serve, make_config(settings, **kwargs)))

    return start


THREE = "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://localhost:0"


def port_of(bootstrap: str) -> int:
    return int(bootstrap.split(",")[0].rpartition(":")[2])


def client_context(bound, cert=None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=bound.tls.ca_file)
    if cert is not None:
        context.load_cert_chain(*cert)
    return context


async def tls_client(bound, name="SSL", cert=None, server_hostname="localhost") -> WireClient:
    tcp = await trio.open_tcp_stream("127.0.0.1", port_of(bound.bootstrap_for(name)))
    stream = trio.SSLStream(tcp, client_context(bound, cert), server_hostname=server_hostname)
    await stream.do_handshake()
    return WireClient(stream)


async def broker_ports(client) -> list[tuple[int, str, int]]:
    response = await client.request(METADATA, 12, MetadataRequest(topics=[]))
    return sorted((b.node_id, b.host, b.port) for b in response.brokers)


def test_listener_names_map_to_protocols():
    listeners = parse_listeners("INTERNAL://:9093,EXTERNAL://[::1]:9094",
                                {"INTERNAL": "SASL_PLAINTEXT", "EXTERNAL": "SSL"})
    assert [(x.name, x.protocol, x.host, x.port) for x in listeners] == [
        ("INTERNAL", "SASL_PLAINTEXT", "", 9093), ("EXTERNAL", "SSL", "::1", 9094)]
    with pytest.raises(ValueError, match="no security protocol for listener INTERNAL"):
        BrokerConfig.from_kafka({"listeners": "INTERNAL://:0"})
    with pytest.raises(ValueError, match="once"):
        parse_listeners("SSL://:1,SSL://:2")


def test_principal_mapping_rules_as_kafka():
    dn = "CN=alice,OU=ServiceUsers,O=acme,C=US"
    assert map_principal(dn, "DEFAULT") == dn
    rules = "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/U, DEFAULT"
    assert map_principal(dn, rules) == "ALICE"
    assert map_principal("CN=bob,O=x", rules) == "CN=bob,O=x"


async def test_default_is_one_plaintext_listener(start_broker):
    bound = await start_broker({})
    assert bound.listeners == (("PLAINTEXT", "PLAINTEXT", bound.bootstrap),)
    assert bound.tls is None


async def test_each_listener_answers_with_its_own_endpoints(start_broker):
    bound = await start_broker({"listeners": THREE})
    assert [(n, p) for n, p, _ in bound.listeners] == [
        ("PLAINTEXT", "PLAINTEXT"), ("SSL", "SSL"), ("SASL_SSL", "SASL_SSL")]
    ports = {name: port_of(b) for name, _, b in bound.listeners}
    assert len(set(ports.values())) == 3
    assert bound.bootstrap == bound.bootstrap_for("PLAINTEXT")
    plain = await WireClient.connect("127.0.0.1", ports["PLAINTEXT"])
    assert await broker_ports(plain) == [(1, "127.0.0.1", ports["PLAINTEXT"])]
    secure = await tls_client(bound)
    assert await broker_ports(secure) == [(1, "127.0.0.1", ports["SSL"])]
    found = await secure.request(FIND_COORDINATOR, 3, FindCoordinatorRequest(key="g"))
    assert (found.error_code, found.port) == (0, ports["SSL"])
    cluster = await secure.request(DESCRIBE_CLUSTER, 0, DescribeClusterRequest())
    assert [b.port for b in cluster.brokers] == [ports["SSL"]]


async def test_every_broker_of_a_cluster_has_every_listener(start_broker):
    bound = await start_broker({"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"},
                               brokers=3)
    plain_ports = [port_of(p) for p in bound.bootstrap_for("PLAINTEXT").split(",")]
    ssl_ports = [port_of(p) for p in bound.bootstrap_for("SSL").split(",")]
    assert len(set(plain_ports + ssl_ports)) == 6
    plain = await WireClient.connect("127.0.0.1", plain_ports[1])
    assert await broker_ports(plain) == [(i + 1, "127.0.0.1", p) for i, p in enumerate(plain_ports)]
    secure = await tls_client(bound)
    assert await broker_ports(secure) == [(i + 1, "127.0.0.1", p) for i, p in enumerate(ssl_ports)]


async def test_advertised_listeners_per_listener(start_broker):
    bound = await start_broker({"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
                                "advertised.listeners": "PLAINTEXT://kafka.example:9092,"
                                                        "SSL://secure.example:9093"}, brokers=2)
    secure = await tls_client(bound)
    assert await broker_ports(secure) == [(1, "secure.example", 9093), (2, "secure.example", 9094)]
    plain = await WireClient.connect("127.0.0.1", port_of(bound.bootstrap_for("PLAINTEXT")))
    assert await broker_ports(plain) == [(1, "kafka.example", 9092), (2, "kafka.example", 9093)]


async def test_the_server_certificate_names_localhost_and_loopbacks(start_broker):
    bound = await start_broker({"listeners": "SSL://127.0.0.1:0"})
    for name in ("localhost", "127.0.0.1"):
        client = await tls_client(bound, server_hostname=name)
        assert await broker_ports(client)


async def test_a_failed_handshake_closes_only_that_connection(start_broker):
    bound = await start_broker({"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"})
    ssl_port = port_of(bound.bootstrap_for("SSL"))
    bad = await trio.open_tcp_stream("127.0.0.1", ssl_port)
    await bad.send_all(b"\x00\x00\x00\x0a plaintext bytes on a TLS port")
    assert await bad.receive_some(100) == b""  # closed, no answer
    untrusting = ssl.create_default_context()  # does not know our CA: the client gives up
    tcp = await trio.open_tcp_stream("127.0.0.1", ssl_port)
    with pytest.raises(trio.BrokenResourceError):
        await trio.SSLStream(tcp, untrusting, server_hostname="localhost").do_handshake()
    client = await tls_client(bound)
    assert await broker_ports(client)
    assert not bound.broker.unexpected


MTLS = {"listeners": "SSL://127.0.0.1:0", "ssl.client.auth": "required"}


async def test_mtls_principal_is_the_certificate_subject(start_broker):
    bound = await start_broker(MTLS)
    cert = bound.tls.client_certificate("CN=alice,O=acme")
    client = await tls_client(bound, cert=cert)
    assert await broker_ports(client)
    principals = [info.principal for info in bound.broker.connections.values()]
    infos = list(bound.broker.connections.values())
    assert principals == ["User:CN=alice,O=acme"] and infos[0].listener == "SSL"


async def test_mtls_required_refuses_a_client_without_certificate(start_broker):
    bound = await start_broker(MTLS)
    tcp = await trio.open_tcp_stream("127.0.0.1", port_of(bound.bootstrap_for("SSL")))
    stream = trio.SSLStream(tcp, client_context(bound), server_hostname="localhost")
    with pytest.raises(trio.BrokenResourceError):
        await stream.do_handshake()
        await stream.send_all(b"\0\0\0\0")
        await stream.receive_some(10)  # TLS 1.3: the refusal arrives after the handshake
    client = await tls_client(bound, cert=bound.tls.client_certificate("CN=bob"))
    assert await broker_ports(client)


async def test_mtls_mapping_rules_shape_the_principal(start_broker):
    bound = await start_broker({**MTLS, "ssl.client.auth": "requested",
                                "ssl.principal.mapping.rules": "RULE:^CN=([^,]*).*$/$1/L,DEFAULT"})
    anonymous = await tls_client(bound)
    assert await broker_ports(anonymous)
    named = await tls_client(bound, cert=bound.tls.client_certificate("CN=Carol,O=acme"))
    assert await broker_ports(named)
    assert sorted(i.principal for i in bound.broker.connections.values()) == [
        "User:ANONYMOUS", "User:carol"]


async def test_a_keystore_of_ones_own(start_broker, tmp_path):
    first = await start_broker({"listeners": "SSL://127.0.0.1:0"})
    keystore = tmp_path / "keystore.pem"
    keystore.write_bytes(open(first.tls.key_file, "rb").read()
                         + open(first.tls.cert_file, "rb").read())
    bound = await start_broker({"listeners": "SSL://127.0.0.1:0",
                                "ssl.keystore.type": "PEM",
                                "ssl.keystore.location": str(keystore)})
    tcp = await trio.open_tcp_stream("127.0.0.1", port_of(bound.bootstrap_for("SSL")))
    stream = trio.SSLStream(tcp, client_context(first), server_hostname="localhost")
    client = WireClient(stream)
    assert await broker_ports(client)


async def test_an_idle_tls_connection_is_closed_as_idle(start_broker):
    bound = await start_broker({"listeners": "SSL://127.0.0.1:0",
                                "connections.max.idle.ms": "200"})
    client = await tls_client(bound)
    assert await broker_ports(client)
    with trio.fail_after(30):  # a bound on the wait, not a timing assertion
        try:
            closed = await client.stream.receive_some(100) == b""
        except trio.BrokenResourceError:
            closed = True
    assert closed
    assert not bound.broker.unexpected


async def test_a_restarted_broker_serves_tls_again_on_its_ssl_listener(start_broker):
    bound = await start_broker({"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"},
                               brokers=2)
    moves = bound.broker.cluster_moves
    moves.stop(2)
    moves.start(2)
    ssl_port = port_of(bound.bootstrap_for("SSL").split(",")[1])
    tcp = await trio.open_tcp_stream("127.0.0.1", ssl_port)
    stream = trio.SSLStream(tcp, client_context(bound), server_hostname="localhost")
    client = WireClient(stream)
    assert [b[0] for b in await broker_ports(client)] == [1, 2]


async def test_a_refused_client_certificate_is_a_failed_authentication_event(nursery):
    from functools import partial

    from kafka_emu.broker.events import AuthenticationFailed
    seen = []
    bound = await nursery.start(partial(serve, make_config(MTLS), observer=seen.append))
    tcp = await trio.open_tcp_stream("127.0.0.1", port_of(bound.bootstrap_for("SSL")))
    stream = trio.SSLStream(tcp, client_context(bound), server_hostname="localhost")
    with pytest.raises(trio.BrokenResourceError):
        await stream.do_handshake()
        await stream.send_all(b"\0\0\0\0")
        await stream.receive_some(10)
    with trio.fail_after(10):
        while not any(isinstance(e, AuthenticationFailed) for e in seen):
            await trio.sleep(0.01)
    failed = [e for e in seen if isinstance(e, AuthenticationFailed)]
    assert [(e.listener, e.mechanism, e.error_code) for e in failed] == [("SSL", None, -1)]
    assert failed[0].reason.startswith("SSL handshake failed")


async def test_a_large_fetch_over_tls_is_the_stored_batches_exactly(start_broker):
    """The vectored sendmsg path is for plain sockets; over TLS the same response bytes go
    through the TLS stream (many batches, more than one sendmsg takes, bigger than a TLS record)."""
    from kafka_emu.log.records import Record, build_batch
    from kafka_emu.protocol.messages import fetch as f
    from kafka_emu.protocol.messages import produce as pr
    from kafka_emu.broker.vectored import IOV_MAX
    bound = await start_broker({"listeners": "SSL://127.0.0.1:0"}, topics={"t": 1})
    client = await tls_client(bound)
    batches = [build_batch([Record(value=bytes([i % 251]) * 3000, key=b"k%d" % i,
                                   timestamp_ms=1000 + i)]) for i in range(IOV_MAX + 40)]
    for blob in batches:
        answer = await client.request(pr.API, 9, pr.ProduceRequest(
            acks=1, timeout_ms=1000, topic_data=[pr.TopicProduceData(
                name="t", partition_data=[pr.PartitionProduceData(index=0, records=blob)])]))
        assert answer.responses[0].partition_responses[0].error_code == 0
    stored = b"".join(bound.broker.topics.partition("t", 0).read(0, 1 << 30)[0])
    response = await client.request(f.API, 12, f.FetchRequest(
        max_wait_ms=0, min_bytes=0, max_bytes=0x7FFFFFFF, topics=[f.FetchTopic(
            topic="t", partitions=[f.FetchPartition(partition=0, fetch_offset=0,
                                                    partition_max_bytes=1 << 30)])]))
    records = response.responses[0].partitions[0].records
    assert len(stored) > 3_000_000 and bytes(records) == stored


async def test_a_missing_keystore_is_one_clear_error(start_broker, tmp_path):
    from kafka_emu.security.tls import TlsSetupError
    with pytest.raises(TlsSetupError, match="No such file or directory"):
        await start_broker({"listeners": "SSL://127.0.0.1:0",
                            "ssl.keystore.location": str(tmp_path / "missing.pem")})
