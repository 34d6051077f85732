"""Hand-built traces with known answers: real event objects written through the trace schema
(so the report reads exactly what the writer writes), a run per situation."""

from __future__ import annotations

import json
from pathlib import Path

from kafka_emu.broker import events as se
from kafka_emu.coordinator import events as ce
from kafka_emu.coordinator.state import GroupState
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol.messages import consumer_protocol as cp
from kafka_emu.trace.schema import SCHEMA_VERSION, to_json_line

T0 = 1_795_000_000_000  # 2026-11-18 (any fixed epoch ms)

REQUEST_DEFAULTS = dict(connection_id=1, peer="127.0.0.1:50000", api_key=0, version=4,
                        correlation_id=0, client_id="c1", client_software_name="kafka-python",
                        client_software_version="2.0", group_id="g", member_id="m1",
                        group_instance_id=None, generation_id=1, latency_ms=1.0, error_code=0)

API_KEYS = {"Heartbeat": 12, "OffsetCommit": 8, "JoinGroup": 11, "SyncGroup": 14, "Fetch": 1}


def subscription(*topics: str) -> bytes:
    return cp.encode_subscription(cp.ConsumerProtocolSubscription(topics=list(topics)), 0)


def assignment(topic: str, *partitions: int) -> bytes:
    return cp.encode_assignment(cp.ConsumerProtocolAssignment(
        assigned_partitions=[cp.TopicPartition(topic=topic, partitions=list(partitions))]), 0)


class Run:
    def __init__(self, run_id: str, *, start_ms: int = T0, labels: dict | None = None) -> None:
        self.run_id = run_id
        self.start_ms = start_ms
        self.lines = [json.dumps({
            "kind": "run_start", "run": run_id, "seq": 0, "at_ms": start_ms,
            "schema_version": SCHEMA_VERSION, "emu_version": "0.1.0", "config": {},
            "labels": labels or {}, "host": "127.0.0.1", "port": 9092,
            "broker_api_versions": {"Heartbeat": 4, "JoinGroup": 9, "OffsetCommit": 9,
                                    "Fetch": 17, "SyncGroup": 5}}) + "\n"]

    def at(self, offset_ms: int) -> int:
        return self.start_ms + offset_ms

    def event(self, event) -> None:
        self.lines.append(to_json_line(event, self.run_id, len(self.lines)))

    def raw(self, record: dict) -> None:
        self.lines.append(json.dumps(record | {"run": self.run_id, "seq": len(self.lines)}) + "\n")

    def request(self, t: int, api: str, **kw) -> None:
        fields = REQUEST_DEFAULTS | {"api": api, "api_key": API_KEYS.get(api, 0),
                                     "correlation_id": len(self.lines)} | kw
        self.event(se.RequestHandled(at_ms=self.at(t), **fields))

    def state(self, t: int, old: GroupState, new: GroupState, group: str = "g") -> None:
        self.event(ce.StateChanged(at_ms=self.at(t), group_id=group, old=old, new=new))

    def rebalance(self, t_trigger: int, t_gen: int, t_stable: int, *, reason: str,
                  generation: int, members: tuple[str, ...], previous: GroupState,
                  assignments: dict[str, bytes], topics: dict[str, int], group: str = "g",
                  subscribed: tuple[str, ...] = ("t",)) -> None:
        """A whole rebalance as the coordinator emits it."""
        self.event(ce.RebalanceTriggered(at_ms=self.at(t_trigger), group_id=group,
                                         reason=reason))
        self.state(t_trigger, previous, GroupState.PREPARING_REBALANCE, group)
        self.event(ce.GenerationChanged(at_ms=self.at(t_gen), group_id=group,
                                        generation=generation, protocol_name="range",
                                        leader=members[0], members=members))
        for m in members:
            self.event(ce.MemberSubscribed(
                at_ms=self.at(t_gen), group_id=group, generation=generation, member_id=m,
                group_instance_id=None, protocol_type="consumer", protocol_name="range",
                metadata=subscription(*subscribed)))
        self.state(t_gen, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE, group)
        self.raw({"kind": "topics_known", "at_ms": self.at(t_stable), "topic_partitions": [
            {"topic": name, "count": n} for name, n in topics.items()]})
        self.event(ce.AssignmentsDistributed(
            at_ms=self.at(t_stable), group_id=group, generation=generation,
            protocol_type="consumer", protocol_name="range", leader=members[0],
            assignments=tuple(assignments.items())))
        self.state(t_stable, GroupState.COMPLETING_REBALANCE, GroupState.STABLE, group)

    def write(self, root: Path) -> Path:
        path = root / "date=2026-11-18" / f"run={self.run_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(self.lines))
        return path


