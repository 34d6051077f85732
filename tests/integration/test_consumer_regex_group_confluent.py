"""Regex subscriptions resolved per group (KIP-848, #34 item 4) with a real client: three
confluent-kafka consumers with group.protocol=consumer subscribe by one pattern before any topic
matches it; topics matching it are then created, one is deleted and one gains partitions. After
every step each partition is owned by exactly one member, on the broker and in the clients.

Before, each member resolved the pattern on its own heartbeat: the first to see a new topic took
every partition and the others none, for as long as anyone waited (librdkafka's own
0113_cooperative_rebalance n_wildcard waited 75 s)."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewPartitions

from .test_consumer_protocol_confluent import SETTINGS, Watch, make_consumer

PATTERN = "^metrics-.*"


def shared(emu, group_id, watch, expected: dict[str, int], members: int = 3):
    """Every partition of ``expected`` owned once, by members that all own some, in the broker's
    Stable view and in the clients' own assignments; None until then."""
    watch.tick()
    d = emu.describe_consumer_group(group_id)
    if d.error != 0 or d.state != "Stable" or len(d.members) != members:
        return None
    wanted = {(t, p) for t, n in expected.items() for p in range(n)}
    for owned in ([{(t, p) for t, ps in m.assignment for p in ps} for m in d.members],
                  watch.owned()):
        every = [tp for o in owned for tp in o]
        if len(every) != len(set(every)) or set(every) != wanted or not all(owned):
            return None
    return d


def test_pattern_members_share_topics_created_deleted_and_grown(kafka_emu_factory, group_id):
    emu = kafka_emu_factory(SETTINGS, topics={"other": 2})
    admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
    consumers = [make_consumer(emu, group_id, **{"topic.metadata.refresh.interval.ms": 500})
                 for _ in range(3)]
    for c in consumers:
        c.subscribe([PATTERN])
    watch = Watch(consumers)

    def members_joined():
        watch.tick()
        return len(emu.describe_consumer_group(group_id).members) == 3

    try:
        emu.wait_for(members_joined, timeout=60)  # a hang guard, not a timed assertion
        emu.create_topic("metrics-a", 6)
        emu.wait_for(lambda: shared(emu, group_id, watch, {"metrics-a": 6}), timeout=60)
        emu.create_topic("metrics-b", 3)
        emu.wait_for(lambda: shared(emu, group_id, watch, {"metrics-a": 6, "metrics-b": 3}),
                     timeout=60)
        admin.delete_topics(["metrics-a"])["metrics-a"].result(30)
        emu.wait_for(lambda: shared(emu, group_id, watch, {"metrics-b": 3}), timeout=60)
        admin.create_partitions([NewPartitions("metrics-b", 6)])["metrics-b"].result(30)
        d = emu.wait_for(lambda: shared(emu, group_id, watch, {"metrics-b": 6}), timeout=60)
        # the pattern reached the broker (librdkafka sends its regexes joined, each in brackets)
        assert {m.subscribed_topic_regex for m in d.members} == {f"({PATTERN})"}
        assert not watch.overlaps
    finally:
        for c in consumers:
            c.close()


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])
