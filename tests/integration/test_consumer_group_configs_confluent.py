"""A group's own consumer.heartbeat.interval.ms, set with confluent-kafka's AdminClient
(IncrementalAlterConfigs on a GROUP resource), paces its real group.protocol=consumer members
(issue #34 item 2): the broker's interval is its maximum here, 15 s, so a member of a group without
the config hears of a second member's arrival only a quarter of a minute later, while the group
set to 100 ms splits its partitions at once. Before, the config was stored and ignored: the two
members below sat 15 s apart, past the wait's guard."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                   ConfigSource, ResourceType)

from .helpers import wait_until

if tuple(int(x) for x in __import__("confluent_kafka").libversion()[0].split(".")[:2]) < (2, 4):
    pytest.skip("librdkafka < 2.4 has no group.protocol=consumer", allow_module_level=True)

SLOW = {"group.consumer.heartbeat.interval.ms": 15000}


def test_group_heartbeat_interval_set_by_the_admin_client_paces_members(kafka_emu_factory,
                                                                        topic_name, group_id):
    emu = kafka_emu_factory(SLOW, topics={topic_name: 6})
    admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
    resource = ConfigResource(ResourceType.GROUP, group_id, incremental_configs=[ConfigEntry(
        "consumer.heartbeat.interval.ms", "100", incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(10)
    [described] = admin.describe_configs([ConfigResource(ResourceType.GROUP, group_id)]).values()
    entry = described.result(10)["consumer.heartbeat.interval.ms"]
    assert (entry.value, entry.source) == ("100", ConfigSource.GROUP_CONFIG.value)

    conf = {"bootstrap.servers": emu.bootstrap_servers, "group.id": group_id,
            "group.protocol": "consumer", "auto.offset.reset": "earliest"}
    first = Consumer(conf)
    second = None
    try:
        first.subscribe([topic_name])
        wait_until(lambda: len(first.assignment()) == 6, tick=lambda: first.poll(0.05),
                   timeout=10, message="the first member to own all six partitions")
        second = Consumer(conf)
        second.subscribe([topic_name])

        def split():
            a, b = ({tp.partition for tp in c.assignment()} for c in (first, second))
            return a and b and not a & b and a | b == set(range(6))

        def poll_both():
            first.poll(0.02)
            second.poll(0.02)

        # a guard only: at 100 ms this takes a few heartbeats; at the broker's 15 s, 15 s at least
        wait_until(split, tick=poll_both, timeout=10, message="the two members to split six")
    finally:
        for c in (first, second):
            if c is not None:
                c.close()
