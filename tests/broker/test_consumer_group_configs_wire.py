"""Group configs in force (issue #34 item 2), over real sockets: a consumer group's
consumer.heartbeat.interval.ms and consumer.session.timeout.ms set with IncrementalAlterConfigs
(resource type GROUP) change what the coordinator does from the member's next heartbeat on, as
Kafka 4.x's GroupMetadataManager reads them; values are validated as GroupConfig validates them
against the broker's group.consumer.min/max.*; DescribeConfigs says where each value comes from.
Before, the overrides were stored and ignored, and any integer was accepted."""

from __future__ import annotations

import uuid

import trio

from kafka_emu.broker.resource_configs import AlterOp, ConfigSource, ConfigType, ResourceType
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import consumer_group_heartbeat as cgh
from kafka_emu.protocol.messages import describe_configs as dcfg
from kafka_emu.protocol.messages import incremental_alter_configs as iac
from kafka_emu.testing.wire import WireClient

GROUP = ResourceType.GROUP
CGH = BY_NAME["ConsumerGroupHeartbeat"]
# broker bounds wide enough for the test's values; defaults far from them
BROKER = {"group.consumer.min.session.timeout.ms": 1000,
          "group.consumer.session.timeout.ms": 45000,
          "group.consumer.min.heartbeat.interval.ms": 100,
          "group.consumer.heartbeat.interval.ms": 3000,
          "group.consumer.max.heartbeat.interval.ms": 15000}


async def connect(start_broker, settings=BROKER):
    bound = await start_broker(settings, topics={"t": 2})
    return bound, await WireClient.connect(bound.host, bound.port)


async def alter(wire, group, *ops, validate_only=False):
    response = await wire.request(BY_NAME["IncrementalAlterConfigs"], 1,
                                  iac.IncrementalAlterConfigsRequest(
        validate_only=validate_only, resources=[iac.IncrementalAlterConfigsResource(
            resource_type=GROUP, resource_name=group, configs=[
                iac.IncrementalAlterableConfig(name=n, config_operation=op, value=v)
                for n, op, v in ops])]))
    r = response.responses[0]
    return r.error_code, r.error_message


def set_(name, value):
    return (name, AlterOp.SET, value)


async def describe(wire, group, keys=None):
    response = await wire.request(BY_NAME["DescribeConfigs"], 4, dcfg.DescribeConfigsRequest(
        resources=[dcfg.DescribeConfigsResource(resource_type=GROUP, resource_name=group,
                                                configuration_keys=keys)],
        include_synonyms=True))
    return {c.name: c for c in response.results[0].configs}


def join(group="g", member_id=None):
    return cgh.ConsumerGroupHeartbeatRequest(
        group_id=group, member_id=member_id or str(uuid.uuid4()), member_epoch=0,
        rebalance_timeout_ms=30_000, subscribed_topic_names=["t"], topic_partitions=[])


def beat(r, member_id, group="g"):
    return cgh.ConsumerGroupHeartbeatRequest(group_id=group, member_id=member_id,
                                             member_epoch=r.member_epoch)


async def test_group_heartbeat_interval_is_what_the_next_heartbeat_answers(start_broker):
    _, wire = await connect(start_broker)
    member = str(uuid.uuid4())
    r = await wire.request(CGH, 1, join(member_id=member))
    assert (r.error_code, r.heartbeat_interval_ms) == (0, 3000)  # the broker's
    assert await alter(wire, "g", set_("consumer.heartbeat.interval.ms", "250")) == (0, None)
    r = await wire.request(CGH, 1, beat(r, member))
    assert r.heartbeat_interval_ms == 250
    other = await wire.request(CGH, 1, join("other"))  # another group keeps the broker's
    assert other.heartbeat_interval_ms == 3000
    assert await alter(wire, "g", ("consumer.heartbeat.interval.ms", AlterOp.DELETE, None)) == \
        (0, None)
    assert (await wire.request(CGH, 1, beat(r, member))).heartbeat_interval_ms == 3000


