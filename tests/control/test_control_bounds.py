"""Every number the control plane takes is bounded, contradictory fault options are refused, and
internal topics cannot be created through it (issue 33, finding 6 and 7): each refusal is a 400
naming the bound or both options, and changes nothing. The Python handle and HTTP run the same
operations, so both answer the same."""

from __future__ import annotations

import typing

import attrs
import pytest

from kafka_emu.control.operations import ControlError, _hints, all_operations
from kafka_emu.testing import make_config, run_in_thread

from control_http_support import client_of


def numeric(tp) -> bool:
    return any(t in (int, float) for t in (tp, *typing.get_args(tp)))


def test_every_numeric_parameter_of_every_operation_declares_its_bounds():
    unbounded = []
    for name, op in all_operations().items():
        hints = _hints(op.params)
        for field in attrs.fields(op.params):
            if numeric(hints[field.name]) and not ({"minimum", "maximum"} <= set(field.metadata)):
                unbounded.append(f"{name}.{field.name}")
    assert not unbounded, f"numbers without bounds: {unbounded}"


@pytest.fixture(scope="module")
def emu():
    with run_in_thread(make_config(topics={"orders": 1}, clock="manual"),
                       control_port=0) as emulator:
        yield emulator


def refused(call) -> str:
    with pytest.raises(ControlError) as info:
        call()
    assert info.value.status == 400, info.value.message
    return info.value.message


def test_time_cannot_be_advanced_by_10_to_the_30_ms(emu):
    before = emu.clock()["now_ms"]
    message = refused(lambda: emu.advance(10**30))
    assert "ms must be >= 0 and <= 315360000000" in message
    assert "-1" in refused(lambda: emu.advance(-1))
    assert emu.clock()["now_ms"] == before
    assert emu.advance(315360000000)["advanced_ms"] == 315360000000  # the bound itself is fine


def test_a_fault_delay_of_10_to_the_20_ms_is_refused(emu):
    assert "delay_ms must be >= 0 and <= 2147483647" in refused(
        lambda: emu.add_fault("delay", delay_ms=10**20))
    assert "throttle_ms" in refused(lambda: emu.add_fault("throttle", throttle_ms=2**31))
    assert "max_version must be >= 0 and <= 32767" in refused(
        lambda: emu.add_fault("error", error=27, max_version=2**15))
    assert "count" in refused(lambda: emu.add_fault("blackhole", count=2**40))
    assert emu.faults() == []


def test_count_with_always_is_refused_naming_both(emu):
    message = refused(lambda: emu.add_fault("error", error=27, count=3, always=True))
    assert "count (3) and always contradict" in message
    message = refused(lambda: emu.add_fault("error", error=27, seed=7))
    assert "seed (7) without probability" in message
    message = refused(lambda: emu.add_fault("delay", delay_ms=5, throttle_ms=5))
    assert "action delay and throttle_ms contradict" in message
    message = refused(lambda: emu.add_fault("throttle", throttle_ms=5, delay_ms=5))
    assert "action throttle and delay_ms contradict" in message
    assert emu.faults() == []
    # each alone is fine: always fires without limit, count defaults to 1
    always = emu.add_fault("error", error=27, always=True)
    once = emu.add_fault("error", error=27)
    drawn = emu.add_fault("error", error=27, probability=0.5, seed=7)
    listed = {rule["id"]: rule for rule in emu.faults()}
    assert listed[always]["count"] is None and listed[once]["count"] == 1
    assert listed[drawn]["seed"] == 7
    emu.clear_faults()


def test_internal_topics_cannot_be_created_through_the_control_plane(emu):
    for name in ("__consumer_offsets", "__transaction_state", "__share_group_state"):
        assert "is internal" in refused(lambda name=name: emu.create_topic(name, 1))
    assert refused(lambda: emu.create_topic("__cluster_metadata")) == (
        "Creation of internal topic __cluster_metadata is prohibited.")
    assert "partitions must be >= 1 and <= 9999" in refused(lambda: emu.create_topic("t", 10**6))
    assert [t["name"] for t in emu._op("list_topics")] == ["orders"]


def test_offsets_and_partitions_are_bounded(emu):
    assert "offset must be >= 0 and <= 9223372036854775807" in refused(
        lambda: emu.set_offsets("g", {("orders", 0): 2**63}))
    assert "partition must be >= 0 and <= 2147483647" in refused(
        lambda: emu.set_offsets("g", {("orders", 2**31): 0}))
    assert "partition" in refused(lambda: emu.partition("orders", 2**31))
    assert "limit" in refused(lambda: emu.timeline(limit=2**31))
    assert "timeout" in refused(lambda: emu.wait_for_group("g", timeout=1e9))
    assert all(g["group_id"] != "g" for g in emu.groups())


def test_http_refuses_out_of_range_values_with_the_bound_and_documents_it(emu):
    with client_of(emu) as http:
        document = http.get("/openapi.json").json()
        body = document["paths"]["/time/advance"]["post"]["requestBody"]["content"][
            "application/json"]["schema"]["properties"]["ms"]
        assert (body["minimum"], body["maximum"]) == (0, 315360000000)
        before = http.get("/time").json()["result"]["now_ms"]
        response = http.post("/time/advance", json={"ms": 10**30})
        assert response.status_code == 400, response.text
        assert "<= 315360000000" in response.json()["error"]["message"]
        assert http.get("/time").json()["result"]["now_ms"] == before

        response = http.post("/faults", json={"action": "delay", "delay_ms": 10**20})
        assert response.status_code == 400 and "2147483647" in response.text
        response = http.post("/faults", json={"action": "error", "error": 27, "count": 2,
                                              "always": True})
        assert response.status_code == 400 and "count (2) and always" in response.text
        assert http.get("/faults").json()["result"] == []

        response = http.post("/topics", json={"name": "__consumer_offsets", "partitions": 1})
        assert response.status_code == 400, response.text
        assert "internal" in response.json()["error"]["message"]
        names = [t["name"] for t in http.get("/topics").json()["result"]]
        assert "__consumer_offsets" not in names


async def test_the_clock_never_passes_the_end_of_the_year_9999():
    from kafka_emu.testing import open_emulator
    async with open_emulator(make_config(clock="manual")) as emu:
        step = 315360000000
        end = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
        while (await emu.clock())["now_ms"] + step <= end:
            await emu.advance(step)
        now = (await emu.clock())["now_ms"]
        with pytest.raises(ControlError) as info:
            await emu.advance(step)
        assert info.value.status == 400 and "end of the year 9999" in info.value.message
        assert (await emu.clock())["now_ms"] == now
        await emu.advance(end - now)  # up to the last millisecond is fine
