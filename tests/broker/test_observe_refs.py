"""What observing a request costs was cut (issue 9's timeline target, issue 14 item 3) without
changing what any reader sees. These tests check that:

- a request the timeline keeps by reference (``REQUEST_REFS``: Heartbeat, InitProducerId) reads
  as exactly the RequestHandled row the request path would have made, field by field;
- over sockets, the timeline's reading of such requests, every other row sink's rows and the
  event objects an object sink gets say the same, and no sink that did not ask for them is
  handed references;
- a latency starts where the previous request of the same read ended (one clock reading per
  request), so a request held back by a fault does not lengthen the next one's;
- ``Clock.ms_at``, now computed once per millisecond, answers what its expression says for
  every reading, at the edges of a millisecond too, and so does ``ms_from`` on its constants.
"""

from __future__ import annotations

import math
import time
from functools import partial

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker.clock import Clock, ms_from
from kafka_emu.broker.events import RequestHandled
from kafka_emu.broker.observe import Observation
from kafka_emu.broker.event_rows import (BY_REFERENCE, REQUEST_REFS, as_event, event_class,
                                         event_row, request_identity, request_row_maker,
                                         response_errors, row_of, _by_reference)
from kafka_emu.control.plane import control_of
from kafka_emu.control.timeline import event_dict
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import APIS, BY_NAME
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.protocol.messages.init_producer_id import InitProducerIdRequest
from kafka_emu.testing import make_config
from kafka_emu.testing.strategies import messages
from kafka_emu.testing.wire import WireClient

HEARTBEAT, INIT_PRODUCER_ID = BY_NAME["Heartbeat"], BY_NAME["InitProducerId"]
FLAT = [(api, version) for api in APIS.values() for version in api.valid
        if _by_reference(api.request, api.response)]


def test_the_apis_kept_by_reference_hold_only_scalars():
    assert {api.name for api, _ in FLAT} == {
        "Heartbeat", "InitProducerId", "AddOffsetsToTxn", "EndTxn", "SaslHandshake",
        "SaslAuthenticate", "ShareGroupHeartbeat"}


def _expected_row(request, response, started, done, at, rest):
    """RequestHandled as the request path read it field by field before rows existed."""
    group, member, instance, generation = request_identity(request)
    top, partition_errors = response_errors(response)
    return ("RequestHandled", at, *rest, group, member, instance, generation,
            (done - started) * 1000 if started is not None else 0.0, top, partition_errors,
            getattr(response, "throttle_time_ms", 0) or 0, (),
            getattr(request, "session_timeout_ms", None),
            getattr(request, "rebalance_timeout_ms", None))


@pytest.mark.parametrize(("api", "version"), FLAT, ids=[f"{a.name}-v{v}" for a, v in FLAT])
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), started=st.none() | st.floats(0, 1e6), took=st.floats(0, 100),
       at=st.integers(0, 2**45), client=st.none() | st.text(max_size=5))
def test_a_request_kept_by_reference_reads_as_its_row(api, version, data, started, took, at,
                                                       client):
    request = data.draw(messages(api.request, version))
    response = data.draw(messages(api.response, version))
    done = (started or 0.0) + took
    rest = (7, "h:1", api.name, api.key, version, 99, client, "sw", None)
    refs = (REQUEST_REFS, request, response, started, done, at, *rest)
    row = row_of(refs)
    assert row == _expected_row(request, response, started, done, at, rest)
    # the same row the request path makes when it does not keep references
    make = request_row_maker(type(request), type(response))
    assert row == make(request, response, (done - started) * 1000 if started is not None else 0.0,
                       None, at, *rest)
    assert all(type(v) in (int, float, str, tuple, type(None)) for v in row)  # plain values
    assert event_class(refs) is RequestHandled and as_event(refs) == as_event(row)
    assert event_row(refs) == row and row_of(row) is row


def test_only_sinks_that_ask_for_references_make_the_request_path_keep_them():
    observation = Observation()
    assert not observation.by_reference  # nobody listens
    stop_refs = observation.subscribe(lambda e: None, rows=True, refs=True)
    request_row_maker(HeartbeatRequest, BY_NAME["Heartbeat"].response)  # first sight: learnt
    assert HeartbeatRequest in BY_REFERENCE and HeartbeatRequest in observation.by_reference
    stop_rows = observation.subscribe(lambda e: None, rows=True)  # e.g. the trace writer
    assert not observation.by_reference
    stop_rows()
    assert HeartbeatRequest in observation.by_reference
    stop_refs()
    assert not observation.by_reference


async def _serve_and_talk(extra_sink=None, *, objects=False):
    """A server whose timeline records (refs), optionally with another sink; a client sends
    heartbeats (ok and refused), InitProducerId and a pipelined pair. Returns (timeline,
    requests the timeline reads, whatever the extra sink saw, broker)."""
    from kafka_emu.broker.server import serve
    seen: list = []
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, make_config(
            {"group.initial.rebalance.delay.ms": 0})))
        timeline = control_of(bound.broker).timeline
        if extra_sink is not None:
            bound.broker.observation.subscribe(seen.append, rows=not objects)
        client = await WireClient.connect(bound.host, bound.port, client_id="refs-test")
        for i in range(3):  # nobody in group g: UNKNOWN_MEMBER_ID, by value
            await client.request(HEARTBEAT, 4, HeartbeatRequest(
                group_id="g", generation_id=i, member_id=f"m{i}", group_instance_id=None))
        await client.request(INIT_PRODUCER_ID, 4, InitProducerIdRequest(
            transactional_id=None, transaction_timeout_ms=1000, producer_id=-1,
            producer_epoch=-1))
        first = await client.send(HEARTBEAT, 3, HeartbeatRequest(
            group_id="g", generation_id=5, member_id="m5", group_instance_id="i5"))
        second = await client.send(HEARTBEAT, 4, HeartbeatRequest(
            group_id="g", generation_id=6, member_id="m6", group_instance_id=None))
        await client.receive(HEARTBEAT, 3, first)
        await client.receive(HEARTBEAT, 4, second)
        await client.aclose()
        requests = timeline.requests()
        raw = list(timeline.events)
        nursery.cancel_scope.cancel()
    return requests, raw, seen, bound.broker


