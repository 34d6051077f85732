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
from kafka_emu.broker.observe import REQUEST_REFS, Observation, event_class, row_of
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
    told = []  # what the coordinator would be told (broker: Coordinator.set_observer)
    observation = Observation(on_change=told.append)
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