def two_member_group(run: Run, *, a2: bytes | None = None, b2: bytes | None = None) -> None:
    """m1 (client id c1) and m2 (c2) join group g at t=1 s, generation 1 at 4 s, Stable at
    4.2 s (duration 3200 ms); topic t has 4 partitions."""
    run.request(900, "JoinGroup", member_id="m1", generation_id=-1, session_timeout_ms=10000,
                rebalance_timeout_ms=30000)
    run.request(950, "JoinGroup", member_id="m2", client_id="c2", connection_id=2,
                generation_id=-1, session_timeout_ms=10000, rebalance_timeout_ms=30000)
    run.event(ce.MemberAdded(at_ms=run.at(1000), group_id="g", member_id="m1",
                             group_instance_id=None, client_id="c1"))
    run.event(ce.MemberAdded(at_ms=run.at(1000), group_id="g", member_id="m2",
                             group_instance_id=None, client_id="c2"))
    run.rebalance(1000, 4000, 4200, reason="Adding new member m1", generation=1,
                  members=("m1", "m2"), previous=GroupState.EMPTY, topics={"t": 4},
                  assignments={"m1": a2 or assignment("t", 0, 1), "m2": b2 or assignment("t", 2, 3)})


def build(root: Path) -> dict[str, Path]:
    """Every fixture run under root; returns run id -> file."""
    runs: dict[str, Run] = {}

    # clean: a group of two, heartbeats every 1 s (session 10 s), own-partition fetches,
    # increasing commits, then m2 leaves: rebalance 2 (150 ms), no violations at all
    clean = runs["clean"] = Run("clean", labels={"client": "kafka-python", "suite": "a"})
    two_member_group(clean)
    for i in range(12):
        t = 5000 + i * 1000
        clean.request(t, "Heartbeat", member_id="m1")
        clean.request(t + 10, "Heartbeat", member_id="m2", client_id="c2", connection_id=2)
        clean.request(t + 20, "Fetch", member_id=None, group_id=None, generation_id=None,
                      connection_id=3, partitions=(("t", 0), ("t", 1)))
        clean.request(t + 30, "Fetch", member_id=None, group_id=None, generation_id=None,
                      client_id="c2", connection_id=4, partitions=(("t", 2), ("t", 3)))
    for offset in (5, 10, 15):
        clean.request(6000 + offset, "OffsetCommit", member_id="m1")
        clean.event(ce.OffsetsCommitted(at_ms=clean.at(6000 + offset), group_id="g",
                                        member_id="m1", generation_id=1,
                                        offsets=(("t", 0, offset),)))
    clean.request(19000, "Heartbeat", member_id="m1", error_code=ErrorCode.REBALANCE_IN_PROGRESS)
    clean.event(ce.MemberRemoved(at_ms=clean.at(19990), group_id="g", member_id="m2",
                                 group_instance_id=None, reason=ce.RemovalReason.LEFT))
    clean.rebalance(20000, 20100, 20150, reason="removing member m2 on LeaveGroup",
                    generation=2, members=("m1",), previous=GroupState.STABLE,
                    topics={"t": 4}, assignments={"m1": assignment("t", 0, 1, 2, 3)})
    clean.request(20050, "JoinGroup", member_id="m1", generation_id=1, session_timeout_ms=10000,
                  rebalance_timeout_ms=30000)

    # stale: told REBALANCE_IN_PROGRESS, then commits generation 1 without rejoining
    stale = runs["stale"] = Run("stale", labels={"client": "aiokafka", "suite": "b"})
    stale.request(100, "Heartbeat", client_software_name=None, client_software_version=None,
                  client_id="aiokafka-0.12.0", error_code=ErrorCode.REBALANCE_IN_PROGRESS)
    stale.request(5000, "OffsetCommit", client_software_name=None,
                  client_software_version=None, client_id="aiokafka-0.12.0",
                  error_code=None, partition_errors=(("t", 0, ErrorCode.ILLEGAL_GENERATION),))

    # fenced: a static member answered FENCED_INSTANCE_ID keeps committing
    fenced = runs["fenced"] = Run("fenced")
    fenced.request(100, "Heartbeat", group_instance_id="i1",
                   error_code=ErrorCode.FENCED_INSTANCE_ID)
    fenced.request(200, "OffsetCommit", group_instance_id="i1", error_code=None)

    # norejoin: told to rejoin, removed by the rebalance timeout
    norejoin = runs["norejoin"] = Run("norejoin")
    norejoin.request(100, "Heartbeat", error_code=ErrorCode.REBALANCE_IN_PROGRESS)
    norejoin.event(ce.MemberRemoved(at_ms=norejoin.at(30100), group_id="g", member_id="m1",
                                    group_instance_id=None,
                                    reason=ce.RemovalReason.REBALANCE_TIMEOUT))

    # overlap: t-1 given to both members
    overlap = runs["overlap"] = Run("overlap")
    two_member_group(overlap, a2=assignment("t", 0, 1), b2=assignment("t", 1, 2, 3))

    # gap: t-2 and t-3 given to nobody
    gap = runs["gap"] = Run("gap")
    two_member_group(gap, a2=assignment("t", 0), b2=assignment("t", 1))

    # double: m1 and m2 both fetch t-0 in generation 1
    double = runs["double"] = Run("double")
    two_member_group(double)
    double.request(5000, "Fetch", member_id=None, group_id=None, generation_id=None,
                   connection_id=3, partitions=(("t", 0), ("t", 1)))
    double.request(5100, "Fetch", member_id=None, group_id=None, generation_id=None,
                   client_id="c2", connection_id=4, partitions=(("t", 0), ("t", 2)))

    # backwards: a commit moves t-0 from 10 back to 5
    back = runs["backwards"] = Run("backwards")
    for t, offset in ((100, 10), (200, 5)):
        back.event(ce.OffsetsCommitted(at_ms=back.at(t), group_id="g", member_id="m1",
                                       generation_id=1, offsets=(("t", 0, offset),)))

    # fasthb: m1 sends 20 heartbeats 10 ms apart, for a 10 s session timeout
    fast = runs["fasthb"] = Run("fasthb")
    fast.request(0, "JoinGroup", generation_id=-1, session_timeout_ms=10000,
                 rebalance_timeout_ms=30000)
    for i in range(20):
        fast.request(100 + 10 * i, "Heartbeat")
    # and m2: 1,202 heartbeats, 600 intervals of 100 ms then 601 of 101 ms. The exact median
    # is 101 ms; an approximate percentile (accuracy 1000) would say 100
    fast.request(0, "JoinGroup", member_id="m2", generation_id=-1, session_timeout_ms=10000,
                 rebalance_timeout_ms=30000)
    t = 100
    for i in range(1202):
        fast.request(t, "Heartbeat", member_id="m2")
        t += 100 if i < 600 else 101

    # verdicts: two scenarios for one client version, one failed
    verdicts = runs["verdicts"] = Run("verdicts")
    for scenario, verdict, reason in (("static-rejoin", "pass", ""),
                                      ("fenced-stops", "fail", "kept committing")):
        verdicts.raw({"kind": "scenario_verdict", "at_ms": verdicts.at(10),
                      "scenario": scenario, "client": "aiokafka", "client_version": "0.12.0",
                      "verdict": verdict, "reason": reason})

    # a crashed run: a torn last line must be skipped, not fail the job
    crashed = runs["crashed"] = Run("crashed", start_ms=T0 + 86_400_000)
    crashed.request(100, "Heartbeat", member_id="m9")
    crashed.lines.append('{"kind":"request_handled","run":"crashed","seq":2,"at_')

    return {run_id: run.write(root) for run_id, run in runs.items()}
