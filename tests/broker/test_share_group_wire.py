"""ShareGroupHeartbeat (76) and ShareGroupDescribe (77) v1 over real sockets, cross-checked with an
independent encoder and decoder written here with struct.pack (no Python client encodes these
APIs): joins, epochs, assignments by topic id, leave, every error path of the heartbeat, describe
of share / other / unknown / empty ids, ListGroups v5 with the share type, DescribeGroups and
DeleteGroups on a share group, JoinGroup and ConsumerGroupHeartbeat on a share group id, the
share.version feature in ApiVersions and the switch turning share groups off."""

from __future__ import annotations

import struct
import uuid

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import consumer_group_heartbeat as cgh
from kafka_emu.protocol.messages import delete_groups as dg
from kafka_emu.protocol.messages import describe_groups as dsg
from kafka_emu.protocol.messages import list_groups as lg
from kafka_emu.protocol.messages import metadata as md
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.protocol.messages.join_group import JoinGroupRequestProtocol as JoinGroupProtocol, JoinGroupRequest
from kafka_emu.testing.wire import WireClient

# the compact-string primitives are the share wire tests' own independent codec
from integration.share_wire import cstr, uvarint


# --------------------------------------------------------------- the independent codec
def carray(items: list[bytes] | None) -> bytes:
    return b"\x00" if items is None else uvarint(len(items) + 1) + b"".join(items)


def frame(api_key: int, version: int, correlation_id: int, body: bytes) -> bytes:
    client = b"hand-built"
    header = (struct.pack(">hhih", api_key, version, correlation_id, len(client)) + client
              + b"\x00")  # request header v2: tagged fields
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def heartbeat_body(group: str, member: str, epoch: int, rack: str | None = None,
                   topics: list[str] | None = None) -> bytes:
    return (cstr(group) + cstr(member) + struct.pack(">i", epoch) + cstr(rack)
            + carray(None if topics is None else [cstr(t) for t in topics]) + b"\x00")


def describe_body(groups: list[str], with_ops: bool = False) -> bytes:
    return carray([cstr(g) for g in groups]) + struct.pack(">?", with_ops) + b"\x00"


class Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        value = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value[0]

    def uvarint(self) -> int:
        shift = result = 0
        while True:
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    def cstr(self) -> str | None:
        n = self.uvarint()
        if n == 0:
            return None
        s = self.data[self.pos:self.pos + n - 1].decode()
        self.pos += n - 1
        return s

    def array(self, item) -> list:
        n = self.uvarint()
        return [] if n == 0 else [item(self) for _ in range(n - 1)]

    def uuid(self) -> uuid.UUID:
        value = uuid.UUID(bytes=self.data[self.pos:self.pos + 16])
        self.pos += 16
        return value

    def tags(self) -> None:
        assert self.uvarint() == 0


def decode_heartbeat(r: Reader) -> dict:
    out = dict(throttle=r.take(">i"), error=r.take(">h"), message=r.cstr(), member_id=r.cstr(),
               epoch=r.take(">i"), interval=r.take(">i"))
    if r.take(">b") < 0:
        out["assignment"] = None
    else:
        def topic(r):
            t = (r.uuid(), r.array(lambda r: r.take(">i")))
            r.tags()
            return t
        out["assignment"] = dict(r.array(topic))
        r.tags()
    r.tags()
    assert r.pos == len(r.data)
    return out


def decode_describe(r: Reader) -> list[dict]:
    r.take(">i")

    def member(r):
        m = dict(member_id=r.cstr(), rack=r.cstr(), epoch=r.take(">i"), client_id=r.cstr(),
                 client_host=r.cstr(), topics=r.array(Reader.cstr))

        def tp(r):
            t = (r.uuid(), r.cstr(), r.array(lambda r: r.take(">i")))
            r.tags()
            return t
        m["assignment"] = r.array(tp)
        r.tags()
        r.tags()
        return m

    def group(r):
        g = dict(error=r.take(">h"), message=r.cstr(), group_id=r.cstr(), state=r.cstr(),
                 group_epoch=r.take(">i"), assignment_epoch=r.take(">i"), assignor=r.cstr(),
                 members=r.array(member), ops=r.take(">i"))
        r.tags()
        return g
    groups = r.array(group)
    r.tags()
    assert r.pos == len(r.data)
    return groups


class Raw:
    def __init__(self, wire: WireClient) -> None:
        self.wire, self.next_id = wire, 1000

    async def call(self, api_key: int, body: bytes) -> Reader:
        self.next_id += 1
        await self.wire.send_raw(frame(api_key, 1, self.next_id, body))
        data = await self.wire.receive_frame()
        r = Reader(data)
        assert r.take(">i") == self.next_id
        r.tags()  # response header v1
        return r

    async def heartbeat(self, *args, **kw) -> dict:
        return decode_heartbeat(await self.call(76, heartbeat_body(*args, **kw)))

    async def describe(self, groups: list[str], with_ops: bool = False) -> list[dict]:
        return decode_describe(await self.call(77, describe_body(groups, with_ops)))


