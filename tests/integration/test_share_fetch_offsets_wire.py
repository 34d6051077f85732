"""DescribeShareGroupOffsets (90, v0-1), AlterShareGroupOffsets (91) and DeleteShareGroupOffsets
(92) over real sockets, requests and responses by the hand-built codec (share_wire.py): start
offsets and lag of a share group's partitions, resets of an empty group (and NON_EMPTY_GROUP
while a member is in it), deletion, and the group/topic errors."""

from __future__ import annotations

import itertools
import uuid
from functools import partial

import pytest

from kafka_emu.broker.server import serve
from kafka_emu.errors import ErrorCode as E
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from kafka_emu.protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from kafka_emu.testing import make_config
from kafka_emu.testing.wire import WireClient

from .share_wire import (ALTER_OFFSETS, DELETE_OFFSETS, DESCRIBE_OFFSETS, SHARE_FETCH,
                         alter_offsets, delete_offsets, describe_offsets, frame,
                         read_alter_offsets, read_delete_offsets, read_describe_offsets,
                         read_share_fetch, share_fetch)
from .test_share_fetch_wire import produce, tid

ACCEPT = 1


@pytest.fixture
async def setup(nursery):
    bound = await nursery.start(partial(serve, make_config(topics={"t": 2, "u": 1})))
    wire = await WireClient.connect(bound.host, bound.port)
    return bound, Raw(wire)


class Raw:
    def __init__(self, wire):
        self.wire = wire
        self.ids = itertools.count(100)

    async def call(self, key, version, body, read):
        cid = next(self.ids)
        await self.wire.send_raw(frame(key, version, cid, body))
        out = read(await self.wire.receive_frame())
        assert out["correlation_id"] == cid
        return out

    async def describe(self, groups, version=1):
        return (await self.call(DESCRIBE_OFFSETS, version, describe_offsets(groups),
                                lambda f: read_describe_offsets(f, version)))["groups"]

    async def alter(self, group, topics):
        return await self.call(ALTER_OFFSETS, 0, alter_offsets(group, topics),
                               read_alter_offsets)

    async def delete(self, group, topics):
        return await self.call(DELETE_OFFSETS, 0, delete_offsets(group, topics),
                               read_delete_offsets)

    async def fetch(self, member, epoch, **kw):
        return await self.call(SHARE_FETCH, 1, share_fetch(1, "g", member, epoch, **kw),
                               lambda f: read_share_fetch(f, 1))


async def join(raw, member, epoch=0):
    r = await raw.wire.request(BY_NAME["ShareGroupHeartbeat"], 1, ShareGroupHeartbeatRequest(
        group_id="g", member_id=member, member_epoch=epoch,
        subscribed_topic_names=["t"] if epoch == 0 else None))
    assert r.error_code == 0
    return r


def partitions(groups):
    (g,) = groups
    return {(t["topic"], p["partition"]): p for t in g["topics"] for p in t["partitions"]}


async def test_describe_alter_delete_round_trip(setup):
    bound, raw = setup
    member = uuid.uuid4().hex[:22]
    await join(raw, member)
    t = tid(bound)
    await raw.fetch(member, 0, topics=[(t, [(0, [])])])  # latest: start offset 0, empty log
    produce(bound, [b"1", b"2", b"3"], [b"4"])
    r = await raw.fetch(member, 1)
    assert r["responses"][0]["partitions"][0]["acquired"] == [(0, 3, 1)]
    await raw.fetch(member, 2, topics=[(t, [(0, [(0, 1, [ACCEPT])])])])

    got = partitions(await raw.describe([("g", None)]))
    assert {k: (p["start_offset"], p["lag"], p["error_code"]) for k, p in got.items()} == {
        ("t", 0): (2, 2, 0)}
    assert got[("t", 0)]["leader_epoch"] == 0
    v0 = partitions(await raw.describe([("g", [("t", [0, 1]), ("nope", [0])])], version=0))
    assert "lag" not in v0[("t", 0)] and v0[("t", 0)]["start_offset"] == 2
    assert (v0[("t", 1)]["start_offset"], v0[("t", 1)]["error_code"]) == (-1, 0)  # no state
    assert v0[("nope", 0)]["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION

    # a member is in the group: no reset, no delete
    r = await raw.alter("g", [("t", [(0, 0)])])
    assert (r["error_code"], r["responses"]) == (E.NON_EMPTY_GROUP, [])
    assert (await raw.delete("g", ["t"]))["error_code"] == E.NON_EMPTY_GROUP

    await join(raw, member, epoch=-1)  # leaves: the group is Empty, its records released
    r = await raw.alter("g", [("t", [(0, 0)]), ("nope", [(0, 5)])])
    assert r["error_code"] == 0
    codes = {(x["topic"], p["partition"]): p["error_code"]
             for x in r["responses"] for p in x["partitions"]}
    assert codes == {("t", 0): 0, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    got = partitions(await raw.describe([("g", [("t", [0])])]))
    assert (got[("t", 0)]["start_offset"], got[("t", 0)]["lag"]) == (0, 4)
    # the reset start offset is where a new member gets records from, first deliveries again
    other = uuid.uuid4().hex[:22]
    await join(raw, other)
    r = await raw.fetch(other, 0, topics=[(t, [(0, [])])])
    assert r["responses"][0]["partitions"][0]["acquired"] == [(0, 3, 1)]
    await join(raw, other, epoch=-1)

    r = await raw.delete("g", ["t", "nope"])
    assert r["error_code"] == 0
    assert [(x["topic"], x["error_code"]) for x in r["responses"]] == [
        ("t", 0), ("nope", E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert r["responses"][0]["topic_id"] == t
    got = partitions(await raw.describe([("g", [("t", [0])])]))
    assert (got[("t", 0)]["start_offset"], got[("t", 0)]["lag"]) == (-1, -1)
    assert partitions(await raw.describe([("g", None)])) == {}


async def test_groups_that_are_not_share_groups(setup):
    bound, raw = setup
    r = await raw.wire.request(BY_NAME["ConsumerGroupHeartbeat"], 1,
                               ConsumerGroupHeartbeatRequest(
                                   group_id="cg", member_id=uuid.uuid4().hex[:22],
                                   member_epoch=0, rebalance_timeout_ms=30_000,
                                   subscribed_topic_names=["t"], topic_partitions=[]))
    assert r.error_code == 0
    groups = await raw.describe([("missing", None), ("cg", None)])
    assert [(g["group_id"], g["error_code"], g["error_message"]) for g in groups] == [
        ("missing", E.GROUP_ID_NOT_FOUND, "Group missing not found."),
        ("cg", E.GROUP_ID_NOT_FOUND, "Group cg is not a share group.")]
    for group, message in [("missing", "Group missing not found."),
                           ("cg", "Group cg is not a share group.")]:
        r = await raw.alter(group, [("t", [(0, 0)])])
        assert (r["error_code"], r["error_message"]) == (E.GROUP_ID_NOT_FOUND, message)
        r = await raw.delete(group, ["t"])
        assert (r["error_code"], r["error_message"]) == (E.GROUP_ID_NOT_FOUND, message)
