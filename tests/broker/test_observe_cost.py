"""Observation made cheaper without changing what any sink sees (issues 9 and 10):

- a request kept by reference stores the clock's ``ms_later`` and its reading instead of
  at_ms; read later -- after the clock moved on, or was advanced -- it tells the at_ms it had;
- a sink may say it does not want the coordinator's ReplyEmitted (the trace writer): while no
  sink wants them the coordinator builds none, while one does every sink gets them, and every
  other event reaches every sink either way.
"""

from __future__ import annotations

from functools import partial

import trio
import trio.testing

from kafka_emu.broker.clock import Clock, perf_now
from kafka_emu.broker.observe import Observation
from kafka_emu.broker.event_rows import REQUEST_REFS, as_event, event_class, row_of
from kafka_emu.coordinator import Coordinator, CoordinatorConfig
from kafka_emu.coordinator.commands import Heartbeat, JoinGroup
from kafka_emu.coordinator.events import GroupCreated, ReplyEmitted
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.testing import make_config
from kafka_emu.testing.wire import WireClient

HEARTBEAT, JOIN_GROUP = BY_NAME["Heartbeat"], BY_NAME["JoinGroup"]


def _record(at, started, done):
    return (REQUEST_REFS, HeartbeatRequest(group_id="g", generation_id=1, member_id="m"),
            HeartbeatResponse(error_code=0), started, done, at, 1, "h:1", "Heartbeat", 12, 4,
            7, "c", None, None)


async def test_a_record_read_later_tells_the_at_ms_of_when_it_was_handled():
    for clock in (Clock(), Clock(manual=True)):
        stamp = perf_now()
        at_ms = clock.ms_at(stamp)
        kept = _record(clock.ms_later, stamp - 0.001, stamp)
        assert clock.ms_later is not None
        clock.advance(5000)  # read after the clock moved: the time it was handled, still
        await trio.sleep(0.003)
        assert row_of(kept) == row_of(_record(at_ms, stamp - 0.001, stamp))
        assert row_of(kept)[1] == at_ms


async def test_under_a_mock_clock_at_ms_is_read_at_once(autojump_clock):
    clock = Clock()
    assert clock.ms_later is None  # its ms_at asks the clock: it cannot be asked later


def test_replies_are_built_while_one_sink_wants_them():
    observation = Observation()
    assert observation.replies
    stop_trace = observation.subscribe(lambda e: None, rows=True, replies=False)
    assert not observation.replies
    stop_timeline = observation.subscribe(lambda e: None, rows=True, refs=True)
    assert observation.replies
    stop_timeline()
    assert not observation.replies
    stop_trace()


def test_the_coordinator_builds_no_reply_nobody_wants_and_every_other_event():
    def run(replies):
        seen = []
        coordinator = Coordinator(CoordinatorConfig())
        coordinator.set_observer(seen.append, rows=True, replies=replies)
        coordinator.handle(JoinGroup(
            request_id=1, group_id="g", member_id="", group_instance_id=None, client_id="c",
            client_host="h", session_timeout_ms=10000, rebalance_timeout_ms=10000,
            protocol_type="consumer", protocols=(("range", b""),)), 1000)
        coordinator.handle(Heartbeat(request_id=2, group_id="g", member_id="nobody",
                                     generation_id=1, group_instance_id=None), 1001)
        return [event_class(e) for e in seen]
    wanted, unwanted = run(True), run(False)
    assert ReplyEmitted in wanted and GroupCreated in wanted
    assert unwanted == [cls for cls in wanted if cls is not ReplyEmitted]