async def connect(start_broker, settings=None, topics=None):
    bound = await start_broker(settings, topics=topics or {"t": 2, "one": 1})
    wire = await WireClient.connect(bound.host, bound.port)
    ids = {t.name: t.topic_id for t in (await wire.request(
        BY_NAME["Metadata"], 12, md.MetadataRequest(topics=None))).topics}
    return wire, Raw(wire), ids


M1, M2 = "AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB"


# ------------------------------------------------------------------------------ the tests
async def test_two_members_share_a_topic(start_broker):
    _, raw, ids = await connect(start_broker)
    r = await raw.heartbeat("g", M1, 0, topics=["t"])
    assert (r["error"], r["member_id"], r["epoch"]) == (0, M1, 1)
    assert r["assignment"] == {ids["t"]: [0, 1]}
    assert r["interval"] == 250  # kafka-emu's group.share.heartbeat.interval.ms
    r2 = await raw.heartbeat("g", M2, 0, topics=["t"])
    assert r2["epoch"] == 2 and len(r2["assignment"][ids["t"]]) == 1
    r1 = await raw.heartbeat("g", M1, 1)
    assert r1["epoch"] == 2
    assert sorted(r1["assignment"][ids["t"]] + r2["assignment"][ids["t"]]) == [0, 1]
    assert (await raw.heartbeat("g", M1, 2))["assignment"] is None  # nothing changed
    [g] = await raw.describe(["g"], with_ops=True)
    assert (g["error"], g["state"], g["group_epoch"], g["assignment_epoch"], g["assignor"]) == (
        0, "Stable", 2, 2, "simple")
    assert [m["member_id"] for m in g["members"]] == [M1, M2]
    assert g["members"][0]["client_id"] == "hand-built" and g["members"][0]["topics"] == ["t"]
    assert g["members"][0]["assignment"][0][:2] == (ids["t"], "t")
    assert g["ops"] != -2**31
    left = await raw.heartbeat("g", M2, -1)
    assert (left["error"], left["member_id"], left["epoch"]) == (0, M2, -1)


async def test_more_members_than_partitions_all_get_the_partition(start_broker):
    _, raw, ids = await connect(start_broker)
    members = [f"member-{i:016d}" for i in range(3)]
    for m in members:
        await raw.heartbeat("g", m, 0, topics=["one"])
    for m in members:
        r = await raw.heartbeat("g", m, 0, topics=["one"])  # a rejoin always carries it
        assert r["assignment"] == {ids["one"]: [0]}


async def test_heartbeat_errors(start_broker):
    wire, raw, _ = await connect(start_broker, {"group.share.max.size": "1"})
    E = ErrorCode
    cases = [
        (("g", "", 0), {"topics": ["t"]}, E.INVALID_REQUEST, "MemberId can't be empty."),
        (("g", " ", 0), {"topics": ["t"]}, E.INVALID_REQUEST, "MemberId can't be empty."),
        ((" ", M1, 0), {"topics": ["t"]}, E.INVALID_REQUEST, "GroupId can't be empty."),
        (("g", M1, 0), {"topics": ["t"], "rack": " "}, E.INVALID_REQUEST, "RackId can't be empty."),
        (("g", M1, 0), {}, E.INVALID_REQUEST, "SubscribedTopicNames must be set in first request."),
        (("g", M1, -2), {}, E.INVALID_REQUEST, "MemberEpoch is invalid."),
        (("g", M1, 1), {}, E.GROUP_ID_NOT_FOUND, "Share group g not found."),
        (("g", M1, -1), {}, E.GROUP_ID_NOT_FOUND, "Group g not found."),
    ]
    for args, kw, code, message in cases:
        r = await raw.heartbeat(*args, **kw)
        assert (r["error"], r["message"]) == (code, message), (args, kw)
    assert (await raw.heartbeat("g", M1, 0, topics=["t"]))["error"] == 0
    r = await raw.heartbeat("g", M2, 0, topics=["t"])
    assert (r["error"], r["message"]) == (
        E.GROUP_MAX_SIZE_REACHED, "The share group has reached its maximum capacity of 1 members.")
    r = await raw.heartbeat("g", M1, 5)
    assert r["error"] == E.FENCED_MEMBER_EPOCH and "greater member epoch (5)" in r["message"]
    assert (await raw.heartbeat("g", M1, -1))["error"] == 0
    r = await raw.heartbeat("g", M2, 1)  # the group exists, Empty, and has room again
    assert (r["error"], r["message"]) == (E.UNKNOWN_MEMBER_ID, f"Member {M2} is not a member of group g.")
    # a classic group's id
    await wire.request(BY_NAME["JoinGroup"], 9, JoinGroupRequest(
        group_id="classic", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
        protocol_type="consumer", protocols=[JoinGroupProtocol(name="range", metadata=b"")]))
    r = await raw.heartbeat("classic", M1, 0, topics=["t"])
    assert (r["error"], r["message"]) == (E.GROUP_ID_NOT_FOUND, "Group classic is not a share group.")


