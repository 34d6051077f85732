"""Filters that name something the emulator does not have are refused with the names it does
have, instead of answering ``[]`` -- which reads as "it never happened" (issue 33, finding 7):
event types, API names and keys, and ListGroups' states and types. The Python handle and HTTP
run the same operation, so both answer the same."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer

from kafka_emu.control.operations import ControlError
from kafka_emu.testing import make_config, run_in_thread

from control_http_support import client_of


@pytest.fixture(scope="module")
def emu():
    with run_in_thread(make_config({"group.initial.rebalance.delay.ms": 0},
                                   topics={"orders": 1}), control_port=0) as emulator:
        consumer = KafkaConsumer(bootstrap_servers=emulator.bootstrap_servers, group_id="audit",
                                 client_id="auditor")
        consumer.partitions_for_topic("orders")  # (see test_waiters_recheck.kafka_python_consumer)
        consumer.subscribe(["orders"])
        emulator.wait_for(lambda: consumer.poll(timeout_ms=50) or consumer.assignment(),
                          timeout=30)
        consumer.close()
        yield emulator


def refused(call) -> str:
    with pytest.raises(ControlError) as info:
        call()
    assert info.value.status == 400
    return info.value.message


def test_an_unknown_event_type_is_refused_with_the_known_ones(emu):
    message = refused(lambda: emu.timeline(types=("RebalanceStarted",)))
    assert "'RebalanceStarted'" in message
    assert "RebalanceTriggered" in message and "StateChanged" in message
    # a real name among unknown ones does not make the filter pass
    assert "'Nope'" in refused(lambda: emu.timeline(types=("StateChanged", "Nope")))
    # and the real names still answer
    states = emu.timeline(group_id="audit", types=("StateChanged",))
    assert states and all(e["type"] == "StateChanged" for e in states)


def test_an_unknown_api_is_refused_with_the_known_ones(emu):
    message = refused(lambda: emu.requests(api="Heartbeet"))
    assert "'Heartbeet'" in message and "Heartbeat" in message and "JoinGroup" in message
    assert "unknown api key 9999" in refused(lambda: emu.requests(api="9999"))
    by_name = emu.requests(api="joingroup")  # any case, as before
    by_key = emu.requests(api="11")
    assert by_name and by_name == by_key
    assert all(r["api"] == "JoinGroup" for r in by_name)


def test_an_unknown_group_state_or_type_is_refused_with_the_known_ones(emu):
    message = refused(lambda: emu.list_groups(states="Stabel"))
    assert "'Stabel'" in message and "Stable" in message and "PreparingRebalance" in message
    assert "classic" in refused(lambda: emu.list_groups(types=("clasic",)))
    assert [g.group_id for g in emu.list_groups(states="empty", types="Classic")] == ["audit"]


def test_http_refuses_unknown_names_the_same_way(emu):
    with client_of(emu) as http:
        before = http.get("/timeline").json()["result"]
        response = http.get("/timeline", params={"types": "RebalanceStarted"})
        assert response.status_code == 400, response.text
        assert "RebalanceTriggered" in response.json()["error"]["message"]
        response = http.get("/timeline/requests", params={"api": "Heartbeet"})
        assert response.status_code == 400, response.text
        assert "Heartbeat" in response.json()["error"]["message"]
        assert http.get("/timeline/requests", params={"api": "JoinGroup"}).json()["result"]
        # 5000 digits were a 500 (int() refuses them) recorded as the emulator's unexpected error
        response = http.get("/timeline/requests", params={"api": "1" * 5000})
        assert response.status_code == 400, response.text
        # reading records nothing: the refusals left the timeline as it was
        assert http.get("/timeline").json()["result"] == before