async def test_a_sink_that_wants_no_replies_gets_them_while_another_sink_wants_them():
    from kafka_emu.broker.server import serve
    without, others = [], []
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, make_config(
            {"group.initial.rebalance.delay.ms": 0, "emu.timeline.max.events": 0})))
        observation = bound.broker.observation
        observation.subscribe(without.append, rows=True, replies=False)
        stop_other = observation.subscribe(others.append, rows=True)
        client = await WireClient.connect(bound.host, bound.port, client_id="cost-test")

        async def talk():
            await client.request(JOIN_GROUP, 5, JoinGroupRequest(
                group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000,
                member_id="", group_instance_id=None, protocol_type="consumer",
                protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")]))
            await client.request(HEARTBEAT, 4, HeartbeatRequest(
                group_id="g", generation_id=1, member_id="nobody", group_instance_id=None))
            observation.drain()
        await talk()
        shared = len(without)
        assert [event_class(e) for e in without] == [event_class(e) for e in others]
        assert ReplyEmitted in [event_class(e) for e in without]
        stop_other()  # now nobody wants them: none is built, everything else still comes
        await talk()
        later = [event_class(e) for e in without[shared:]]
        assert ReplyEmitted not in later
        names = [cls.__name__ for cls in later]
        assert names.count("RequestHandled") == 2
        await client.aclose()
        nursery.cancel_scope.cancel()


async def test_a_held_batch_appends_without_a_call_and_delivers_in_order_at_release():
    told = []  # what the coordinator would be told (the broker: swap_observer)
    observation = Observation()
    observation.on_swap = told.append
    seen: list = []
    rows = [("ReplyEmitted", i, "g", i, "Heartbeat", 0) for i in range(4)]
    async with trio.open_nursery() as nursery:
        await nursery.start(observation.deliver_deferred)
        observation.subscribe(seen.append, rows=True, many=seen.extend)
        free = observation.emit
        observation.hold()
        held = observation.emit
        assert held is not free and told[-1] is held
        held(rows[0])
        held(rows[1])
        await trio.testing.wait_all_tasks_blocked()
        assert seen == []  # nothing woke the delivery task: the batch's release delivers
        observation.release()
        assert observation.emit is free and told[-1] is free and seen == rows[:2]
        observation.emit(rows[2])  # outside a batch: the delivery task is woken
        await trio.testing.wait_all_tasks_blocked()
        assert seen == rows[:3]
        observation.hold()
        observation.emit(rows[3])
        observation.drain()  # a reader delivers what a held batch emitted so far
        assert seen == rows
        observation.release()
        nursery.cancel_scope.cancel()


def _scenario(coordinator):
    """Replies of several kinds: a join (MEMBER_ID_REQUIRED, then joined after the initial
    delay), heartbeats ok and refused, commits with per-partition errors, a leave of unknown
    members (per-member errors), a describe, deletes."""
    from kafka_emu.coordinator.commands import (CommitOffset, DeleteGroups, DescribeGroups,
                                                LeaveGroup, LeaveMember, OffsetCommit)

    def join(rid, member, now):
        return coordinator.handle(JoinGroup(
            request_id=rid, group_id="g", member_id=member, group_instance_id=None,
            client_id="c", client_host="h", session_timeout_ms=10000,
            rebalance_timeout_ms=10000, protocol_type="consumer",
            protocols=(("range", b""),)), now)
    member = join(1, "", 1000)[0].result.member_id
    join(2, member, 1001)
    coordinator.expire(1000 + 60000)  # the initial delay passes: the join is answered
    coordinator.handle(Heartbeat(request_id=3, group_id="g", member_id=member,
                                 generation_id=1, group_instance_id=None), 61001)
    coordinator.handle(Heartbeat(request_id=4, group_id="g", member_id="nobody",
                                 generation_id=1, group_instance_id=None), 61002)
    coordinator.handle(OffsetCommit(request_id=5, group_id="g", generation_id=7,
                                    member_id=member, group_instance_id=None,
                                    offsets=(CommitOffset(topic="t", partition=0, offset=1),)),
                       61003)
    coordinator.handle(OffsetCommit(request_id=6, group_id="other", generation_id=-1,
                                    member_id="", group_instance_id=None,
                                    offsets=(CommitOffset(topic="t", partition=0, offset=1),)),
                       61004)
    coordinator.handle(LeaveGroup(request_id=7, group_id="g",
                                  members=(LeaveMember(member_id="x"),)), 61005)
    coordinator.handle(DescribeGroups(request_id=8, group_ids=("g", "none")), 61006)
    coordinator.handle(DeleteGroups(request_id=9, group_ids=("g", "other", "none")), 61007)


def test_replies_by_reference_read_as_the_rows_the_coordinator_would_have_made():
    def run(**mode):
        seen = []
        ids = iter(range(100))
        coordinator = Coordinator(CoordinatorConfig(), new_member_uuid=lambda: f"u{next(ids)}")
        coordinator.set_observer(seen.append, rows=True, **mode)
        _scenario(coordinator)
        return seen
    rows, refs = run(), run(reply_refs=True)
    kept = [e for e in refs if type(e) is tuple and e[0] == "ReplyEmitted/refs"]
    assert len(kept) >= 9 and {row_of(e)[5] for e in kept} - {0}  # some errors among them
    assert [row_of(e) for e in refs] == rows
    assert all(event_class(e) is ReplyEmitted for e in kept)
    assert [as_event(e) for e in refs] == [as_event(e) for e in rows]


async def test_the_timeline_keeps_replies_by_reference_and_reads_them_as_before():
    from kafka_emu.broker.server import serve
    from kafka_emu.control.plane import control_of
    from kafka_emu.control.timeline import event_dict
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, make_config(
            {"group.initial.rebalance.delay.ms": 0})))
        timeline = control_of(bound.broker).timeline
        client = await WireClient.connect(bound.host, bound.port, client_id="cost-test")
        for i in range(3):
            await client.request(HEARTBEAT, 4, HeartbeatRequest(
                group_id="g", generation_id=i, member_id=f"m{i}", group_instance_id=None))
        replies = timeline.select(types=("ReplyEmitted",))
        raw = [e for e in timeline.events if type(e) is tuple and e[0] == "ReplyEmitted/refs"]
        # one more sink (rows): the coordinator makes rows again, read the same way
        rows: list = []
        bound.broker.observation.subscribe(rows.append, rows=True)
        await client.request(HEARTBEAT, 4, HeartbeatRequest(
            group_id="g", generation_id=9, member_id="m9", group_instance_id=None))
        await client.aclose()
        later = timeline.select(types=("ReplyEmitted",))
        nursery.cancel_scope.cancel()
    assert len(raw) == 3 and len(replies) == 3
    assert [event_dict(None, e) for e in raw] == [{k: v for k, v in d.items() if k != "seq"}
                                                  for d in replies]
    assert all(d["api"] == "Heartbeat" and d["error"] == 25 for d in later)  # UNKNOWN_MEMBER_ID
    assert later[:3] == replies and len(later) == 4
    assert [r for r in rows if type(r) is tuple and r[0] == "ReplyEmitted"][0][1:] == tuple(
        v for k, v in later[3].items() if k not in ("seq", "type"))


