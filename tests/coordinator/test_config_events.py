"""CoordinatorConfig (section 6), the observation seam, timers and purity."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kafka_emu.coordinator import (
    Coordinator,
    CoordinatorConfig,
    GenerationChanged,
    GroupState,
    Heartbeat,
    JoinGroup,
    MemberAdded,
    ReplyEmitted,
    RequestParked,
    StateChanged,
)
from kafka_emu.coordinator.timers import Timers

from .harness import E, Harness


# ==================================================================================== config
def test_defaults_are_kafkas_except_initial_delay():
    c = CoordinatorConfig()
    assert c.group_min_session_timeout_ms == 6000
    assert c.group_max_session_timeout_ms == 1_800_000
    assert c.group_initial_rebalance_delay_ms == 100  # Kafka: 3000 (bench_initial_delay.py)
    assert c.group_max_size == 2**31 - 1
    assert c.offsets_retention_minutes == 10080
    assert c.offsets_retention_check_interval_ms == 600_000
    assert c.offset_metadata_max_bytes == 4096
    assert c.offsets_retention_ms == 10080 * 60_000


def test_from_kafka_maps_names():
    c = CoordinatorConfig.from_kafka(
        {
            "group.initial.rebalance.delay.ms": "3000",
            "group.max.size": "5",
            "offsets.retention.minutes": "1",
            "offset.metadata.max.bytes": " 10 ",
        }
    )
    assert (c.group_initial_rebalance_delay_ms, c.group_max_size) == (3000, 5)
    assert (c.offsets_retention_minutes, c.offset_metadata_max_bytes) == (1, 10)
    assert "group.min.session.timeout.ms" in CoordinatorConfig.KAFKA_NAMES
    # + KIP-848 names, + regex refresh, + share groups' group.share.* and emu.share.version
    assert len(CoordinatorConfig.KAFKA_NAMES) == 7 + 10 + 2 + 18


@pytest.mark.parametrize(
    "settings,fragment",
    [
        ({"group.bogus": "1"}, "unknown coordinator config 'group.bogus'"),
        ({"group.max.size": "lots"}, "expected an integer"),
        ({"group.max.size": "0"}, "below the minimum 1"),
        ({"offsets.retention.minutes": "-5"}, "below the minimum"),
        ({"group.min.session.timeout.ms": "10", "group.max.session.timeout.ms": "5"}, "exceeds"),
    ],
)
def test_from_kafka_rejects_with_one_line_message(settings, fragment):
    with pytest.raises(ValueError) as info:
        CoordinatorConfig.from_kafka(settings)
    message = str(info.value)
    assert fragment in message and "\n" not in message


# ==================================================================================== events
def test_observer_sees_lifecycle_in_order():
    h = Harness()
    h.stable_group(2)
    kinds = [type(e).__name__ for e in h.events]
    assert kinds[0] == "GroupCreated"
    states = [(e.old, e.new) for e in h.events_of(StateChanged)]
    assert states == [
        (GroupState.EMPTY, GroupState.PREPARING_REBALANCE),
        (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE),
        (GroupState.COMPLETING_REBALANCE, GroupState.STABLE),
    ]
    (gen,) = h.events_of(GenerationChanged)
    assert (gen.generation, gen.protocol_name, gen.leader) == (1, "range", "c-u1")
    assert [e.member_id for e in h.events_of(MemberAdded)] == ["c-u1", "c-u2"]
    errors = [(e.api, e.error) for e in h.events_of(ReplyEmitted)]
    assert errors.count(("JoinGroup", E.MEMBER_ID_REQUIRED)) == 2
    assert errors.count(("SyncGroup", E.NONE)) == 2
    parked = {e.request_id for e in h.events_of(RequestParked)}
    replied = {e.request_id for e in h.events_of(ReplyEmitted)}
    assert parked <= replied


def test_reply_event_per_reply_with_summary_error():
    h = Harness()
    h.commit([("t", 0, 1)], member_id="m", generation=3)
    (event,) = h.events_of(ReplyEmitted)
    assert event.api == "OffsetCommit" and event.error == E.GROUP_ID_NOT_FOUND


def test_no_observer_no_events_built(monkeypatch):
    import importlib

    import kafka_emu.coordinator.events as ev

    def boom(*a, **k):
        raise AssertionError("event built without an observer")

    event_names = [n for n in ev.__all__] if hasattr(ev, "__all__") else [
        n for n, v in vars(ev).items() if isinstance(v, type) and v.__module__ == ev.__name__
    ]
    for module_name in ("core", "group", "join", "membership", "rebalance", "offsets", "admin", "coordinator"):
        module = importlib.import_module(f"kafka_emu.coordinator.{module_name}")
        for name in event_names:
            if name != "RemovalReason" and hasattr(module, name):
                monkeypatch.setattr(module, name, boom)
    coord = Coordinator()
    join = JoinGroup(
        request_id=1, group_id="g", member_id="", group_instance_id=None, session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000, protocol_type="consumer", protocols=(("range", b""),),
        client_id="c", client_host="h", require_known_member_id=False,
    )
    coord.handle(join, 0)
    coord.expire(0)
    coord.handle(Heartbeat(request_id=2, group_id="g", generation_id=1, member_id="x", group_instance_id=None), 1)
    coord.expire(10**9)  # sessions expire, group empties, retention deletes it
    assert coord.group_ids() == []


# ==================================================================================== timers
def test_timers_keyed_replace_cancel_and_order():
    t = Timers()
    t.schedule("a", 10)
    t.schedule("b", 5)
    t.schedule("c", 5)
    t.schedule("a", 3)  # replaces
    t.cancel("b")
    assert t.next_deadline() == 3
    assert t.pop_due(100)[:2] == ("a", 3)
    assert t.pop_due(100)[:2] == ("c", 5)
    assert t.pop_due(100) is None
    assert t.next_deadline() is None


def test_timers_heap_compacts_under_churn():
    t = Timers()
    for i in range(10_000):
        t.schedule("hb", i)
    assert len(t) == 1 and len(t.heap) < 200


def test_time_does_not_run_backwards():
    h = Harness()
    m, rid, _ = h.new_member(now=1000)
    h.coord.expire(5000)
    # A caller reading its clock a little late: treated as 5000, not an error.
    assert h.coord.handle(Heartbeat(request_id="z", group_id="g", generation_id=1, member_id=m, group_instance_id=None), 4999)
    assert h.coord.timer_deadlines()[("heartbeat", "g", m)] == 5000 + 10_000


def test_handle_fires_overdue_timers_first():
    """handle(cmd, now) first fires timers due strictly before now: a heartbeat arriving after the
    session expired finds the member gone."""
    h = Harness()
    (m,) = h.stable_group(1)
    assert h.heartbeat(m, 1, now=10_001).error == E.UNKNOWN_MEMBER_ID


def test_importing_coordinator_does_not_import_trio():
    code = "import sys, kafka_emu.coordinator; print('trio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ================================================================== unload and error plumbing
def test_mark_dead_answers_parked_requests_not_coordinator():
    """3.11 unload: parked JoinGroups (PreparingRebalance) / SyncGroups (Completing/Stable) get
    NOT_COORDINATOR(16); the group stays Dead with no timers."""
    h = Harness()
    a, b = h.stable_group(2)
    rid, _ = h.join(a, now=5)
    replies = {r.request_id: r.result for r in h.coord.mark_dead("g", 6)}
    assert replies[rid].error == E.NOT_COORDINATOR and replies[rid].member_id == a
    assert h.state() == "Dead"
    assert [k for k in h.coord.timer_deadlines() if k[0] != "retention"] == []

    h2 = Harness()
    ids = [h2.new_member()[0] for _ in range(2)]
    h2.tick()
    rid, _ = h2.sync(ids[1], 1)
    replies = {r.request_id: r.result for r in h2.coord.mark_dead("g", 6)}
    assert replies[rid].error == E.NOT_COORDINATOR


def test_kafka_error_raised_by_a_handler_becomes_an_error_reply(monkeypatch):
    """STYLE 6: one except per entry point turns an internal KafkaError into a reply."""
    from kafka_emu.coordinator import coordinator as coordinator_module
    from kafka_emu.errors import KafkaError

    def failing(core, command):
        raise KafkaError(E.COORDINATOR_LOAD_IN_PROGRESS)

    handlers = dict(coordinator_module._HANDLERS)
    handlers[Heartbeat] = ("Heartbeat", failing)
    monkeypatch.setattr(coordinator_module, "_HANDLERS", handlers)
    coord = Coordinator()
    (reply,) = coord.handle(Heartbeat(request_id=1, group_id="g", generation_id=0, member_id="m", group_instance_id=None), 0)
    assert reply.request_id == 1 and reply.result.error == E.COORDINATOR_LOAD_IN_PROGRESS


def test_error_result_shapes():
    from kafka_emu.coordinator import (
        CommitOffset,
        DeleteGroups,
        DescribeGroups,
        LeaveGroup,
        ListGroups,
        OffsetCommit,
        OffsetDelete,
        OffsetFetch,
        SyncGroup,
        error_result,
    )

    code = E.COORDINATOR_NOT_AVAILABLE
    assert error_result(OffsetCommit(
        request_id=1, group_id="g", generation_id=1, member_id="m", group_instance_id=None,
        offsets=(CommitOffset(topic="t", partition=0, offset=1),),
    ), code).partitions[0].error == code
    assert error_result(DeleteGroups(request_id=1, group_ids=("a", "a", "b")), code).results == (("a", code), ("b", code))
    assert error_result(DescribeGroups(request_id=1, group_ids=("a",)), code).groups[0].error == code
    for command in (
        SyncGroup(request_id=1, group_id="g", generation_id=1, member_id="m", group_instance_id=None,
                  protocol_type=None, protocol_name=None, assignments=()),
        LeaveGroup(request_id=1, group_id="g", members=()),
        ListGroups(request_id=1),
        OffsetFetch(request_id=1, group_id="g", topics=None),
        OffsetDelete(request_id=1, group_id="g", partitions=()),
    ):
        assert error_result(command, code).error == code
