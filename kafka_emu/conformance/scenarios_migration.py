"""Kafka's protocol-migration system test (``tests/kafkatest/tests/client/
consumer_protocol_migration_test.py``, ConsumerProtocolMigrationTest) as scenarios: a group's
consumers restarted one at a time on the other group protocol while records flow (the online
upgrade and downgrade, under ``group.consumer.migration.policy``), and all at once (the offline
migration, which converts only empty groups, with the policy disabled).

Each node is started on a protocol of its own (``Harness.start(group_protocol=...)``), so these
run once, in a classic run, and only for clients that speak both protocols. Checked besides the
shared rules (no overlapping ownership, valid assignments, the stream rules): the group type
ListGroups shows before and after, a valid assignment after every restart, and Kafka's ending
(nothing lost or read twice, the last commits at the positions). Kafka's test uses five
consumers and six partitions, RangeAssignor for the classic members; here three and six.
"""

from __future__ import annotations

from .harness import CONSUMER_PROTOCOL_SETTINGS, Harness
from .record import Violation
from .scenarios import finish, nodes, scenario

RANGE = "org.apache.kafka.clients.consumer.RangeAssignor"
PARTITIONS = 6
ONCE = ("the scenario starts each consumer on a group protocol of its own; it runs in the "
        "classic run only")
NEEDS = ("consumer_protocol",)


def _start(h: Harness, node: str, protocol: str) -> None:
    if protocol == "classic":
        h.start(node, group_protocol="classic", assignment_strategy=RANGE)
    else:
        h.start(node, group_protocol="consumer", remote_assignor="uniform")


def _group_type(h: Harness, want: str, when: str) -> None:
    """ListGroups shows the group as ``want`` (the scenario fails, naming ``when``, if not)."""
    h.wait_until(f"the group listed as a {want} group {when}", lambda: h.group_type() == want)


def _rolling(h: Harness, first: str, then: str) -> list[Violation]:
    """Start every node on ``first``, then restart them one at a time on ``then``."""
    h.migrating = True
    h.produce_in_background()
    for node in nodes():
        _start(h, node, first)
    h.await_all_members()
    h.await_valid_assignment(len(nodes()), f"all on the {first} protocol")
    h.await_consumed()
    _group_type(h, first, "before the migration")
    for i, node in enumerate(nodes(), 1):
        h.stop(node)
        _start(h, node, then)
        h.await_all_members()
        h.await_valid_assignment(len(nodes()), f"{i} of {len(nodes())} on the {then} protocol")
        h.await_consumed()
    _group_type(h, then, "after the migration")
    return finish(h)


@scenario("consumer_rolling_upgrade", "ConsumerProtocolMigrationTest.test_consumer_rolling_upgrade"
          " (RangeAssignor, group.consumer.migration.policy=bidirectional)",
          partitions=PARTITIONS, needs=NEEDS, not_on={"consumer": ONCE},
          settings={**CONSUMER_PROTOCOL_SETTINGS,
                    "group.consumer.migration.policy": "bidirectional"})
def consumer_rolling_upgrade(h: Harness) -> list[Violation]:
    """Classic consumers are restarted one at a time on the consumer protocol while records
    flow: the first converts the group to a consumer group, in which the classic ones go on
    until their turn; a valid assignment after every restart, nothing lost or read twice."""
    return _rolling(h, "classic", "consumer")


@scenario("consumer_rolling_downgrade",
          "ConsumerProtocolMigrationTest.test_consumer_rolling_downgrade (RangeAssignor, "
          "group.consumer.migration.policy=downgrade)",
          partitions=PARTITIONS, needs=NEEDS, not_on={"consumer": ONCE},
          settings={**CONSUMER_PROTOCOL_SETTINGS,
                    "group.consumer.migration.policy": "downgrade"})
def consumer_rolling_downgrade(h: Harness) -> list[Violation]:
    """Consumer-protocol consumers are restarted one at a time on the classic protocol while
    records flow: the classic ones join the consumer group, and the last consumer-protocol one
    leaving converts it back to a classic group; nothing lost or read twice."""
    return _rolling(h, "consumer", "classic")


@scenario("consumer_offline_migration",
          "ConsumerProtocolMigrationTest.test_consumer_offline_migration (RangeAssignor, "
          "group.consumer.migration.policy=disabled)",
          partitions=PARTITIONS, needs=NEEDS, not_on={"consumer": ONCE},
          settings={**CONSUMER_PROTOCOL_SETTINGS,
                    "group.consumer.migration.policy": "disabled"})
def consumer_offline_migration(h: Harness) -> list[Violation]:
    """All consumers stop, the group goes empty, and all start on the other protocol: an empty
    group converts whatever the policy, there and back; committed offsets carry over, so
    nothing is lost or read twice."""
    h.migrating = True
    h.produce_in_background()
    for i, protocol in enumerate(("classic", "consumer", "classic")):
        if i:  # everyone stops (cleanly: each leaves), and the group is empty
            for node in nodes():
                h.stop(node)
            h.wait_until("the group empty", lambda: h.group_state()[1] == 0)
        for node in nodes():
            _start(h, node, protocol)
        h.await_all_members()
        h.await_valid_assignment(len(nodes()), f"all on the {protocol} protocol")
        h.await_consumed()
        _group_type(h, protocol, f"with all on the {protocol} protocol")
    return finish(h)
