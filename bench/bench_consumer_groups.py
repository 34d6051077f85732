"""Group formation and rebalance time: the consumer group protocol (KIP-848) vs the classic
protocol, for 3 and 1000 members, in one run against one in-process kafka-emu (not a test; it
prints a table and ratios and always exits 0).

Every member is a raw wire client (kafka_emu.testing.wire) on its own TCP connection, written as a
well-behaved client of its protocol:
- classic: JoinGroup v9 (MEMBER_ID_REQUIRED round trip first), the leader computes a range
  assignment, SyncGroup v5, then Heartbeat v4 every interval; REBALANCE_IN_PROGRESS sends it
  back to JoinGroup;
- consumer: ConsumerGroupHeartbeat v1 joining with epoch 0, then heartbeats every interval
  reporting the partitions it owns; like the Java client and librdkafka it heartbeats at once
  after taking a new assignment (to acknowledge a revocation), not an interval later.
Both protocols use the same heartbeat interval (group.consumer.heartbeat.interval.ms and the
classic clients' heartbeat.interval.ms): 500 ms up to 100 members, 3000 ms (the Java client's
classic default) above, because the clients share one process and its core with the broker: at
500 ms, 1000 members send 2000 heartbeats a second and the broker's answers to new members'
joins queue behind them, which measures the machine, not the protocol.

Phases, each timed from the first request to the moment the broker's group is settled (classic:
Stable, every member synced in the current generation; consumer: Stable, every member's client
owning exactly its assignment) and the assignment covers every partition once:
- formation: N members start at once on a fresh group (topic of max(6, N) partitions);
- rebalance: one member leaves (LeaveGroup / heartbeat with epoch -1), N-1 settle again.

    python bench/bench_consumer_groups.py [N ...]      (default: 3 1000)
"""

from __future__ import annotations

import sys
import time

import trio

from kafka_emu.coordinator import GroupState
from kafka_emu.coordinator.consumer import ConsumerGroupState
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol.messages import consumer_group_heartbeat as cgh
from kafka_emu.protocol.messages import heartbeat as hb
from kafka_emu.protocol.messages import join_group as jg
from kafka_emu.protocol.messages import leave_group as lg
from kafka_emu.protocol.messages import sync_group as sg
from kafka_emu.protocol.messages.consumer_protocol import (ConsumerProtocolAssignment,
                                                           ConsumerProtocolSubscription,
                                                           TopicPartition, decode_assignment,
                                                           encode_assignment, encode_subscription)
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.wire import WireClient

def interval_ms(n: int) -> int:
    return 500 if n <= 100 else 3000
LIMIT_S = 300.0
TOPIC = "bench"
SUBSCRIPTION = encode_subscription(ConsumerProtocolSubscription(topics=[TOPIC]), 0)


class Settled(Exception):
    pass


# ----------------------------------------------------------------------------------- classic
class ClassicMember:
    def __init__(self, index: int) -> None:
        self.index = index
        self.member_id = ""
        self.generation = -1
        self.owned: set[int] = set()
        self.leaving = False


async def classic_member(emu, group: str, member: ClassicMember, partitions: int, stop,
                         heartbeat_ms: int) -> None:
    client = await WireClient.connect(emu.host, emu.port, f"classic-{member.index}")
    try:
        while not stop.is_set():
            join = await client.request(jg.API, 9, jg.JoinGroupRequest(
                group_id=group, session_timeout_ms=45_000, rebalance_timeout_ms=60_000,
                member_id=member.member_id, protocol_type="consumer",
                protocols=[jg.JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)]))
            if join.error_code == ErrorCode.MEMBER_ID_REQUIRED:
                member.member_id = join.member_id
                continue
            assert join.error_code == 0, join
            member.member_id = join.member_id
            assignments = []
            if join.leader == member.member_id:
                ids = sorted(m.member_id for m in join.members)
                share, extra = divmod(partitions, len(ids))
                start = 0
                for i, mid in enumerate(ids):
                    size = share + (i < extra)
                    assignments.append(sg.SyncGroupRequestAssignment(
                        member_id=mid, assignment=encode_assignment(ConsumerProtocolAssignment(
                            assigned_partitions=[TopicPartition(
                                topic=TOPIC, partitions=list(range(start, start + size)))]), 0)))
                    start += size
            sync = await client.request(sg.API, 5, sg.SyncGroupRequest(
                group_id=group, generation_id=join.generation_id, member_id=member.member_id,
                protocol_type="consumer", protocol_name="range", assignments=assignments))
            if sync.error_code == ErrorCode.REBALANCE_IN_PROGRESS:
                continue
            assert sync.error_code == 0, sync
            member.generation = join.generation_id
            member.owned = {p for tp in decode_assignment(sync.assignment).assigned_partitions
                            for p in tp.partitions}
            while not stop.is_set():
                with trio.move_on_after(heartbeat_ms / 1000):
                    await stop.wait()
                if stop.is_set():
                    break
                if member.leaving:
                    await client.request(lg.API, 5, lg.LeaveGroupRequest(
                        group_id=group, members=[lg.MemberIdentity(member_id=member.member_id)]))
                    return
                beat = await client.request(hb.API, 4, hb.HeartbeatRequest(
                    group_id=group, generation_id=member.generation, member_id=member.member_id))
                if beat.error_code == ErrorCode.REBALANCE_IN_PROGRESS:
                    break
    finally:
        await client.aclose()


