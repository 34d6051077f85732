"""The server over real sockets on port 0: versions, ordering, bad input, timeouts."""

import trio

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.protocol.messages.find_coordinator import FindCoordinatorRequest
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from kafka_emu.testing.wire import WireClient

API_VERSIONS = BY_NAME["ApiVersions"]
JOIN = BY_NAME["JoinGroup"]
SYNC = BY_NAME["SyncGroup"]
HEARTBEAT = BY_NAME["Heartbeat"]
FIND = BY_NAME["FindCoordinator"]


async def connect(bound, client_id="wire-test"):
    return await WireClient.connect(bound.host, bound.port, client_id)


def join_request(member_id="", group="g", instance=None, session=10000, rebalance=10000):
    return JoinGroupRequest(group_id=group, session_timeout_ms=session,
                            rebalance_timeout_ms=rebalance, member_id=member_id,
                            group_instance_id=instance, protocol_type="consumer",
                            protocols=[JoinGroupRequestProtocol(name="range", metadata=b"m")])


async def join_as_new_member(client, group="g", version=5, **kw):
    """KIP-394: the first v4+ join returns MEMBER_ID_REQUIRED with the id to rejoin with."""
    first = await client.request(JOIN, version, join_request(group=group, **kw))
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    return first.member_id


async def test_api_versions_advertises_every_handled_api(start_broker):
    bound = await start_broker()
    client = await connect(bound)
    resp = await client.request(API_VERSIONS, 3, ApiVersionsRequest(
        client_software_name="wire-test", client_software_version="1.0"))
    assert resp.error_code == ErrorCode.NONE
    ranges = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert ranges[11] == (0, 9) and ranges[14] == (0, 5) and ranges[12] == (0, 4)
    assert ranges[18] == (0, 4) and ranges[10] == (0, 6) and ranges[16] == (0, 5)
    assert ranges[15] == (0, 6)
    assert ranges[68] == (0, 1) and ranges[69] == (0, 1)  # KIP-848, as Kafka 4.x


async def test_kip848_apis_are_not_advertised_without_the_consumer_protocol(start_broker):
    bound = await start_broker({"group.coordinator.rebalance.protocols": "classic"})
    client = await connect(bound)
    resp = await client.request(API_VERSIONS, 3, ApiVersionsRequest(
        client_software_name="wire-test", client_software_version="1.0"))
    ranges = {k.api_key for k in resp.api_keys}
    assert 68 not in ranges and 69 not in ranges and 11 in ranges


async def test_api_versions_too_new_gets_v0_unsupported_version(start_broker):
    bound = await start_broker()
    client = await connect(bound)
    # A version we do not know: the body is not parsed and the answer is in v0 (KIP-511).
    from kafka_emu.protocol.headers import RequestHeader
    from kafka_emu.protocol.codec import encode
    header = encode(RequestHeader(request_api_key=18, request_api_version=99, correlation_id=7,
                                  client_id="x"), 2)
    body = b"\x00garbage"
    frame = len(header + body).to_bytes(4, "big") + header + body
    await client.send_raw(frame)
    resp = await client.receive(API_VERSIONS, 0, 7)
    assert resp.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in resp.api_keys] == [(18, 0, 4)]


async def test_api_versions_invalid_software_name_is_invalid_request(start_broker):
    bound = await start_broker()
    client = await connect(bound)
    resp = await client.request(API_VERSIONS, 3, ApiVersionsRequest(
        client_software_name="", client_software_version="1.0"))
    assert resp.error_code == ErrorCode.INVALID_REQUEST and resp.api_keys == []


async def test_api_versions_cap_emulates_an_older_broker(start_broker):
    bound = await start_broker({"emu.api.max.versions": "JoinGroup:4,SyncGroup:2"})
    client = await connect(bound)
    resp = await client.request(API_VERSIONS, 0, ApiVersionsRequest())
    ranges = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert ranges[11] == (0, 4) and ranges[14] == (0, 2)
    # ... and a capped-out version is refused like any unsupported one: the connection closes
    await client.send(JOIN, 5, join_request())
    assert await client.receive_frame() is None


async def test_find_coordinator_answers_with_this_broker_v0_to_v6(start_broker):
    bound = await start_broker()
    client = await connect(bound)
    for v in range(0, 4):
        resp = await client.request(FIND, v, FindCoordinatorRequest(key="g"))
        assert (resp.error_code, resp.host, resp.port) == (0, bound.host, bound.port)
        if v >= 1:
            assert resp.error_message == "NONE"
    for v in range(4, 7):
        resp = await client.request(FIND, v, FindCoordinatorRequest(coordinator_keys=["a", "b"]))
        assert [(c.key, c.error_code, c.port) for c in resp.coordinators] == [
            ("a", 0, bound.port), ("b", 0, bound.port)]


async def test_garbage_frame_closes_only_that_connection(start_broker):
    bound = await start_broker()
    bad = await connect(bound)
    good = await connect(bound)
    await bad.send_raw(b"\x00\x00\x00\x05\x00\x0b\x00")  # too short for a header
    await bad.send_raw(b"\x00\x00")
    assert await bad.receive_frame() is None
    resp = await good.request(API_VERSIONS, 0, ApiVersionsRequest())
    assert resp.error_code == ErrorCode.NONE


async def test_unknown_api_key_closes_the_connection(start_broker):
    bound = await start_broker()
    client = await connect(bound)
    await client.send_raw(b"\x00\x00\x00\x0a\x03\xe7\x00\x00\x00\x00\x00\x01\xff\xff")
    assert await client.receive_frame() is None


