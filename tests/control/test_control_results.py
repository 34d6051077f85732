"""Every control operation's declared result (``control/results.py``, the ops function's return
annotation) against what it really returns: a stable two-member group, offsets, fault rules,
moves in a two-broker cluster and the clock, each answer validated through the Python handle
against the JSON Schema the OpenAPI document derives from the same declaration (required keys,
no undeclared ones, value types, ``list`` not ``tuple``)."""

from __future__ import annotations

import typing
from typing import Any

import jsonschema
import pytest
from test_control_core import SESSION, heartbeat, manual, stable_pair

from kafka_emu.control.openapi import result_schema
from kafka_emu.protocol import BY_NAME
from kafka_emu.testing.wire import WireClient
from kafka_emu.control.operations import all_operations
from kafka_emu.control.results import DeadlineKind
from kafka_emu.control.timing import KINDS
from kafka_emu.testing import open_emulator


def test_every_operation_declares_its_result_type():
    undeclared = [name for name, op in all_operations().items() if op.result is Any]
    assert undeclared == [], "annotate the ops function's return with a control/results.py type"


def test_the_deadline_kinds_declared_for_results_are_the_control_plane_s():
    assert typing.get_args(DeadlineKind) == KINDS


class Checked:
    """Validates each answer against its operation's result schema and remembers which
    operations were seen."""

    def __init__(self) -> None:
        self.components: dict[str, Any] = {}
        self.seen: set[str] = set()

    def __call__(self, name: str, value: Any) -> Any:
        schema = result_schema(all_operations()[name].result, self.components)
        jsonschema.validate(value, {**schema, "components": {"schemas": self.components}})
        self.seen.add(name)
        return value


