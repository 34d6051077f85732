"""A JoinGroup or SyncGroup parked in the coordinator is handed back to its connection, which
waits for the answer in its own read loop (serve_connection) instead of keeping the
handler's coroutines and a cancel scope alive: what it answers, in which order, what observers
see, and that the handler's frames are really gone while it waits."""

from __future__ import annotations

import trio

from kafka_emu.broker.events import RequestHandled
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol.headers import encode_request
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest

from test_server import API_VERSIONS, JOIN, connect, join_as_new_member, join_request


def _awaited_functions(task) -> list[str]:
    """The names of the coroutines ``task`` is suspended in, outermost first."""
    names, coro = [], task.coro
    while coro is not None:
        code = getattr(coro, "cr_code", None) or getattr(coro, "gi_code", None)
        if code is not None:
            names.append(code.co_name)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return names


async def test_a_parked_join_waits_in_the_connection_loop_not_in_its_handler(start_broker):
    bound = await start_broker({"group.initial.rebalance.delay.ms": 600_000})
    client = await connect(bound)
    member = await join_as_new_member(client)
    await client.send(JOIN, 5, join_request(member_id=member))
    while not bound.broker.pending:
        await trio.sleep(0.01)
    await trio.sleep(0.05)  # the connection task reaches its wait
    stacks = []
    todo = [trio.lowlevel.current_root_task()]
    while todo:
        task = todo.pop()
        stacks.append(_awaited_functions(task))
        todo.extend(child for nursery in task.child_nurseries for child in nursery.child_tasks)
    # the parked request's connection waits as an idle one does: serve_connection straight
    # over trio's wait on its socket, no coroutine of its own
    (pending,) = bound.broker.pending.values()
    assert pending.socket is not None
    # it keeps its RequestHandled facts, with the group's and member's own id strings
    group = bound.broker.coordinator.group("g")
    assert pending.request.member_id == member
    assert pending.request.member_id is group.members[member].member_id
    assert pending.request.group_id is group.group_id
    assert pending.client_id == group.members[member].client_id
    assert pending.client_id is group.members[member].client_id
    served = [s for s in stacks if "serve_connection" in s]
    assert served and all(s[s.index("serve_connection") + 1:][:2] == ["wait_readable"] * 2
                          for s in served), stacks


async def test_answers_around_a_parked_join_keep_their_order_and_are_observed(start_broker):
    seen = []
    bound = await start_broker({"group.initial.rebalance.delay.ms": 300}, observer=seen.append)
    client = await connect(bound)
    member = await join_as_new_member(client)
    # one write: an ApiVersions, a JoinGroup that parks for the initial delay, an ApiVersions
    await client.send_raw(encode_request(API_VERSIONS, 0, 71, "w", ApiVersionsRequest())
                          + encode_request(JOIN, 5, 72, "w", join_request(member_id=member))
                          + encode_request(API_VERSIONS, 0, 73, "w", ApiVersionsRequest()))
    with trio.fail_after(30):
        first = await client.receive(API_VERSIONS, 0, 71)
        joined = await client.receive(JOIN, 5, 72)
        last = await client.receive(API_VERSIONS, 0, 73)
    assert first.error_code == last.error_code == ErrorCode.NONE
    assert joined.error_code == ErrorCode.NONE and joined.leader == member
    handled = [e for e in seen if isinstance(e, RequestHandled) and e.correlation_id in (71, 72, 73)]
    assert [e.correlation_id for e in handled] == [71, 72, 73]
    join = handled[1]
    assert (join.api, join.version, join.member_id, join.group_id) == ("JoinGroup", 5, member, "g")
    assert join.error_code == ErrorCode.NONE and join.client_id == "w"
    assert join.latency_ms >= 250  # parked for the initial delay
    assert bound.broker.pending == {} and bound.broker.unexpected == []


async def test_a_parked_join_reads_no_further_past_the_limit_and_answers_all_in_order(
        start_broker):
    bound = await start_broker({"group.initial.rebalance.delay.ms": 500})
    client = await connect(bound)
    member = await join_as_new_member(client)
    # 1.2 MB pipelined behind the parked join (ApiVersions with bytes after the body, which
    # Kafka's parser ignores): past PARKED_READ_LIMIT the connection stops reading until the
    # join is answered, then answers the rest in order
    big = encode_request(API_VERSIONS, 0, 81, "w", ApiVersionsRequest())
    padding = b"\x00" * 600_000
    framed = [(int.from_bytes(big[:4], "big") + len(padding)).to_bytes(4, "big") + big[4:]
              + padding]
    big2 = encode_request(API_VERSIONS, 0, 82, "w", ApiVersionsRequest())
    framed.append((int.from_bytes(big2[:4], "big") + len(padding)).to_bytes(4, "big")
                  + big2[4:] + padding)
    await client.send_raw(encode_request(JOIN, 5, 80, "w", join_request(member_id=member)))

    async def send_rest():
        await client.send_raw(b"".join(framed))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_rest)
        with trio.fail_after(30):
            joined = await client.receive(JOIN, 5, 80)
            after = [await client.receive(API_VERSIONS, 0, 81),
                     await client.receive(API_VERSIONS, 0, 82)]
    assert joined.error_code == ErrorCode.NONE
    assert [a.error_code for a in after] == [ErrorCode.NONE, ErrorCode.NONE]
    assert bound.broker.unexpected == []


async def test_many_parked_joins_some_clients_gone_the_rest_answered(start_broker):
    # 40 members park their joins for the initial delay; every other client closes while
    # parked: the others are all answered in one generation, nothing is left parked
    bound = await start_broker({"group.initial.rebalance.delay.ms": 1000})
    clients = [await connect(bound, f"c{i}") for i in range(40)]
    members = [await join_as_new_member(c, session=30000, rebalance=30000) for c in clients]
    for client, member in zip(clients, members):
        await client.send(JOIN, 5, join_request(member_id=member, session=30000,
                                                rebalance=30000))
    while len(bound.broker.pending) < 40:
        await trio.sleep(0.01)
    for client in clients[1::2]:
        await client.aclose()
    answers = {}

    async def receive(i):
        answers[i] = await clients[i].receive(JOIN, 5)

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            for i in range(0, 40, 2):
                nursery.start_soon(receive, i)
    assert {a.error_code for a in answers.values()} == {ErrorCode.NONE}
    assert len({a.generation_id for a in answers.values()}) == 1
    assert bound.broker.pending == {} and bound.broker.unexpected == []
