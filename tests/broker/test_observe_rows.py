"""Events as rows (broker/observe.py): the request path emits RequestHandled and the coordinator
ReplyEmitted as tuples of their fields instead of frozen objects, to make observation cheap
enough to leave on (issue 14 item 3). A row must say exactly what the object would: these
tests build both ways and compare."""

from __future__ import annotations

import enum
import sys
import time
import types
import typing

import attrs
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker.clock import Clock, perf_now
from kafka_emu.broker.events import ConnectionOpened, RequestHandled
from kafka_emu.broker.observe import Observation
from kafka_emu.broker.event_rows import (as_event, event_class, event_row, request_facts,
                                         request_identity, request_partitions, response_errors)
from kafka_emu.coordinator import Coordinator, CoordinatorConfig
from kafka_emu.coordinator.events import ReplyEmitted
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import APIS
from kafka_emu.testing.strategies import messages
from kafka_emu.trace.schema import event_classes, to_json_line, to_record

CASES = [(api, version) for api in APIS.values() for version in api.valid]


class _Topic:
    name = "resolved"


def _lookup(topic_id):
    return _Topic() if str(topic_id).endswith("0") else None


def _facts_by_name(request, response, latency):
    """What the request path computed field by field before rows existed."""
    group, member, instance, generation = request_identity(request)
    top, partition_errors = response_errors(response) if response is not None else (None, ())
    return (group, member, instance, generation, latency, top, partition_errors,
            getattr(response, "throttle_time_ms", 0) or 0,
            request_partitions(request, _lookup),
            getattr(request, "session_timeout_ms", None),
            getattr(request, "rebalance_timeout_ms", None))


@pytest.mark.parametrize(("api", "version"), CASES,
                         ids=[f"{api.name}-v{v}" for api, v in CASES])
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_request_facts_match_reading_each_field(api, version, data):
    request = data.draw(messages(api.request, version))
    response = data.draw(messages(api.response, version))
    assert request_facts(request, response, 1.5, _lookup) == _facts_by_name(request, response, 1.5)
    assert request_facts(request, None, 0.0, _lookup) == _facts_by_name(request, None, 0.0)


