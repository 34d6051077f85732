"""The Heartbeat handler builds its coordinator command in a mutable twin (frozen.mutable_twin),
not through the class's ``__init__``: the command it hands on must be exactly the one the class
builds from the same request -- same class, fields, equality and hash, still frozen -- for every
shape a Heartbeat takes on the wire (v0-4, a static member's group_instance_id from v3, a member
not yet known, an empty id)."""

from __future__ import annotations

import attrs
import pytest

from kafka_emu import coordinator as c
from kafka_emu.broker.handlers import heartbeat as handler
from kafka_emu.protocol.codec import decode, encode
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest

SHAPES = [  # (version, group_id, generation_id, member_id, group_instance_id)
    *[(v, "g", 3, "consumer-1-4f2a", None) for v in range(5)],
    (3, "g", 3, "consumer-1-4f2a", "static-1"),
    (4, "g", 3, "consumer-1-4f2a", "static-1"),
    (4, "g", -1, "", None),
    (2, "", 0, "m", None),
    (4, "gruppe-ü", 2**31 - 1, "m-é", "ïnstance"),
]


class CapturingContext:
    """What the handler reads of its RequestContext; keeps the command it submits."""

    def __init__(self, request_id: int) -> None:
        self.request_id = request_id
        self.submitted: list = []

    async def submit(self, command, render):
        self.submitted.append((command, render))
        return render(c.HeartbeatResult(error=0))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"v{s[0]}-{s[1]!r}-{s[4]!r}")
async def test_the_handlers_command_is_the_one_the_class_builds(shape):
    version, group_id, generation_id, member_id, instance = shape
    # the request as the codec hands it to the handler (v0-2 carry no group_instance_id)
    request = decode(HeartbeatRequest, version, encode(HeartbeatRequest(
        group_id=group_id, generation_id=generation_id, member_id=member_id,
        group_instance_id=instance), version))
    assert request.group_instance_id == instance
    ctx = CapturingContext(request_id=41)
    response = await handler.heartbeat(ctx, request)
    assert response.error_code == 0
    [(built, render)] = ctx.submitted
    assert render is handler.render
    expected = c.Heartbeat(request_id=41, group_id=group_id, generation_id=generation_id,
                           member_id=member_id, group_instance_id=instance)
    assert type(built) is c.Heartbeat
    assert built == expected and hash(built) == hash(expected)
    assert attrs.asdict(built) == attrs.asdict(expected)
    assert repr(built) == repr(expected)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        built.generation_id = 4  # type: ignore[misc]
