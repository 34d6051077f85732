"""The in-process runners and pytest fixtures users embed kafka-emu with."""

import socket
import time

import pytest
import trio

from kafka_emu.broker import handlers
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.headers import encode_request
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.testing import EmulatorError, make_config, open_emulator, run_in_thread
from kafka_emu.testing.wire import WireClient


def test_function_fixture_serves_and_inspects(kafka_emu):
    assert kafka_emu.bootstrap_servers == f"127.0.0.1:{kafka_emu.port}"
    assert kafka_emu.list_groups() == ()
    assert kafka_emu.describe_group("nobody").state == "Dead"
    kafka_emu.create_topic("t", 3)
    with socket.create_connection((kafka_emu.host, kafka_emu.port)):
        pass


def test_session_fixture_is_shared(kafka_emu_session, request):
    assert request.getfixturevalue("kafka_emu_session") is kafka_emu_session


def test_factory_applies_kafka_config(kafka_emu_factory):
    emu = kafka_emu_factory({"group.initial.rebalance.delay.ms": 3000, "num.partitions": 4},
                            topics={"orders": 6})
    assert emu.config.coordinator.group_initial_rebalance_delay_ms == 3000
    assert emu.config.num_partitions == 4
    assert emu.config.topics == (("orders", 6),)


def test_factory_rejects_unknown_config(kafka_emu_factory):
    with pytest.raises(ValueError, match="unknown config"):
        kafka_emu_factory({"no.such.setting": 1})


def test_start_takes_milliseconds_not_seconds():
    # Not a benchmark (bench/bench_broker.py measures it); a guard against a start that sleeps.
    start = time.perf_counter()
    with run_in_thread():
        pass
    assert time.perf_counter() - start < 2


def test_an_internal_error_fails_the_test_that_caused_it(monkeypatch):
    original = handlers.HANDLERS[18]

    async def broken(ctx, request):
        raise RuntimeError("handler bug")

    monkeypatch.setitem(handlers.HANDLERS, 18, handlers.Handler(original.api, "0-4", broken))
    with pytest.raises(EmulatorError, match="handler bug"):
        with run_in_thread() as emu:
            with socket.create_connection((emu.host, emu.port)) as s:
                s.sendall(encode_request(BY_NAME["ApiVersions"], 0, 1, "x", ApiVersionsRequest()))
                assert s.recv(100) == b""  # the connection is closed, the server lives on
            assert emu.list_groups() == ()


async def test_async_runner_in_a_trio_program():
    async with open_emulator(make_config(topics={"t": 2})) as emu:
        client = await WireClient.connect(emu.host, emu.port)
        resp = await client.request(BY_NAME["ApiVersions"], 3, ApiVersionsRequest(
            client_software_name="trio-test", client_software_version="1"))
        assert resp.error_code == 0
        assert [t.name for t in emu.broker.topics.all()] == ["t"]
        await client.aclose()


async def test_observer_sees_requests_with_client_software(autojump_clock):
    seen = []
    async with open_emulator(observer=seen.append) as emu:
        client = await WireClient.connect(emu.host, emu.port, client_id="observed")
        await client.request(BY_NAME["ApiVersions"], 3, ApiVersionsRequest(
            client_software_name="probe", client_software_version="2.0"))
        await client.request(BY_NAME["ApiVersions"], 3, ApiVersionsRequest(
            client_software_name="probe", client_software_version="2.0"))
        await client.aclose()
        await trio.sleep(0.1)
    from kafka_emu.broker.events import ConnectionClosed, RequestHandled
    handled = [e for e in seen if isinstance(e, RequestHandled)]
    assert [(e.api, e.version, e.client_id, e.error_code) for e in handled] == [
        ("ApiVersions", 3, "observed", 0)] * 2
    assert handled[1].client_software_name == "probe"
    assert any(isinstance(e, ConnectionClosed) for e in seen)
