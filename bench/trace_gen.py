"""Synthetic traces in the real schema, for the report benchmark.

``generate(root, events)`` writes runs of about RUN_EVENTS events each under
``root/date=.../run=<id>.jsonl`` through the trace writer's own line formatter
(``schema.to_json_line``), so the files are what kafka-emu writes. The mix, per run: one client
library and version (six of them, each with its own API versions), two groups of 2-4 members,
a few rebalances (joins, leaves, session expiries), heartbeats every 3 s (some members far too
often), fetches of the members' own partitions, commits, errors (REBALANCE_IN_PROGRESS around
rebalances, a few ILLEGAL_GENERATION and stale commits), and rare offsets moving backwards.
Seeded: the same arguments give the same files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from kafka_emu.broker import events as se
from kafka_emu.coordinator import events as ce
from kafka_emu.coordinator.state import GroupState
from kafka_emu.protocol.messages import consumer_protocol as cp
from kafka_emu.trace.schema import SCHEMA_VERSION, to_json_line

RUN_EVENTS = 5000
CLIENTS = [  # (software name, version, {api: version})
    ("confluent-kafka-python", "2.6.1", {"Heartbeat": 4, "JoinGroup": 9, "Fetch": 16,
                                        "OffsetCommit": 9, "SyncGroup": 5}),
    ("confluent-kafka-python", "2.8.0", {"Heartbeat": 4, "JoinGroup": 9, "Fetch": 17,
                                        "OffsetCommit": 9, "SyncGroup": 5}),
    ("kafka-python", "2.3.0", {"Heartbeat": 4, "JoinGroup": 5, "Fetch": 11, "OffsetCommit": 7,
                               "SyncGroup": 3}),
    ("kafka-python", "3.0.1", {"Heartbeat": 4, "JoinGroup": 7, "Fetch": 13, "OffsetCommit": 8,
                               "SyncGroup": 5}),
    ("aiokafka", "0.11.0", {"Heartbeat": 1, "JoinGroup": 5, "Fetch": 4, "OffsetCommit": 2,
                            "SyncGroup": 3}),
    ("aiokafka", "0.12.0", {"Heartbeat": 1, "JoinGroup": 5, "Fetch": 4, "OffsetCommit": 3,
                            "SyncGroup": 3}),
]
BROKER_MAX = {"Heartbeat": 4, "JoinGroup": 9, "Fetch": 17, "OffsetCommit": 9, "SyncGroup": 5}
KEYS = {"Heartbeat": 12, "JoinGroup": 11, "Fetch": 1, "OffsetCommit": 8, "SyncGroup": 14}
PARTITIONS = 6


def _assign(members: list[str], topic: str) -> tuple[tuple[str, bytes], ...]:
    out = []
    for i, m in enumerate(members):
        mine = [p for p in range(PARTITIONS) if p % len(members) == i]
        out.append((m, cp.encode_assignment(cp.ConsumerProtocolAssignment(
            assigned_partitions=[cp.TopicPartition(topic=topic, partitions=mine)]), 0)))
    return tuple(out)


class _Run:
    def __init__(self, rng: random.Random, run_id: str, start_ms: int) -> None:
        self.rng, self.run_id, self.now = rng, run_id, start_ms
        self.name, self.version, self.apis = rng.choice(CLIENTS)
        self.lines = [json.dumps({
            "kind": "run_start", "run": run_id, "seq": 0, "at_ms": start_ms,
            "schema_version": SCHEMA_VERSION, "emu_version": "0.1.0", "config": {},
            "labels": {"client": self.name, "suite": rng.choice(["nightly", "pr"])},
            "host": "127.0.0.1", "port": 9092, "broker_api_versions": BROKER_MAX}) + "\n"]
        self.corr = 0

    def emit(self, event) -> None:
        self.lines.append(to_json_line(event, self.run_id, len(self.lines)))

    def request(self, api: str, member: str | None, group: str | None, generation: int | None,
                error: int = 0, conn: int = 1, client_id: str = "c", partitions=(),
                partition_errors=(), session: int | None = None) -> None:
        self.corr += 1
        self.emit(se.RequestHandled(
            at_ms=self.now, connection_id=conn, peer=f"127.0.0.1:{40000 + conn}", api=api,
            api_key=KEYS[api], version=self.apis[api], correlation_id=self.corr,
            client_id=client_id, client_software_name=self.name,
            client_software_version=self.version, group_id=group, member_id=member,
            group_instance_id=None, generation_id=generation,
            latency_ms=round(self.rng.uniform(0.05, 3.0), 3), error_code=error,
            partition_errors=partition_errors, partitions=partitions,
            session_timeout_ms=session, rebalance_timeout_ms=30000 if session else None))

    def rebalance(self, group: str, generation: int, members: list[str], previous, reason: str,
                  topic: str) -> None:
        self.emit(ce.RebalanceTriggered(at_ms=self.now, group_id=group, reason=reason))
        self.emit(ce.StateChanged(at_ms=self.now, group_id=group, old=previous,
                                  new=GroupState.PREPARING_REBALANCE))
        for m in members:
            self.request("JoinGroup", m, group, generation - 1, session=10000,
                         client_id=f"{group}-{m}")
        self.now += int(self.rng.lognormvariate(6.5, 0.8))  # ~700 ms, long tail
        self.emit(ce.GenerationChanged(at_ms=self.now, group_id=group, generation=generation,
                                       protocol_name="range", leader=members[0],
                                       members=tuple(members)))
        sub = cp.encode_subscription(cp.ConsumerProtocolSubscription(topics=[topic]), 0)
        for m in members:
            self.emit(ce.MemberSubscribed(at_ms=self.now, group_id=group, generation=generation,
                                          member_id=m, group_instance_id=None,
                                          protocol_type="consumer", protocol_name="range",
                                          metadata=sub))
        self.emit(ce.StateChanged(at_ms=self.now, group_id=group,
                                  old=GroupState.PREPARING_REBALANCE,
                                  new=GroupState.COMPLETING_REBALANCE))
        self.now += self.rng.randint(2, 40)
        self.lines.append(json.dumps({"kind": "topics_known", "run": self.run_id,
                                      "seq": len(self.lines), "at_ms": self.now,
                                      "topic_partitions": [{"topic": topic,
                                                            "count": PARTITIONS}]}) + "\n")
        self.emit(ce.AssignmentsDistributed(at_ms=self.now, group_id=group,
                                            generation=generation, protocol_type="consumer",
                                            protocol_name="range", leader=members[0],
                                            assignments=_assign(members, topic)))
        for m in members:
            self.request("SyncGroup", m, group, generation, client_id=f"{group}-{m}")
        self.emit(ce.StateChanged(at_ms=self.now, group_id=group,
                                  old=GroupState.COMPLETING_REBALANCE, new=GroupState.STABLE))

    def build(self, target: int) -> list[str]:
        rng = self.rng
        groups = {}
        for g in range(2):
            group = f"g{g}"
            members = [f"m{g}-{i}" for i in range(rng.randint(2, 4))]
            for m in members:
                self.emit(ce.MemberAdded(at_ms=self.now, group_id=group, member_id=m,
                                         group_instance_id=None, client_id=f"{group}-{m}"))
            self.rebalance(group, 1, members, GroupState.EMPTY, "Adding new member", f"t{g}")
            groups[group] = {"members": members, "gen": 1, "offsets": {}, "topic": f"t{g}",
                             "fast": rng.random() < 0.05}
        while len(self.lines) < target:
            self.now += rng.randint(5, 60)
            group = rng.choice(list(groups))
            st = groups[group]
            roll = rng.random()
            member = rng.choice(st["members"])
            conn = st["members"].index(member) + 1 + 10 * int(group[1:])
            cid = f"{group}-{member}"
            if roll < 0.003 and len(st["members"]) > 1:  # someone leaves or expires
                gone = st["members"].pop()
                reason = rng.choice([ce.RemovalReason.LEFT, ce.RemovalReason.SESSION_EXPIRED])
                self.emit(ce.MemberRemoved(at_ms=self.now, group_id=group, member_id=gone,
                                           group_instance_id=None, reason=reason))
                self.request("Heartbeat", member, group, st["gen"], error=27, conn=conn,
                             client_id=cid)
                st["gen"] += 1
                self.rebalance(group, st["gen"], st["members"], GroupState.STABLE,
                               f"removing member {gone}", st["topic"])
            elif roll < 0.005 and len(st["members"]) < 5:  # someone joins
                new = f"{group}-x{len(self.lines)}"
                st["members"].append(new)
                self.emit(ce.MemberAdded(at_ms=self.now, group_id=group, member_id=new,
                                         group_instance_id=None, client_id=f"{group}-{new}"))
                st["gen"] += 1
                self.rebalance(group, st["gen"], st["members"], GroupState.STABLE,
                               f"Adding new member {new}", st["topic"])
            elif roll < 0.55:
                self.request("Heartbeat", member, group, st["gen"], conn=conn, client_id=cid)
                if st["fast"]:
                    for _ in range(3):
                        self.now += 2
                        self.request("Heartbeat", member, group, st["gen"], conn=conn,
                                     client_id=cid)
            elif roll < 0.85:
                i = st["members"].index(member)
                mine = [(st["topic"], p) for p in range(PARTITIONS)
                        if p % len(st["members"]) == i]
                self.request("Fetch", None, None, None, conn=conn + 100, client_id=cid,
                             partitions=tuple(mine))
            else:
                i = st["members"].index(member)
                p = rng.choice([p for p in range(PARTITIONS) if p % len(st["members"]) == i])
                key = (st["topic"], p)
                offset = st["offsets"].get(key, 0) + rng.randint(1, 50)
                if rng.random() < 0.002:
                    offset = max(0, offset - 100)  # backwards
                stale = rng.random() < 0.003
                error = 22 if stale else 0
                self.request("OffsetCommit", member, group, st["gen"] - (1 if stale else 0),
                             conn=conn, client_id=cid,
                             partition_errors=((key[0], p, error),) if error else ())
                if not error:
                    st["offsets"][key] = offset
                    self.emit(ce.OffsetsCommitted(at_ms=self.now, group_id=group,
                                                  member_id=member, generation_id=st["gen"],
                                                  offsets=((key[0], p, offset),)))
        return self.lines


def generate(root: Path, events: int, seed: int = 7) -> int:
    """Write about ``events`` events in runs of RUN_EVENTS; returns the number written."""
    rng = random.Random(seed)
    written = 0
    start = 1_795_000_000_000
    i = 0
    while written < events:
        run_id = f"bench-{seed}-{i:05d}"
        run = _Run(rng, run_id, start + i * 60_000)
        lines = run.build(min(RUN_EVENTS, events - written))
        day = "2026-11-18" if i % 2 else "2026-11-19"
        path = root / f"date={day}" / f"run={run_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines))
        written += len(lines)
        i += 1
    return written