async def test_the_inline_millisecond_test_answers_what_ms_at_answers():
    """The request path tests ``Clock.ms_cache`` inline before it calls ``ms_at``: the answer
    is the same for every reading, and a record's older ``ms_later`` asked later (after an
    advance) never changes what the newer clock's cache says."""
    import math
    for clock in (Clock(), Clock(manual=True)):
        now = perf_now()
        old = clock.ms_later
        readings = [now + k * 0.00037 for k in range(2000)] + [now - 1.0, now + 5.0, now]

        def inline(perf, clock=clock):
            cache = clock.ms_cache
            return cache[2] if cache[0] <= perf < cache[1] else clock.ms_at(perf)
        expected = [clock.ms_at(p) for p in readings]
        assert [inline(p) for p in readings] == expected
        clock.advance(3000)
        newer = [inline(p) for p in readings]
        assert [old(p) for p in readings] == expected  # the older closure: its own answers
        assert [inline(p) for p in readings] == newer == [clock.ms_at(p) for p in readings]
        assert all(n == e + 3000 for n, e in zip(newer, expected))
        assert not math.isnan(clock.ms_cache[0])


async def test_under_a_mock_clock_the_inline_test_never_answers(autojump_clock):
    clock = Clock()
    cache = clock.ms_cache
    assert not cache[0] <= perf_now() < cache[1]


def test_the_coordinator_keeps_replies_by_reference_from_the_first_one(monkeypatch):
    """Replies go by reference as soon as every sink takes references -- also before the
    request path has met any request class it keeps by reference (a fresh server)."""
    from kafka_emu.broker import observe
    monkeypatch.setattr(observe, "BY_REFERENCE", set())  # as in a fresh process
    told = {}

    class Coordinator:  # what Observation.tell hands over
        def set_observer(self, observer, **forms):
            told.update(forms)
    observation = Observation()
    stop = observation.subscribe(lambda e: None, rows=True, refs=True)
    observation.tell(Coordinator())
    assert told["reply_refs"] is True and not observation.by_reference
    observation.subscribe(lambda e: None, rows=True)
    observation.tell(Coordinator())
    assert told["reply_refs"] is False
    stop()