def _value(tp, i):
    """A value of annotation ``tp`` (distinct per field where the type allows)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return _value(next(a for a in args if a is not type(None)), i)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return (_value(args[0], i),)
        return tuple(_value(a, i + k) for k, a in enumerate(args))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return list(tp)[i % len(tp)]
    return {str: f"s{i}", float: i + 0.5, bool: True, bytes: b""}.get(tp, i)  # ids: ints


def _sample(cls):
    """An instance of an event class with a value of its declared type in every field."""
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return cls(**{f.name: _value(hints[f.name], i) for i, f in enumerate(attrs.fields(cls))})


def test_the_request_path_makes_the_row_request_facts_describes():
    from kafka_emu.broker.event_rows import request_row_maker
    from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
    request = HeartbeatRequest(group_id="g", generation_id=3, member_id="m")
    response = HeartbeatResponse(throttle_time_ms=0, error_code=ErrorCode.ILLEGAL_GENERATION)
    make = request_row_maker(HeartbeatRequest, HeartbeatResponse)
    topics = types.SimpleNamespace(lookup_id=_lookup)  # what the request path passes: the topics
    row = make(request, response, 0.5, topics, 1, 2, "h:1", "Heartbeat", 12, 4, 5, "c", "n", "v")
    assert row == ("RequestHandled", 1, 2, "h:1", "Heartbeat", 12, 4, 5, "c", "n", "v",
                   *request_facts(request, response, 0.5, _lookup))
    assert as_event(row).error_code == ErrorCode.ILLEGAL_GENERATION


def test_rows_round_trip_every_event_class():
    request = RequestHandled(
        at_ms=1, connection_id=2, peer="h:1", api="Heartbeat", api_key=12, version=4,
        correlation_id=5, client_id="c", client_software_name="n", client_software_version="v",
        group_id="g", member_id="m", group_instance_id=None, generation_id=3, latency_ms=0.25,
        error_code=0, partition_errors=(("t", 0, 3),), throttle_time_ms=0,
        partitions=(("t", 0),), session_timeout_ms=None, rebalance_timeout_ms=None)
    reply = ReplyEmitted(at_ms=1, group_id="g", request_id=9, api="Heartbeat",
                         error=ErrorCode.ILLEGAL_GENERATION)
    for event in (request, reply):
        row = event_row(event)
        assert row[0] == type(event).__name__ and event_class(row) is type(event)
        assert as_event(row) == event and as_event(event) is event
        assert to_json_line(row, "run-1", 4) == to_json_line(event, "run-1", 4)
        assert to_record(row) == to_record(event)
    for cls in event_classes():  # the compiled row encoders of every kind say what objects do
        event = _sample(cls)
        assert as_event(event_row(event)) == event
        assert to_json_line(event_row(event), "r", 1) == to_json_line(event, "r", 1)


def test_object_sinks_get_objects_and_row_sinks_rows_in_one_order():
    observation = Observation()
    objects, rows = [], []
    observation.subscribe(objects.append)
    observation.subscribe(rows.append, rows=True)
    opened = ConnectionOpened(at_ms=1, connection_id=1, peer="p", local="l")
    row = ("ReplyEmitted", 2, "g", 1, "Heartbeat", 0)
    observation.emit(opened)
    observation.emit(row)
    assert rows == [opened, row]
    assert objects == [opened, ReplyEmitted(at_ms=2, group_id="g", request_id=1, api="Heartbeat",
                                            error=ErrorCode.NONE)]


def test_a_sink_that_raises_does_not_stop_the_others():
    errors, seen = [], []
    observation = Observation(on_error=errors.append)

    def broken(event):
        raise RuntimeError("broken sink")
    observation.subscribe(broken, rows=True)
    observation.subscribe(seen.append)
    observation.emit(("ReplyEmitted", 2, "g", 1, "Heartbeat", 0))
    assert len(seen) == 1 and isinstance(seen[0], ReplyEmitted) and len(errors) == 1


def test_coordinator_emits_the_same_replies_as_rows():
    from kafka_emu.coordinator.commands import Heartbeat
    def run(rows):
        seen = []
        coordinator = Coordinator(CoordinatorConfig())
        coordinator.set_observer(seen.append, rows=rows)
        coordinator.handle(Heartbeat(request_id=1, group_id="g", member_id="nobody",
                                     generation_id=1, group_instance_id=None), 1000)
        return seen
    objects, rows = run(False), run(True)
    replies = [e for e in rows if type(e) is tuple]
    assert replies and all(type(e[5]) is int for e in replies)  # the error by value
    assert [as_event(e) for e in rows] == objects


async def test_rows_from_the_wire_hold_plain_values_the_collector_lets_go_of():
    """A kept row (timeline, trace queue) must not cost the garbage collector a walk in every
    collection: after one collection CPython stops tracking a tuple of atomic values."""
    import gc
    from functools import partial
    from kafka_emu.broker.server import serve
    from kafka_emu.testing import make_config
    from kafka_emu.testing.wire import WireClient
    rows = []
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, make_config()))
        bound.broker.observation.subscribe(rows.append, rows=True)
        client = await WireClient.connect(bound.host, bound.port)
        from kafka_emu.protocol import BY_NAME
        from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
        await client.request(BY_NAME["Heartbeat"], 4, HeartbeatRequest(
            group_id="g", generation_id=1, member_id="m"))
        await client.aclose()
        nursery.cancel_scope.cancel()
    requests = [r for r in rows if type(r) is tuple and r[0] == "RequestHandled"]
    assert requests
    gc.collect()
    assert not any(gc.is_tracked(r) for r in requests)


async def test_ms_at_is_now_ms_at_that_moment():
    clock = Clock()
    before = clock.now_ms()
    stamp = perf_now()
    after = clock.now_ms()
    assert before <= clock.ms_at(stamp) <= after
    clock.advance(5000)
    assert clock.ms_at(perf_now()) >= after + 5000
    manual = Clock(manual=True)
    manual.advance(7)
    assert manual.ms_at(perf_now()) == manual.now_ms()


async def test_ms_at_under_a_mock_clock_asks_the_clock(autojump_clock):
    clock = Clock()
    await trio.sleep(3600)  # an hour of mock time, none of wall time
    assert clock.ms_at(perf_now()) == clock.now_ms()
    assert clock.now_ms() - int(time.time() * 1000) > 3_000_000


def test_row_lines_reuse_fragments_without_changing_a_character():
    """The row encoder caches the text of runs of fields that repeat (the connection, the
    member, the outcome); every line still says what the object's line says, also after the
    caches fill and are emptied."""
    from kafka_emu.trace import schema
    for i in range(schema._FRAGMENT_CACHE + 300):
        event = RequestHandled(
            at_ms=1_700_000_000_000 + i, connection_id=i % 3, peer=f"h:{i % 3}",
            api="OffsetCommit", api_key=8, version=i % 9, correlation_id=i,
            client_id=None if i % 5 == 0 else 'c"\u00e9', client_software_name=None,
            client_software_version=None, group_id="g", member_id=f"m{i}",
            group_instance_id=None, generation_id=i % 4, latency_ms=i / 7,
            error_code=i % 2, partition_errors=(("t", i % 3, 22),) if i % 2 else (),
            throttle_time_ms=0, partitions=(("t", i % 3),), session_timeout_ms=None,
            rebalance_timeout_ms=None)
        assert to_json_line(event_row(event), "r", i) == to_json_line(event, "r", i)


async def test_deferred_delivery_keeps_order_and_is_drained_by_readers():
    """While only row sinks listen and the delivery task runs, emitting queues; sinks get the
    events in order once the emitting task yields, or at once when anybody drains."""
    observation = Observation()
    seen, batches = [], []

    def many(events):
        batches.append(len(events))
        seen.extend(events)
    observation.subscribe(seen.append, rows=True, many=many)
    async with trio.open_nursery() as nursery:
        await nursery.start(observation.deliver_deferred)
        rows = [("ReplyEmitted", i, "g", i, "Heartbeat", 0) for i in range(5)]
        for row in rows[:3]:
            observation.emit(row)
        assert seen == []  # queued: this task has not yielded
        observation.drain()  # a reader asks
        assert seen == rows[:3]
        for row in rows[3:]:
            observation.emit(row)
        await trio.sleep(0)  # yield: the delivery task runs
        await trio.sleep(0)
        assert seen == rows and batches == [3, 2]
        # an object sink makes delivery immediate (and sees nothing from before it came)
        objects = []
        unsubscribe = observation.subscribe(objects.append)
        observation.emit(rows[0])
        assert objects == [as_event(rows[0])] and seen[-1] == rows[0]
        unsubscribe()
        observation.emit(rows[1])
        assert seen[-1] == rows[0]  # deferred again
        nursery.cancel_scope.cancel()
    assert seen[-1] == rows[1]  # the task delivers what is left when it ends


async def test_timeline_readers_see_deferred_events():
    from kafka_emu.control.timeline import Timeline
    observation = Observation()
    timeline = Timeline(observation, 100)
    async with trio.open_nursery() as nursery:
        await nursery.start(observation.deliver_deferred)
        observation.emit(("ReplyEmitted", 1, "g", 7, "Heartbeat", 25))
        assert timeline.seq == 1
        (reply,) = timeline.select(group_id="g")
        assert reply["type"] == "ReplyEmitted" and reply["error"] == 25
        observation.emit(("ReplyEmitted", 2, "g", 8, "Heartbeat", 0))
        assert await timeline.wait_after(1, 5) == 2
        nursery.cancel_scope.cancel()
