"""The RequestContext a handler gets, over a real socket: ``handle_frame`` (dispatch.py) builds it
by slot stores rather than by its keyword ``__init__``, so every field must still be set, and to
what the request says (a field added to the class without a store there would fail here)."""

from __future__ import annotations

import attrs

from kafka_emu.broker.context import ConnectionInfo, RequestContext
from kafka_emu.broker.handlers import HANDLERS
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import api_versions as av
from kafka_emu.testing.wire import WireClient

API_VERSIONS = BY_NAME["ApiVersions"]


async def test_a_handler_gets_every_context_field_set_from_its_request(start_broker,
                                                                        monkeypatch):
    seen: list[RequestContext] = []
    handler = HANDLERS[API_VERSIONS.key]

    async def capturing(ctx, request):
        seen.append(ctx)
        return await handler.fn(ctx, request)

    monkeypatch.setitem(HANDLERS, API_VERSIONS.key, attrs.evolve(handler, fn=capturing))
    bound = await start_broker()
    client = await WireClient.connect(bound.host, bound.port, client_id="ctx-test")
    request = av.ApiVersionsRequest(client_software_name="ctx", client_software_version="1")
    first = await client.send(API_VERSIONS, 3, request)
    await client.receive(API_VERSIONS, 3, first)
    second = await client.send(API_VERSIONS, 2, av.ApiVersionsRequest())
    await client.receive(API_VERSIONS, 2, second)
    await client.aclose()

    assert len(seen) == 2
    for ctx in seen:
        missing = [a.name for a in attrs.fields(RequestContext) if not hasattr(ctx, a.name)]
        assert missing == []
        assert type(ctx) is RequestContext
        assert ctx.api is API_VERSIONS and ctx.client_id == "ctx-test"
        assert isinstance(ctx.connection, ConnectionInfo) and ctx.deferrable is True
    assert [(c.version, c.correlation_id) for c in seen] == [(3, first), (2, second)]
    assert seen[0].broker is seen[1].broker
    assert seen[0].connection is seen[1].connection
    assert seen[1].request_id > seen[0].request_id
