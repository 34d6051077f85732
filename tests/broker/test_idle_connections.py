"""connections.max.idle.ms enforced by the broker's one IdleConnections task (broker/idle.py):
each connection closes its own limit after its last bytes, in the order they went quiet, and a
request keeps a connection alive."""

from __future__ import annotations

import trio

from kafka_emu.broker.events import ConnectionClosed
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.testing.wire import WireClient

API_VERSIONS = BY_NAME["ApiVersions"]


async def test_idle_connections_close_in_the_order_they_went_quiet(start_broker, autojump_clock):
    seen = []
    bound = await start_broker({"connections.max.idle.ms": 5000}, observer=seen.append)
    start = trio.current_time()
    first = await WireClient.connect(bound.host, bound.port)
    await trio.sleep(2)
    second = await WireClient.connect(bound.host, bound.port)
    await trio.sleep(2)
    await first.request(API_VERSIONS, 0, ApiVersionsRequest())  # first: quiet from t=4
    closed_at = {}

    async def until_closed(name: str, client: WireClient) -> None:
        assert await client.receive_frame() is None
        closed_at[name] = trio.current_time() - start

    async with trio.open_nursery() as nursery:
        nursery.start_soon(until_closed, "first", first)
        nursery.start_soon(until_closed, "second", second)
    assert 7 <= closed_at["second"] < 8 and 9 <= closed_at["first"] < 10
    reasons = [e.reason for e in seen if isinstance(e, ConnectionClosed)]
    assert len(reasons) == 2 and all("connections.max.idle.ms" in r for r in reasons)


async def test_a_connection_closed_by_its_client_leaves_no_idle_entry(start_broker,
                                                                     autojump_clock):
    seen = []
    bound = await start_broker({"connections.max.idle.ms": 5000}, observer=seen.append)
    client = await WireClient.connect(bound.host, bound.port)
    await client.request(API_VERSIONS, 0, ApiVersionsRequest())
    await client.aclose()
    await trio.sleep(1)
    assert [e.reason for e in seen if isinstance(e, ConnectionClosed)] == ["closed by peer"]
    await trio.sleep(10)  # the expiry that would have come finds nothing to close
    assert len([e for e in seen if isinstance(e, ConnectionClosed)]) == 1
