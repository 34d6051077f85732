"""Share group configs (KIP-932) through DescribeConfigs / IncrementalAlterConfigs, resource type
GROUP, over real sockets: Kafka 4.2's share.* group configs with GroupConfig's validation (INT,
atLeast, the broker's group.share.min/max.* bounds, session above heartbeat, the string choices of
share.isolation.level and share.auto.offset.reset), DescribeConfigs showing the broker's
group.share.* values as defaults, the session timeout and heartbeat interval applied from the
member's next ShareGroupHeartbeat, and share_settings() as the share-partitions read it."""

from __future__ import annotations

from kafka_emu.broker.resource_configs import AlterOp, ConfigSource, ResourceType
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import describe_configs as dcfg
from kafka_emu.protocol.messages import incremental_alter_configs as iac
from kafka_emu.protocol.messages import share_group_heartbeat as sgh
from kafka_emu.testing.wire import WireClient

BAD = ErrorCode.INVALID_CONFIG
SGH = BY_NAME["ShareGroupHeartbeat"]
MEMBER = "AAAAAAAAAAAAAAAAAAAAAA"


async def connect(start_broker, settings=None):
    bound = await start_broker(settings, topics={"t": 2})
    return bound, await WireClient.connect(bound.host, bound.port)


async def alter(wire, group, *ops, validate_only=False):
    response = await wire.request(BY_NAME["IncrementalAlterConfigs"], 1,
                                  iac.IncrementalAlterConfigsRequest(
        validate_only=validate_only, resources=[iac.IncrementalAlterConfigsResource(
            resource_type=ResourceType.GROUP, resource_name=group, configs=[
                iac.IncrementalAlterableConfig(name=n, config_operation=AlterOp.SET, value=v)
                for n, v in ops])]))
    r = response.responses[0]
    return r.error_code, r.error_message


async def describe(wire, group):
    response = await wire.request(BY_NAME["DescribeConfigs"], 4, dcfg.DescribeConfigsRequest(
        resources=[dcfg.DescribeConfigsResource(resource_type=ResourceType.GROUP,
                                                resource_name=group, configuration_keys=None)],
        include_synonyms=True))
    return {c.name: (c.value, c.config_source) for c in response.results[0].configs}


async def test_share_configs_described_with_the_brokers_defaults(start_broker):
    _, wire = await connect(start_broker, {"group.share.record.lock.duration.ms": "20000",
                                           "group.share.delivery.count.limit": "3"})
    entries = await describe(wire, "g")
    default = ConfigSource.DEFAULT_CONFIG
    assert {k: v for k, v in entries.items() if k.startswith("share.")} == {
        "share.session.timeout.ms": ("45000", default),
        "share.heartbeat.interval.ms": ("250", default),
        "share.record.lock.duration.ms": ("20000", default),
        "share.delivery.count.limit": ("3", default),
        "share.auto.offset.reset": ("latest", default),
        "share.isolation.level": ("read_uncommitted", default)}


async def test_share_config_validation(start_broker):
    bound, wire = await connect(start_broker)
    cases = [
        (("share.record.lock.duration.ms", "999"),
         "Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000"),
        (("share.record.lock.duration.ms", "14000"),
         "share.record.lock.duration.ms must be greater than or equal to "
         "group.share.min.record.lock.duration.ms"),
        (("share.record.lock.duration.ms", "60001"),
         "share.record.lock.duration.ms must be less than or equal to "
         "group.share.max.record.lock.duration.ms"),
        (("share.delivery.count.limit", "1"),
         "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2"),
        (("share.delivery.count.limit", "11"),
         "share.delivery.count.limit must be less than or equal to "
         "group.share.max.delivery.count.limit"),
        (("share.session.timeout.ms", "44999"),
         "share.session.timeout.ms must be greater than or equal to "
         "group.share.min.session.timeout.ms"),
        (("share.heartbeat.interval.ms", "15001"),
         "share.heartbeat.interval.ms must be less than or equal to "
         "group.share.max.heartbeat.interval.ms"),
        (("share.isolation.level", "READ_COMMITTED"),
         "Invalid value READ_COMMITTED for configuration share.isolation.level: String must be "
         "one of: read_committed, read_uncommitted"),
    ]
    for op, message in cases:
        assert await alter(wire, "g", op) == (BAD, message), op
    code, message = await alter(wire, "g", ("share.auto.offset.reset", "sometime"))
    assert code == BAD and "share.auto.offset.reset" in message
    code, _ = await alter(wire, "g", ("share.auto.offset.reset", "by_duration:-PT1H"))
    assert code == BAD
    for good in ("earliest", "latest", "by_duration:PT1H30M", "by_duration:P2DT0.5S"):
        assert await alter(wire, "g", ("share.auto.offset.reset", good)) == (0, None), good
    assert await alter(wire, "g", ("share.isolation.level", "read_committed"),
                       ("share.delivery.count.limit", "7"),
                       ("share.record.lock.duration.ms", "15000")) == (0, None)
    settings = bound.broker.resource_configs.share_settings("g")
    assert (settings.isolation_level, settings.delivery_count_limit,
            settings.record_lock_duration_ms, settings.auto_offset_reset) == (
        "read_committed", 7, 15000, "by_duration:p2dt0.5s".lower())
    other = bound.broker.resource_configs.share_settings("other")
    assert (other.delivery_count_limit, other.record_lock_duration_ms, other.isolation_level,
            other.partition_max_record_locks) == (5, 30000, "read_uncommitted", 2000)


async def test_share_timing_applies_from_the_next_heartbeat(start_broker):
    bound, wire = await connect(start_broker)
    join = sgh.ShareGroupHeartbeatRequest(group_id="g", member_id=MEMBER, member_epoch=0,
                                          subscribed_topic_names=["t"])
    r = await wire.request(SGH, 1, join)
    assert r.heartbeat_interval_ms == 250
    assert await alter(wire, "g", ("share.heartbeat.interval.ms", "6000"),
                       ("share.session.timeout.ms", "50000")) == (0, None)
    r = await wire.request(SGH, 1, sgh.ShareGroupHeartbeatRequest(
        group_id="g", member_id=MEMBER, member_epoch=r.member_epoch))
    assert r.heartbeat_interval_ms == 6000
    now = bound.broker.now_ms()
    [deadline] = [d for d in bound.broker.coordinator.deadlines() if d.member_id == MEMBER]
    assert now + 49_000 < deadline.deadline_ms <= now + 50_000


async def test_broker_describe_configs_lists_the_share_settings(start_broker):
    _, wire = await connect(start_broker, {"group.share.max.size": "7"})
    response = await wire.request(BY_NAME["DescribeConfigs"], 4, dcfg.DescribeConfigsRequest(
        resources=[dcfg.DescribeConfigsResource(resource_type=ResourceType.BROKER,
                                                resource_name="1", configuration_keys=None)]))
    entries = {c.name: (c.value, c.config_source) for c in response.results[0].configs}
    assert entries["group.share.max.size"] == ("7", ConfigSource.STATIC_BROKER_CONFIG)
    assert entries["group.share.record.lock.duration.ms"] == ("30000", ConfigSource.DEFAULT_CONFIG)
    # kafka-emu's own emu.share.version is not one of Kafka's broker configs (#34 item 7)
    assert "emu.share.version" not in entries
