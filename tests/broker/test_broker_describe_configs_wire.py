"""A broker's DescribeConfigs as Kafka 4.x answers it (#34 item 7): Kafka's names only, with
Kafka's types; advertised.listeners and min.insync.replicas always; the cluster-wide default
resource '' answering only dynamic defaults (none can be set on kafka-emu); ConfigHelper's
broker-id messages."""

from __future__ import annotations

from kafka_emu.broker.broker_config_types import BROKER_CONFIG_TYPES
from kafka_emu.broker.resource_configs import ConfigSource, ConfigType, ResourceType
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import describe_configs as dcfg
from kafka_emu.testing.wire import WireClient

DESCRIBE = BY_NAME["DescribeConfigs"]


async def describe(start_broker, *resources, settings=None):
    bound = await start_broker(settings)
    wire = await WireClient.connect(bound.host, bound.port)
    return (await wire.request(DESCRIBE, 4, dcfg.DescribeConfigsRequest(resources=[
        dcfg.DescribeConfigsResource(resource_type=t, resource_name=n, configuration_keys=None)
        for t, n in resources]))).results


async def test_broker_lists_kafka_names_with_kafka_types(start_broker):
    (result,) = await describe(start_broker, (ResourceType.BROKER, "1"), settings={
        "emu.clock": "manual", "advertised.host.name": "h", "num.partitions": "3"})
    assert result.error_code == ErrorCode.NONE
    entries = {c.name: c for c in result.configs}
    assert not [n for n in entries if n.startswith("emu.")]
    assert not {"advertised.host.name", "advertised.port", "cluster.id"} & set(entries)
    assert set(entries) <= set(BROKER_CONFIG_TYPES)
    assert entries["advertised.listeners"].config_source == ConfigSource.DEFAULT_CONFIG
    assert entries["advertised.listeners"].value is None
    assert (entries["min.insync.replicas"].value,
            entries["min.insync.replicas"].config_type) == ("1", ConfigType.INT)
    assert (entries["num.partitions"].value, entries["num.partitions"].config_source,
            entries["num.partitions"].config_type) == ("3", ConfigSource.STATIC_BROKER_CONFIG,
                                                       ConfigType.INT)
    types = {n: c.config_type for n, c in entries.items()}
    assert types["auto.create.topics.enable"] == ConfigType.BOOLEAN
    assert types["log.retention.ms"] == ConfigType.LONG
    assert types["offsets.topic.replication.factor"] == ConfigType.SHORT
    assert types["group.share.assignors"] == ConfigType.LIST
    assert ConfigType.UNKNOWN not in types.values()


async def test_advertised_listeners_is_listed_as_configured(start_broker):
    (result,) = await describe(start_broker, (ResourceType.BROKER, "1"), settings={
        "advertised.listeners": "PLAINTEXT://example.test:9092"})
    entries = {c.name: c for c in result.configs}
    assert (entries["advertised.listeners"].value, entries["advertised.listeners"].config_source) \
        == ("PLAINTEXT://example.test:9092", ConfigSource.STATIC_BROKER_CONFIG)


async def test_cluster_default_resource_answers_only_dynamic_defaults(start_broker):
    (result,) = await describe(start_broker, (ResourceType.BROKER, ""))
    assert (result.error_code, result.configs) == (ErrorCode.NONE, [])


async def test_broker_id_errors_as_config_helper(start_broker):
    results = await describe(start_broker, (ResourceType.BROKER, "one"),
                             (ResourceType.BROKER, " 1"), (ResourceType.BROKER, "99"),
                             (ResourceType.BROKER_LOGGER, "99"),
                             (ResourceType.BROKER_LOGGER, ""),
                             (ResourceType.BROKER, "+1"))
    assert [(r.error_code, r.error_message) for r in results] == [
        (ErrorCode.INVALID_REQUEST, "Broker id must be an integer, but it is: one"),
        (ErrorCode.INVALID_REQUEST, "Broker id must be an integer, but it is:  1"),
        (ErrorCode.INVALID_REQUEST,
         "Unexpected broker id, expected 1 or empty string, but received 99"),
        (ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 1 but received 99"),
        (ErrorCode.INVALID_REQUEST, "Broker id must not be empty"),
        (ErrorCode.NONE, None)]  # Integer.parseInt("+1") is 1


async def test_internal_configs_are_listed_only_where_set(start_broker):
    (unset,) = await describe(start_broker, (ResourceType.BROKER, "1"))
    assert "log.initial.task.delay.ms" not in {c.name for c in unset.configs}
    (given,) = await describe(start_broker, (ResourceType.BROKER, "1"),
                              settings={"log.initial.task.delay.ms": "5"})
    [entry] = [c for c in given.configs if c.name == "log.initial.task.delay.ms"]
    assert (entry.value, entry.config_source, entry.config_type) == (
        "5", ConfigSource.STATIC_BROKER_CONFIG, ConfigType.LONG)