async def test_every_answer_matches_its_declared_result():
    check = Checked()
    async with open_emulator(manual(**{"emu.brokers": 2})) as emu:
        (a, b), ids = await stable_pair(emu)

        view = check("group_view", await emu.group_view("g"))
        assert view["members"][0]["assignment"] is not None  # decoded, so its schema is used
        check("wait_for_group", await emu.wait_for_group("g", members=2, timeout=5))
        check("groups", await emu.groups())
        check("set_offsets", await emu.set_offsets("g", {("t", 0): 0, ("t", 2): 0}))
        check("committed_offsets", await emu.committed_offsets("g"))
        check("clock", await emu.clock())
        sessions = check("deadlines", await emu.deadlines("g", kind="session"))
        assert len(sessions) == 2

        # the clock: one member silent past its session expires, a rebalance starts
        await emu.advance(SESSION // 2)
        await heartbeat(a, ids["a"], "i-a")
        happened = check("advance_to_next_deadline",
                         await emu.advance_to_next_deadline("g", kind="session"))
        assert happened["members_expired"] and happened["rebalances_started"]
        assert happened["events"]
        check("advance", await emu.advance(1))
        check("timeline", await emu.timeline(group_id="g"))
        check("requests", await emu.requests(api="JoinGroup"))

        # group operations (what happened is declared too)
        check("trigger_rebalance", await emu.trigger_rebalance("g"))
        check("ignore_heartbeats", await emu.ignore_heartbeats("g", group_instance_id="i-a"))
        check("expire_member", await emu.expire_member("g", group_instance_id="i-a"))
        for client in (a, b):
            await client.aclose()
        await emu.advance(60_000)  # every member gone: the group is Empty, then deletable
        deleted = check("delete_group", await emu.delete_group("g", force=True))
        assert deleted["groups_deleted"][0]["group_id"] == "g"

        # faults: each action shape
        for rule in ({"action": "error", "api": "Heartbeat", "error": "REBALANCE_IN_PROGRESS",
                      "message": "no"},
                     {"action": "delay", "delay_ms": 5, "always": True},
                     {"action": "throttle", "throttle_ms": 5, "probability": 0.5, "seed": 3}):
            check("add_fault", _run("add_fault", emu, **rule))
        assert isinstance(await emu.add_fault("close_before", group_id="x"), int)
        listed = check("list_faults", await emu.faults())
        check("remove_fault", await emu.remove_fault(listed[0]["id"]))
        check("clear_faults", _run("clear_faults", emu))

        # topics and the cluster
        check("create_topic", _run("create_topic", emu, name="audit", partitions=2))
        check("list_topics", _run("list_topics", emu))
        check("list_brokers", await emu.brokers())
        check("describe_partition", await emu.partition("t", 0))
        leader = (await emu.partition("t", 0))["leader"]
        other = 1 if leader == 2 else 2
        check("move_leader", await emu.move_leader("t", 0, to=other))
        check("elect_preferred_leaders", _run("elect_preferred_leaders", emu))
        check("group_coordinator", _run("group_coordinator", emu, group_id="h"))
        coordinator = await emu.coordinator_of("h")
        check("move_coordinator", await emu.move_coordinator("h", 1 if coordinator == 2 else 2,
                                                             load_ms=0))
        check("stop_broker", await emu.stop_broker(2))
        check("start_broker", await emu.start_broker(2))

        # a static member removed by instance id (KIP-345)
        (a, b), ids = await stable_pair(emu)
        check("remove_static_member", await emu.remove_static_member("g", "i-b"))
        for client in (a, b):
            await client.aclose()
        # share groups: one share-partition with two records acquired by one member
        _share_partition(emu.broker)
        view = check("share_partitions", _run("share_partitions", emu, group_id="sg"))
        assert [r["state"] for r in view[0]["in_flight"]] == ["ACQUIRED", "ACQUIRED"]
        assert check("expire_share_locks", _run("expire_share_locks", emu, group_id="sg")) == {
            "released": 2, "archived": 0}
        # transactions: two ongoing, listed, one aborted by the operator, one timed out now
        for tid in ("tx-a", "tx-b"):
            _transaction(emu.broker, tid)
        check("transactions", _run("transactions", emu))
        check("abort_transaction", _run("abort_transaction", emu, transactional_id="tx-a"))
        check("expire_transaction", _run("expire_transaction", emu, transactional_id="tx-b"))
        assert await emu.unexpected_errors() == []

    # ACLs: on an emulator with an authorizer (the one above has none)
    async with open_emulator(manual(**{
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "emu.acls": "DENY User:ANONYMOUS READ GROUP g"})) as emu:
        check("add_acls", _run("add_acls", emu, acls="ALLOW User:a READ TOPIC:PREFIXED t-"))
        assert len(check("acls", _run("acls", emu))) == 2
        check("remove_acls", _run("remove_acls", emu, acls="ALLOW User:a READ TOPIC:PREFIXED t-"))
        client = await WireClient.connect(emu.host, emu.port)
        await client.request(BY_NAME["Heartbeat"], 4, BY_NAME["Heartbeat"].request(group_id="g"))
        await client.aclose()
        assert check("acl_denials", _run("acl_denials", emu))[0]["count"] == 1

    missed = sorted(set(all_operations()) - check.seen)
    assert missed == [], f"no answer of these was checked: {missed}"


def _params(name: str, raw: dict[str, Any]) -> Any:
    from kafka_emu.control.operations import parse_params
    return parse_params(all_operations()[name], raw)


def _transaction(broker, transactional_id: str) -> None:
    coordinator, now = broker.transactions, broker.now_ms()
    pid = coordinator.init_producer_id(transactional_id, 60_000, None, now).producer_id
    coordinator.add_partitions(transactional_id, pid, 0, [("t", 0)], now)


def _share_partition(broker) -> None:
    from kafka_emu.coordinator.share.partition_state import LogBatch
    topic_id = broker.topics.lookup("t").topic_id
    sp = broker.share_fetching.delivery.partition("sg", topic_id, 0, create=True)
    sp.reset_to(0)
    sp.acquire("m", [LogBatch(0, 1)], log_start=0, log_limit=2, max_records=10,
               now_ms=broker.now_ms())


def _run(op_name: str, emu: Any, /, **raw: Any) -> Any:
    """An operation the handles do not offer as a method, run as the HTTP endpoint runs it (on
    the emulator's own trio thread, which an AsyncEmulator's caller is)."""
    return all_operations()[op_name].run(emu.broker, _params(op_name, raw))


@pytest.mark.parametrize("answer", [
    {"now_ms": 1, "mode": "manual", "advanced_ms": 0, "surprise": 1},  # an undeclared key
    {"now_ms": 1, "mode": "nap", "advanced_ms": 0},  # a value outside the Literal
    {"now_ms": 1, "mode": "manual"},  # a key missing
    {"now_ms": "1", "mode": "manual", "advanced_ms": 0},  # a wrong type
])
def test_the_check_refuses_an_answer_that_drifted_from_its_declaration(answer):
    check = Checked()
    check("clock", {"now_ms": 1, "mode": "manual", "advanced_ms": 0})
    with pytest.raises(jsonschema.ValidationError):
        check("clock", answer)
