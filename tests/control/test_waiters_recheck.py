"""``wait_for`` re-checks its predicate on a short interval as well as on events, and a waiter
that times out says what the emulator last saw (issue 33, finding 7).

The old waiter re-ran its predicate only when the emulator recorded an event. A predicate that
drives a client (``consumer.poll()``) then sat out its whole timeout whenever the client had to
wait on its own before its next request -- a throttled response (KIP-219) is one such wait --
since nothing reached the emulator to wake it. Timeouts here are hang guards, not assertions
about speed.
"""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, TopicPartition

from kafka_emu.testing import WaitTimeout, make_config, open_emulator, run_in_thread


def kafka_python_consumer(emu) -> KafkaConsumer:
    """A kafka-python consumer of "orders" in group "audit" that knows the topic before it joins.

    Without the metadata first, kafka-python 3.0 joins, learns the topic, and rejoins at once;
    about one run in ten it then stops sending anything at all (no heartbeat, no fetch: its I/O
    thread is stuck), which would make these tests flaky for a reason they are not about."""
    consumer = KafkaConsumer(bootstrap_servers=emu.bootstrap_servers, group_id="audit",
                             client_id="auditor")
    assert consumer.partitions_for_topic("orders") == {0}
    consumer.subscribe(["orders"])
    return consumer


def test_wait_for_rechecks_a_predicate_that_no_event_wakes():
    with run_in_thread(make_config()) as emu:  # nothing connected: no event will come
        calls = []

        def third_call():
            calls.append(1)
            return len(calls) >= 3 and "done"
        assert emu.wait_for(third_call, timeout=10) == "done"
        assert len(calls) == 3


def test_the_readme_wait_for_pattern_with_kafka_python_rejoins_after_a_throttled_join():
    # kafka-python waits out throttle_time_ms before its next request and sends it only inside
    # poll(): nothing happens on the emulator's side until the predicate polls again
    with run_in_thread(make_config(topics={"orders": 1})) as emu:
        emu.add_fault("throttle", api="JoinGroup", throttle_ms=500)
        consumer = kafka_python_consumer(emu)
        try:
            assigned = emu.wait_for(lambda: consumer.poll(timeout_ms=50) or consumer.assignment(),
                                    timeout=30)
            assert assigned == {TopicPartition("orders", 0)}
            assert emu.faults()[0]["fired"] == 1  # the join really was throttled
        finally:
            consumer.close()


def test_the_readme_wait_for_pattern_with_kafka_python():
    with run_in_thread(make_config(topics={"orders": 1})) as emu:
        consumer = kafka_python_consumer(emu)
        try:
            assigned = emu.wait_for(lambda: consumer.poll(timeout_ms=50) or consumer.assignment(),
                                    timeout=30)
            assert assigned == {TopicPartition("orders", 0)}
        finally:
            consumer.close()


def test_a_wait_for_timeout_says_what_the_predicate_returned_and_what_the_emulator_saw():
    with run_in_thread(make_config(topics={"orders": 1})) as emu:
        consumer = kafka_python_consumer(emu)
        try:
            emu.wait_for(lambda: consumer.poll(timeout_ms=50) or consumer.assignment(), timeout=30)

            def never_empty():
                return []
            with pytest.raises(WaitTimeout) as info:
                emu.wait_for(never_empty, timeout=0.3)
        finally:
            consumer.close()
    message = str(info.value)
    assert info.value.status == 408
    assert "never_empty" in message and "last returned []" in message
    assert "groups: 'audit' Stable (classic)" in message
    assert "newest events: #" in message and "client_id='auditor'" in message


def test_wait_for_refuses_an_unusable_timeout_or_interval():
    with run_in_thread(make_config()) as emu:
        for kwargs in (dict(timeout=-1), dict(timeout=float("nan")), dict(interval=0),
                       dict(interval=float("nan"))):
            with pytest.raises(Exception) as info:
                emu.wait_for(lambda: True, **kwargs)
            assert getattr(info.value, "status", None) == 400, kwargs


async def test_the_async_wait_for_rechecks_without_events_and_says_what_it_saw():
    async with open_emulator(make_config(clock="manual")) as emu:
        calls = []

        async def third_call():
            calls.append(1)
            return len(calls) >= 3 and "done"
        assert await emu.wait_for(third_call, timeout=10) == "done"
        assert len(calls) == 3

        await emu.advance(1000)  # an event to be seen
        with pytest.raises(WaitTimeout) as info:
            await emu.wait_for(lambda: 0, timeout=0.3)
    message = str(info.value)
    assert "last returned 0" in message and "no groups" in message
    assert "TimeAdvanced by_ms=1000" in message


async def test_wait_for_group_times_out_with_the_newest_events():
    async with open_emulator(make_config(clock="manual")) as emu:
        await emu.advance(5)
        with pytest.raises(WaitTimeout) as info:
            await emu.wait_for_group("nobody", timeout=0.3)
    message = str(info.value)
    assert "group 'nobody' did not reach state Stable; it does not exist" in message
    assert "TimeAdvanced by_ms=5" in message