async def test_the_timeline_reads_requests_kept_by_reference_as_rows():
    requests, raw, _, broker = await _serve_and_talk()
    heartbeats = [r for r in requests if r["api"] == "Heartbeat"]
    assert [h["member_id"] for h in heartbeats] == ["m0", "m1", "m2", "m5", "m6"]
    assert {h["error_code"] for h in heartbeats} == {ErrorCode.UNKNOWN_MEMBER_ID}
    assert heartbeats[3]["group_instance_id"] == "i5" and heartbeats[3]["version"] == 3
    assert all(h["client_id"] == "refs-test" and h["group_id"] == "g" for h in heartbeats)
    # kept by reference after the first sight of the class, and read back as rows
    kept = [e for e in raw if type(e) is tuple and e[0] is REQUEST_REFS]
    assert len(kept) >= 5
    for entry in kept:
        assert event_dict(None, entry) == event_dict(None, row_of(entry))


def _comparable(event_or_dict):
    d = event_or_dict if isinstance(event_or_dict, dict) else event_dict(None, event_or_dict)
    d = dict(d)
    d.pop("seq", None)
    return d


async def test_other_sinks_see_the_requests_the_timeline_reads():
    """With another row sink listening (as the trace writer does) the request path makes rows
    again; the rows that sink gets are what the timeline reads -- no reference ever reaches it."""
    requests, raw, rows, _ = await _serve_and_talk(extra_sink=True)
    assert not any(type(e) is tuple and e[0] is REQUEST_REFS for e in rows + raw)
    row_requests = [_comparable(r) for r in rows
                    if type(r) is tuple and r[0] == "RequestHandled"]
    assert row_requests == [_comparable(r) for r in requests]
    assert all(type(v) in (int, float, str, tuple, type(None)) for r in rows
               if type(r) is tuple for v in r)


async def test_object_sinks_see_the_requests_the_timeline_reads():
    requests, _, objects, _ = await _serve_and_talk(extra_sink=True, objects=True)
    handled = [_comparable(e) for e in objects if isinstance(e, RequestHandled)]
    assert handled == [_comparable(r) for r in requests]


async def test_a_latency_starts_where_the_previous_request_of_the_read_ended():
    """One clock reading per request: a request's latency runs from the end of the previous
    one of the same read, so a Heartbeat delayed by a fault rule does not lengthen the latency
    of the one pipelined behind it (wall time; the figures are far apart)."""
    from kafka_emu.testing import open_emulator
    delay_ms = 600
    async with open_emulator(make_config()) as emu:
        await emu.add_fault("delay", api="Heartbeat", member_id="a", delay_ms=delay_ms)
        client = await WireClient.connect(emu.host, emu.port)
        one = HeartbeatRequest(group_id="g", generation_id=1, member_id="a")
        two = HeartbeatRequest(group_id="g", generation_id=1, member_id="b")
        # both frames in one write: one read, one batch
        from kafka_emu.protocol.headers import encode_request
        await client.send_raw(encode_request(HEARTBEAT, 4, 101, "lat", one)
                              + encode_request(HEARTBEAT, 4, 102, "lat", two))
        await client.receive(HEARTBEAT, 4, 101)
        await client.receive(HEARTBEAT, 4, 102)
        await client.aclose()
        requests = {r["member_id"]: r for r in await emu.requests(api="Heartbeat")}
    assert requests["a"]["latency_ms"] >= delay_ms
    assert 0 <= requests["b"]["latency_ms"] < delay_ms / 2


def _uncached(clock: Clock):
    base = clock._epoch_start_ms + clock._offset_ms
    shift, start = clock._perf_shift, clock._trio_start
    return lambda perf: base + int((shift + perf - start) * 1000)


async def test_ms_at_once_per_millisecond_answers_what_its_expression_says():
    clock = Clock()
    if clock._perf_shift is None:
        pytest.skip("trio's clock is not the system clock here")
    now = time.perf_counter()
    for moved in (0, 5000):
        clock.advance(moved)
        exact = _uncached(clock)
        ms_at = clock.ms_at
        readings = [now + k * 0.00037 for k in range(3000)]  # in order, many per millisecond
        # and at the very edges of some milliseconds, and going back in time
        for k in range(1, 50):
            edge = (math.floor((clock._perf_shift + now - clock._trio_start) * 1000) + k) / 1000
            perf = edge - clock._perf_shift + clock._trio_start
            readings += [math.nextafter(perf, -math.inf), perf, math.nextafter(perf, math.inf)]
        readings += [now - 1.0, now + 10.0, now]
        constants = clock.ms_constants  # (what the trace's records carry: clock.ms_from)
        assert constants is not None
        for perf in readings:
            assert ms_at(perf) == exact(perf) == ms_from(constants, perf), perf