async def test_other_apis_on_a_share_group(start_broker):
    wire, raw, _ = await connect(start_broker)
    await raw.heartbeat("g", M1, 0, topics=["t"])
    groups = await raw.describe(["g", "nope", ""])
    assert [(g["error"], g["message"]) for g in groups] == [
        (0, None), (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found."),
        (ErrorCode.INVALID_GROUP_ID, None)]
    # ListGroups v5: the share type, filtered by type and state
    listed = await wire.request(BY_NAME["ListGroups"], 5, lg.ListGroupsRequest(
        states_filter=[], types_filter=["Share"]))
    assert [(x.group_id, x.protocol_type, x.group_state, x.group_type) for x in listed.groups] == [
        ("g", "share", "Stable", "share")]
    listed = await wire.request(BY_NAME["ListGroups"], 5, lg.ListGroupsRequest(
        states_filter=["empty"], types_filter=[]))
    assert listed.groups == []
    listed = await wire.request(BY_NAME["ListGroups"], 0, lg.ListGroupsRequest())
    assert [(x.group_id, x.protocol_type) for x in listed.groups] == [("g", "share")]
    # DescribeGroups: v6 says it is not a classic group, v5 a Dead entry
    d = await wire.request(BY_NAME["DescribeGroups"], 6, dsg.DescribeGroupsRequest(groups=["g"]))
    assert (d.groups[0].error_code, d.groups[0].error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a classic group.")
    d = await wire.request(BY_NAME["DescribeGroups"], 5, dsg.DescribeGroupsRequest(groups=["g"]))
    assert (d.groups[0].error_code, d.groups[0].group_state) == (0, "Dead")
    # JoinGroup and ConsumerGroupHeartbeat on the share group's id
    j = await wire.request(BY_NAME["JoinGroup"], 9, JoinGroupRequest(
        group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
        protocol_type="consumer", protocols=[JoinGroupProtocol(name="range", metadata=b"")]))
    assert (j.error_code, j.member_id) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "")
    c = await wire.request(BY_NAME["ConsumerGroupHeartbeat"], 1, cgh.ConsumerGroupHeartbeatRequest(
        group_id="g", member_id=str(uuid.uuid4()), member_epoch=0, rebalance_timeout_ms=30000,
        subscribed_topic_names=["t"], topic_partitions=[]))
    assert (c.error_code, c.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                               "Group g is not a consumer group.")
    # DeleteGroups: refused while the member is there, done once it left
    d = await wire.request(BY_NAME["DeleteGroups"], 2, dg.DeleteGroupsRequest(groups_names=["g"]))
    assert d.results[0].error_code == ErrorCode.NON_EMPTY_GROUP
    await raw.heartbeat("g", M1, -1)
    d = await wire.request(BY_NAME["DeleteGroups"], 2, dg.DeleteGroupsRequest(groups_names=["g"]))
    assert d.results[0].error_code == 0
    [g] = await raw.describe(["g"])
    assert g["error"] == ErrorCode.GROUP_ID_NOT_FOUND


async def test_share_version_is_finalized_and_can_be_turned_off(start_broker):
    wire, raw, _ = await connect(start_broker)
    v = await wire.request(BY_NAME["ApiVersions"], 3, ApiVersionsRequest(
        client_software_name="t", client_software_version="1"))
    assert [(f.name, f.min_version_level, f.max_version_level) for f in v.finalized_features
            if f.name == "share.version"] == [("share.version", 1, 1)]
    assert {k.api_key: (k.min_version, k.max_version) for k in v.api_keys}[76] == (1, 1)

    wire, raw, _ = await connect(start_broker, {"emu.share.version": "0"})
    v = await wire.request(BY_NAME["ApiVersions"], 3, ApiVersionsRequest(
        client_software_name="t", client_software_version="1"))
    assert [f.name for f in v.finalized_features] == ["transaction.version"]
    r = await raw.heartbeat("g", M1, 0, topics=["t"])
    assert (r["error"], r["message"]) == (ErrorCode.UNSUPPORTED_VERSION, None)
    [g] = await raw.describe(["g"])
    assert g["error"] == ErrorCode.UNSUPPORTED_VERSION


async def test_in_a_cluster_only_the_coordinator_serves_the_share_group(nursery):
    from functools import partial

    from kafka_emu.broker.server import serve
    from kafka_emu.testing import make_config
    bound = await nursery.start(partial(serve, make_config(topics={"t": 2}, brokers=3)))
    cluster = bound.broker.cluster
    home = cluster.coordinator_of("g")
    other = next(n for n in cluster.nodes if n != home)
    wrong = Raw(await WireClient.connect(bound.host, cluster.nodes[other].port))
    right = Raw(await WireClient.connect(bound.host, cluster.nodes[home].port))
    r = await wrong.heartbeat("g", M1, 0, topics=["t"])
    assert r["error"] == ErrorCode.NOT_COORDINATOR
    assert (await right.heartbeat("g", M1, 0, topics=["t"]))["error"] == 0
    [g] = await wrong.describe(["g"])
    assert g["error"] == ErrorCode.NOT_COORDINATOR
    [g] = await right.describe(["g"])
    assert (g["error"], g["state"]) == (0, "Stable")