async def test_group_session_timeout_fences_a_silent_member(start_broker, autojump_clock):
    _, wire = await connect(start_broker)
    assert await alter(wire, "g", set_("consumer.session.timeout.ms", "2000"),
                       set_("consumer.heartbeat.interval.ms", "500")) == (0, None)
    quiet, alive = str(uuid.uuid4()), str(uuid.uuid4())
    rq = await wire.request(CGH, 1, join(member_id=quiet))
    ra = await wire.request(CGH, 1, join(member_id=alive))
    assert rq.error_code == ra.error_code == 0
    for _ in range(5):  # 2.5 s: the group's 2 s session passes, the broker's 45 s does not
        await trio.sleep(0.5)
        ra = await wire.request(CGH, 1, beat(ra, alive))
        assert ra.error_code == 0
    r = await wire.request(CGH, 1, beat(rq, quiet))
    assert r.error_code == ErrorCode.UNKNOWN_MEMBER_ID


async def test_out_of_range_values_are_refused_as_group_config_refuses_them(start_broker):
    _, wire = await connect(start_broker)
    hb, session = "consumer.heartbeat.interval.ms", "consumer.session.timeout.ms"
    bad = ErrorCode.INVALID_CONFIG
    assert await alter(wire, "g", set_(hb, "99")) == (
        bad, f"{hb} must be greater than or equal to group.consumer.min.heartbeat.interval.ms")
    assert await alter(wire, "g", set_(hb, "15001")) == (
        bad, f"{hb} must be less than or equal to group.consumer.max.heartbeat.interval.ms")
    assert await alter(wire, "g", set_(session, "999")) == (
        bad, f"{session} must be greater than or equal to group.consumer.min.session.timeout.ms")
    assert await alter(wire, "g", set_(session, "60001")) == (
        bad, f"{session} must be less than or equal to group.consumer.max.session.timeout.ms")
    # merged over the broker's values: 3000 (the broker's interval) is not below a 2000 session
    assert await alter(wire, "g", set_(session, "2000")) == (
        bad, f"{session} must be greater than {hb}")
    assert await alter(wire, "g", set_(hb, "0")) == (
        bad, f"Invalid value 0 for configuration {hb}: Value must be at least 1")
    assert await alter(wire, "g", set_(hb, "5s")) == (
        bad, f"Invalid value 5s for configuration {hb}: Not a number of type INT")
    assert await alter(wire, "g", set_("consumer.nope", "1")) == (
        bad, "Unknown group config name: consumer.nope")
    assert await alter(wire, "g", set_(session, "2000"), set_(hb, "500")) == (0, None)
    # validate_only changes nothing
    assert await alter(wire, "g", set_(hb, "700"), validate_only=True) == (0, None)
    assert (await describe(wire, "g", [hb]))[hb].value == "500"


async def test_describe_configs_shows_group_values_and_their_source(start_broker):
    _, wire = await connect(start_broker)
    entries = await describe(wire, "g")
    assert set(entries) == {"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms",
                            "share.session.timeout.ms", "share.heartbeat.interval.ms",
                            "share.record.lock.duration.ms", "share.auto.offset.reset",
                            "share.delivery.count.limit", "share.isolation.level"}
    hb = entries["consumer.heartbeat.interval.ms"]
    # not set on the group: the broker's value in force, DEFAULT_CONFIG (ConfigHelper)
    assert (hb.value, hb.config_source, hb.config_type, hb.read_only) == (
        "3000", ConfigSource.DEFAULT_CONFIG, ConfigType.INT, False)
    assert [(s.name, s.value, s.source) for s in hb.synonyms] == [
        ("consumer.heartbeat.interval.ms", "3000", ConfigSource.DEFAULT_CONFIG)]
    assert (await alter(wire, "g", set_("consumer.heartbeat.interval.ms", " 400")))[0] == 0
    hb = (await describe(wire, "g"))["consumer.heartbeat.interval.ms"]
    assert (hb.value, hb.config_source) == ("400", ConfigSource.GROUP_CONFIG)
    assert [(s.name, s.value, s.source) for s in hb.synonyms] == [
        ("consumer.heartbeat.interval.ms", "400", ConfigSource.GROUP_CONFIG)]