async def test_oversize_frame_closes_the_connection(start_broker):
    bound = await start_broker({"socket.request.max.bytes": "1000"})
    client = await connect(bound)
    await client.send_raw((5000).to_bytes(4, "big") + b"\x00" * 100)
    assert await client.receive_frame() is None
    other = await connect(bound)
    assert (await other.request(API_VERSIONS, 0, ApiVersionsRequest())).error_code == 0


async def test_truncated_body_closes_the_connection(start_broker):
    bound = await start_broker()
    client = await connect(bound)
    from kafka_emu.protocol.headers import encode_request
    frame = encode_request(JOIN, 5, 1, "c", join_request())
    cut = frame[4:-5]
    await client.send_raw(len(cut).to_bytes(4, "big") + cut)
    assert await client.receive_frame() is None


async def test_two_members_rebalance_over_the_wire(start_broker, autojump_clock):
    # a 3 s initial delay lets both members into the first generation
    bound = await start_broker({"group.initial.rebalance.delay.ms": "3000"})
    a, b = await connect(bound, "a"), await connect(bound, "b")
    id_a = await join_as_new_member(a)
    id_b = await join_as_new_member(b)
    results = {}

    async def join(client, member_id, key):
        results[key] = await client.request(JOIN, 5, join_request(member_id=member_id))

    async with trio.open_nursery() as n:
        n.start_soon(join, a, id_a, "a")
        n.start_soon(join, b, id_b, "b")
    ra, rb = results["a"], results["b"]
    assert ra.error_code == rb.error_code == ErrorCode.NONE
    assert ra.generation_id == rb.generation_id == 1
    leader, follower = (a, b) if ra.leader == id_a else (b, a)
    lead_resp = ra if leader is a else rb
    assert lead_resp.leader in (id_a, id_b) and len(lead_resp.members) == 2
    assignments = [SyncGroupRequestAssignment(member_id=m.member_id, assignment=m.member_id.encode())
                   for m in lead_resp.members]
    synced = {}

    async def sync(client, member_id, assignments, key):
        synced[key] = await client.request(SYNC, 5, SyncGroupRequest(
            group_id="g", generation_id=1, member_id=member_id, protocol_type="consumer",
            protocol_name="range", assignments=assignments))

    follower_id = id_b if leader is a else id_a
    async with trio.open_nursery() as n:
        n.start_soon(sync, follower, follower_id, [], "f")
        await trio.sleep(0.1)  # the follower parks first
        n.start_soon(sync, leader, lead_resp.leader, assignments, "l")
    assert synced["f"].assignment == follower_id.encode()
    assert synced["l"].assignment == lead_resp.leader.encode()
    hb = await a.request(HEARTBEAT, 4, HeartbeatRequest(group_id="g", generation_id=1,
                                                        member_id=id_a))
    assert hb.error_code == ErrorCode.NONE


async def test_parked_join_holds_its_connection_but_not_others(start_broker, autojump_clock):
    bound = await start_broker({"group.initial.rebalance.delay.ms": "3000"})
    a, other = await connect(bound, "a"), await connect(bound, "o")
    id_a = await join_as_new_member(a)
    await a.send(JOIN, 5, join_request(member_id=id_a))
    corr = await a.send(API_VERSIONS, 0, ApiVersionsRequest())  # queued behind the join
    start = trio.current_time()
    resp = await other.request(API_VERSIONS, 0, ApiVersionsRequest())
    assert resp.error_code == 0 and trio.current_time() - start < 1
    join = await a.receive(JOIN, 5)
    assert join.error_code == 0 and trio.current_time() - start >= 3.0  # the initial delay
    after = await a.receive(API_VERSIONS, 0, corr)
    assert after.error_code == 0


async def test_session_timeout_expires_a_silent_member(start_broker, autojump_clock):
    bound = await start_broker()
    a, b = await connect(bound, "a"), await connect(bound, "b")
    id_a = await join_as_new_member(a, session=6000)
    first = await a.request(JOIN, 5, join_request(member_id=id_a, session=6000))
    assert first.error_code == 0 and first.generation_id == 1
    sync = await a.request(SYNC, 3, SyncGroupRequest(group_id="g", generation_id=1,
                                                     member_id=id_a, assignments=[]))
    assert sync.error_code == 0
    # b joins; a never heartbeats again, so the rebalance completes without it after 6 s
    id_b = await join_as_new_member(b, session=6000)
    start = trio.current_time()
    joined = await b.request(JOIN, 5, join_request(member_id=id_b, session=6000))
    assert joined.error_code == 0 and joined.generation_id == 2
    assert joined.leader == id_b and [m.member_id for m in joined.members] == [id_b]
    assert trio.current_time() - start >= 5.9
    hb = await a.request(HEARTBEAT, 4, HeartbeatRequest(group_id="g", generation_id=1,
                                                        member_id=id_a))
    assert hb.error_code == ErrorCode.UNKNOWN_MEMBER_ID


async def test_disconnect_while_parked_loses_nothing_for_others(start_broker, autojump_clock):
    bound = await start_broker()
    a, b = await connect(bound, "a"), await connect(bound, "b")
    id_a = await join_as_new_member(a, session=6000, rebalance=6000)
    id_b = await join_as_new_member(b, session=6000, rebalance=6000)
    await a.send(JOIN, 5, join_request(member_id=id_a, session=6000, rebalance=6000))
    await a.aclose()  # gone while its join is parked
    joined = await b.request(JOIN, 5, join_request(member_id=id_b, session=6000, rebalance=6000))
    assert joined.error_code == 0
    assert bound.broker.unexpected == []
