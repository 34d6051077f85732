"""Struct-valued defaults (issue 40 item 1): the writers compare a struct field to one shared
instance per struct class, by identity first; a handler that passes that instance gets the same
bytes as with a struct built fresh, and a value that differs is still written."""

from __future__ import annotations

from kafka_emu.broker.handlers import fetch, produce
from kafka_emu.protocol.codegen import plan_for, shared_default
from kafka_emu.protocol.messages.fetch import (EpochEndOffset, LeaderIdAndEpoch, PartitionData,
                                               SnapshotId)


def _partition(**tagged) -> PartitionData:
    return PartitionData(partition_index=3, high_watermark=5, records=b"", **tagged)


def test_the_writers_defaults_are_the_handlers_shared_instances():
    writers = {name: default for _, name, default, _ in plan_for(PartitionData, 16, True)
               .tag_writers}
    assert writers["current_leader"] is shared_default(LeaderIdAndEpoch) \
        is fetch._NO_CURRENT_LEADER
    assert writers["snapshot_id"] is shared_default(SnapshotId) is fetch._NO_SNAPSHOT
    assert writers["diverging_epoch"] is shared_default(EpochEndOffset) \
        is fetch._NO_DIVERGING_EPOCH
    assert produce._NO_CURRENT_LEADER is shared_default(produce.LeaderIdAndEpoch)
    assert shared_default(LeaderIdAndEpoch) == LeaderIdAndEpoch()


def _written(version: int, p: PartitionData) -> bytes:
    out = bytearray()
    plan_for(PartitionData, version, version >= 12).write(out, p)
    return bytes(out)


def test_shared_fresh_and_changed_defaults_on_the_wire():
    shared = _partition(current_leader=fetch._NO_CURRENT_LEADER, snapshot_id=fetch._NO_SNAPSHOT,
                        diverging_epoch=fetch._NO_DIVERGING_EPOCH)
    fresh = _partition(current_leader=LeaderIdAndEpoch(), snapshot_id=SnapshotId(),
                       diverging_epoch=EpochEndOffset())
    for version in (4, 11, 12, 16):  # absent (older versions) and tagged
        assert _written(version, shared) == _written(version, fresh)
    assert _written(16, shared).endswith(b"\x00")  # no tagged field written
    moved = _partition(current_leader=LeaderIdAndEpoch(leader_id=2, leader_epoch=7))
    assert len(_written(16, moved)) > len(_written(16, shared))
    assert _written(16, moved) != _written(16, shared)