def classic_settled(emu, group: str, members: list[ClassicMember], partitions: int) -> bool:
    g = emu.broker.coordinator.group(group)
    if g is None or g.state is not GroupState.STABLE or len(g.members) != len(members):
        return False
    if any(m.generation != g.generation for m in members):
        return False
    owned = [p for m in members for p in m.owned]
    return len(owned) == partitions and set(owned) == set(range(partitions))


# ---------------------------------------------------------------------------------- consumer
class ConsumerMember:
    def __init__(self, index: int) -> None:
        self.index = index
        self.member_id = f"bench-member-{index:05d}"
        self.epoch = 0
        self.owned: set[int] = set()
        self.leaving = False


async def consumer_member(emu, group: str, member: ConsumerMember, topic_id, stop,
                          heartbeat_ms: int) -> None:
    client = await WireClient.connect(emu.host, emu.port, f"consumer-{member.index}")
    try:
        resp = await client.request(cgh.API, 1, cgh.ConsumerGroupHeartbeatRequest(
            group_id=group, member_id=member.member_id, member_epoch=0,
            rebalance_timeout_ms=60_000, subscribed_topic_names=[TOPIC], topic_partitions=[]))
        while not stop.is_set():
            assert resp.error_code == 0, resp
            member.epoch = resp.member_epoch
            changed = False
            if resp.assignment is not None:
                new = {p for tp in resp.assignment.topic_partitions for p in tp.partitions}
                changed = new != member.owned
                member.owned = new
            if not changed:
                with trio.move_on_after(heartbeat_ms / 1000):
                    await stop.wait()
                if stop.is_set():
                    break
            if member.leaving:
                await client.request(cgh.API, 1, cgh.ConsumerGroupHeartbeatRequest(
                    group_id=group, member_id=member.member_id, member_epoch=-1))
                return
            resp = await client.request(cgh.API, 1, cgh.ConsumerGroupHeartbeatRequest(
                group_id=group, member_id=member.member_id, member_epoch=member.epoch,
                topic_partitions=[cgh.ConsumerGroupHeartbeatTopicPartitions(
                    topic_id=topic_id, partitions=sorted(member.owned))]))
    finally:
        await client.aclose()


def consumer_settled(emu, group: str, members: list[ConsumerMember], partitions: int) -> bool:
    g = emu.broker.coordinator._core.consumer_groups.get(group)
    if g is None or g.state is not ConsumerGroupState.STABLE or len(g.members) != len(members):
        return False
    for m in members:
        server = g.members.get(m.member_id)
        if server is None or set(server.assigned.get(TOPIC, ())) != m.owned:
            return False
    owned = [p for m in members for p in m.owned]
    return len(owned) == partitions and set(owned) == set(range(partitions))


# ------------------------------------------------------------------------------------ driver
async def until(check, limit=LIMIT_S) -> float:
    t0 = time.perf_counter()
    with trio.fail_after(limit):
        while not check():
            await trio.sleep(0.01)
    return time.perf_counter() - t0


async def run(protocol: str, n: int) -> tuple[float, float]:
    partitions = max(6, n)
    heartbeat_ms = interval_ms(n)
    config = make_config({"group.consumer.min.heartbeat.interval.ms": 1,
                          "group.consumer.heartbeat.interval.ms": heartbeat_ms},
                         topics={TOPIC: partitions})
    async with open_emulator(config) as emu:
        stop = trio.Event()
        group = f"{protocol}-{n}"
        async with trio.open_nursery() as nursery:
            if protocol == "classic":
                members = [ClassicMember(i) for i in range(n)]
                settled = lambda: classic_settled(emu, group, live, partitions)  # noqa: E731
                for m in members:
                    nursery.start_soon(classic_member, emu, group, m, partitions, stop, heartbeat_ms)
            else:
                topic_id = emu.broker.topics.lookup(TOPIC).topic_id
                members = [ConsumerMember(i) for i in range(n)]
                settled = lambda: consumer_settled(emu, group, live, partitions)  # noqa: E731
                for m in members:
                    nursery.start_soon(consumer_member, emu, group, m, topic_id, stop, heartbeat_ms)
            live = members
            formation = await until(settled)
            members[0].leaving = True
            live = members[1:]
            rebalance = await until(settled)
            stop.set()
    return formation, rebalance


def main(sizes: list[int]) -> None:
    print("times in ms (formation = N members join a new group; rebalance = one leaves)")
    print(f"{'N':>5} {'heartbeat':>9} {'protocol':>9} {'formation':>10} {'rebalance':>10}")
    results = {}
    for n in sizes:
        for protocol in ("classic", "consumer"):
            formation, rebalance = trio.run(run, protocol, n)
            results[(n, protocol)] = (formation, rebalance)
            print(f"{n:>5} {interval_ms(n):>9} {protocol:>9} {formation * 1000:>10.1f} "
                  f"{rebalance * 1000:>10.1f}",
                  flush=True)
    for n in sizes:
        cf, cr = results[(n, "classic")]
        kf, kr = results[(n, "consumer")]
        print(f"N={n}: KIP-848 / classic  formation {kf / cf:.2f}x  rebalance {kr / cr:.2f}x")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [3, 1000])
