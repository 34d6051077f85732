"""The transaction.version feature (KIP-890 part 2, KIP-584 features) over real sockets:
ApiVersions v3+ lists it as supported 0-2 and finalized at ``emu.transaction.version`` (2 by
default, as a newly formatted Kafka 4.x cluster: TransactionVersion.LATEST_PRODUCTION), level 0
not finalized; decoded by kafka-python's protocol classes (independent of our codec) and read
by kafka-python's admin client (describe_features). The level changes no advertised version:
the request version picks the path, as in Kafka."""

from __future__ import annotations

import itertools

import pytest
import trio
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from kafka_emu.broker.config import BrokerConfig
from kafka_emu.testing.wire import WireClient

_ids = itertools.count(1)


async def api_versions(start_broker, settings, version=3):
    bound = await start_broker(settings)
    wire = await WireClient.connect(bound.host, bound.port)
    request = ApiVersionsRequest(client_software_name="tv-test", client_software_version="1")
    request.with_header(correlation_id=next(_ids), client_id="tv-test")
    await wire.send_raw(request.encode(version=version, header=True, framed=True))
    # the response header of ApiVersions is v0 whatever the request version (KIP-511)
    return ApiVersionsResponse.decode(await wire.receive_frame(), version=version, header=True)


def features(resp):
    supported = {f.name: (f.min_version, f.max_version) for f in resp.supported_features}
    finalized = {f.name: (f.min_version_level, f.max_version_level)
                 for f in resp.finalized_features}
    return supported, finalized


@pytest.mark.parametrize("version", [3, 4])
@pytest.mark.parametrize("settings, level", [
    (None, 2), ({"emu.transaction.version": "2"}, 2), ({"emu.transaction.version": "1"}, 1),
    ({"emu.transaction.version": "0"}, 0)])
async def test_api_versions_lists_transaction_version_at_the_configured_level(
        start_broker, settings, level, version):
    resp = await api_versions(start_broker, settings, version)
    assert resp.error_code == 0
    supported, finalized = features(resp)
    assert supported["transaction.version"] == (0, 2)
    if level:
        assert finalized["transaction.version"] == (level, level)
        assert resp.finalized_features_epoch >= 0
    else:  # Kafka lists no finalized feature at level 0
        assert "transaction.version" not in finalized
    assert finalized.get("share.version") == (1, 1)  # untouched by this setting


async def test_the_level_caps_no_advertised_version(start_broker):
    # Kafka advertises EndTxn v5, AddPartitionsToTxn v5, TxnOffsetCommit v5 and Produce v12+
    # on a TV_1 cluster too: the clients cap themselves by the finalized level
    ranges = {}
    for level in ("1", "2"):
        resp = await api_versions(start_broker, {"emu.transaction.version": level})
        ranges[level] = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert ranges["1"] == ranges["2"]
    assert ranges["2"][26][1] >= 5 and ranges["2"][0][1] >= 12  # EndTxn, Produce


@pytest.mark.parametrize("bad", ["3", "-1", "two"])
def test_out_of_range_levels_are_refused_in_one_line(bad):
    with pytest.raises(ValueError) as info:
        BrokerConfig.from_kafka({"emu.transaction.version": bad})
    assert "emu.transaction.version" in str(info.value) and "\n" not in str(info.value)


def test_the_level_reaches_the_transaction_coordinator():
    from kafka_emu.transactions import TransactionConfig
    config = BrokerConfig.from_kafka({"emu.transaction.version": "1"})
    assert TransactionConfig.from_broker(config).transaction_version == 1
    assert TransactionConfig.from_broker(BrokerConfig()).transaction_version == 2
    assert config.kafka_values()["emu.transaction.version"] == "1"


async def test_kafka_python_admin_describe_features(start_broker):
    from kafka import KafkaAdminClient
    bound = await start_broker({"emu.transaction.version": "1"})

    def describe():
        admin = KafkaAdminClient(bootstrap_servers=f"{bound.host}:{bound.port}",
                                 request_timeout_ms=30_000)
        try:
            return admin.describe_features()
        finally:
            admin.close()

    got = await trio.to_thread.run_sync(describe)
    assert got["transaction.version"]["supported"] == (0, 2)
    assert got["transaction.version"]["finalized"] == (1, 1)
