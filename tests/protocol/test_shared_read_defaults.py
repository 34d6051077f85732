"""A reader fills a struct-valued field its version lacks (FetchRequest.replica_state below v15)
with the one shared all-default instance of that struct (plan.shared_default) when the struct is
frozen and holds only immutable values, instead of building one per read; a struct holding a
list (mutable) is still built fresh for each read. Either way the value equals a fresh default,
and a version that carries the field still reads what was sent."""

from __future__ import annotations

import attrs
import pytest

from kafka_emu.protocol.codec import decode, encode
from kafka_emu.protocol.messages.fetch import FetchRequest, ReplicaState
from kafka_emu.protocol.plan import shareable_default, shared_default
from kafka_emu.protocol.schema import INT32, Array, field, struct


@struct
class _WithList:
    items: list = field(Array(INT32), "0+")


def _request(**extra) -> FetchRequest:
    return FetchRequest(max_wait_ms=500, min_bytes=1, topics=[], **extra)


@pytest.mark.parametrize("version", [4, 11, 14])
def test_an_absent_replica_state_is_the_shared_default(version):
    first = decode(FetchRequest, version, encode(_request(), version))
    second = decode(FetchRequest, version, encode(_request(), version))
    assert first.replica_state is second.replica_state is shared_default(ReplicaState)
    assert first.replica_state == ReplicaState()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        first.replica_state.replica_id = 7  # type: ignore[misc]


def test_a_replica_state_on_the_wire_is_read_as_sent():
    sent = _request(replica_state=ReplicaState(replica_id=3, replica_epoch=9))
    got = decode(FetchRequest, 15, encode(sent, 15))
    assert got.replica_state == ReplicaState(replica_id=3, replica_epoch=9)
    assert got.replica_state is not shared_default(ReplicaState)


def test_only_frozen_structs_of_immutable_values_are_shared():
    assert shareable_default(ReplicaState)
    assert not shareable_default(_WithList)  # its default holds a list
    assert not shareable_default(list) and not shareable_default(int)
