"""Drive one group through both protocols in the pure coordinator, with explicit time.

Classic subscriptions and assignments are built and read with kafka-python's ConsumerProtocol
structs (an encoder independent of ours) where the version is 0; v1 subscriptions (owned
partitions, cooperative clients) with ours.
"""

from __future__ import annotations

import itertools

from kafka.protocol.old.consumer_protocol import (ConsumerProtocolMemberAssignment_v0,
                                                  ConsumerProtocolMemberMetadata_v0)

from kafka_emu.coordinator import (CommitOffset, Coordinator, CoordinatorConfig, Heartbeat,
                                   JoinGroup, LeaveGroup, LeaveMember, OffsetCommit, OffsetFetch,
                                   SyncGroup)
from kafka_emu.coordinator.consumer import ConsumerGroupDescribe, ConsumerGroupHeartbeat
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol.messages.consumer_protocol import (ConsumerProtocolSubscription,
                                                           TopicPartition, encode_subscription)

E = ErrorCode


def sub_v0(*topics: str) -> bytes:
    return ConsumerProtocolMemberMetadata_v0(0, list(topics), b"").encode()


def sub_v1(topics, owned: dict[str, set[int]]) -> bytes:
    return encode_subscription(ConsumerProtocolSubscription(
        topics=list(topics), user_data=None,
        owned_partitions=[TopicPartition(topic=t, partitions=sorted(ps))
                          for t, ps in sorted(owned.items()) if ps]), 1)


def assignment_v0(assigned: dict[str, set[int]]) -> bytes:
    return ConsumerProtocolMemberAssignment_v0(
        0, [(t, sorted(ps)) for t, ps in sorted(assigned.items())], b"").encode()


def read_assignment(data: bytes) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for tp in ConsumerProtocolMemberAssignment_v0.decode(data).partitions():
        out.setdefault(tp.topic, set()).add(tp.partition)
    return out


class Mixed:
    SESSION = 10_000
    REBALANCE = 30_000

    def __init__(self, topics=None, **config):
        config.setdefault("group_initial_rebalance_delay_ms", 0)
        self.events: list = []
        ids = itertools.count(1)
        self.c = Coordinator(CoordinatorConfig(**config), observer=self.events.append,
                             new_member_uuid=lambda: f"m{next(ids)}")
        self.topics = dict(topics or {"t": 6})
        self.now = 1000
        self._rid = itertools.count(1)

    def run(self, cmd) -> dict:
        return {r.request_id: r.result for r in self.c.handle(cmd, self.now)}

    def one(self, cmd):
        out = self.run(cmd)
        assert cmd.request_id in out, out
        return out[cmd.request_id]

    def advance(self, ms: int) -> dict:
        self.now += ms
        return {r.request_id: r.result for r in self.c.expire(self.now)}

    def rid(self) -> str:
        return f"r{next(self._rid)}"

    # ------------------------------------------------------------------ classic members
    def join_cmd(self, member_id="", *, metadata=None, instance=None, v4=False, name="range",
                 protocol_type="consumer", group="g"):
        return JoinGroup(
            request_id=self.rid(), group_id=group, member_id=member_id, group_instance_id=instance,
            session_timeout_ms=self.SESSION, rebalance_timeout_ms=self.REBALANCE,
            protocol_type=protocol_type, protocols=((name, metadata or sub_v0("t")),),
            client_id="classic", client_host="/h", require_known_member_id=v4, topics=self.topics)

    def join(self, member_id="", **kw):
        return self.one(self.join_cmd(member_id, **kw))

    def sync(self, member_id, generation, assignments=(), *, name="range", instance=None,
             group="g"):
        return self.one(SyncGroup(
            request_id=self.rid(), group_id=group, generation_id=generation, member_id=member_id,
            group_instance_id=instance, protocol_type="consumer", protocol_name=name,
            assignments=tuple(assignments)))

    def heartbeat(self, member_id, generation, *, instance=None, group="g"):
        return self.one(Heartbeat(request_id=self.rid(), group_id=group, generation_id=generation,
                                  member_id=member_id, group_instance_id=instance)).error

    def leave(self, *members, group="g"):
        return self.one(LeaveGroup(request_id=self.rid(), group_id=group, members=tuple(
            LeaveMember(member_id=m, group_instance_id=None) if isinstance(m, str)
            else LeaveMember(member_id=m[0], group_instance_id=m[1]) for m in members)))

    def classic_group(self, members=("c1", "c2"), split=None):
        """A Stable classic group of ``members`` with the leader's assignment ``split``
        (member -> {topic: partitions}); returns the generation."""
        gid_members = []
        first = self.run(self.join_cmd())  # parked until the others join (delay 0: at once)
        gid_members.extend(r.member_id for r in first.values())
        for _ in members[1:]:
            out = self.run(self.join_cmd())
            gid_members.extend(r.member_id for r in out.values() if r.member_id not in gid_members)
        group = self.c.group("g")
        if len(group.members) < len(members) or group.state.value != "CompletingRebalance":
            self.advance(0)  # the initial delay (0) completes the join phase
        group = self.c.group("g")
        ids = list(group.members)
        assert len(ids) == len(members), ids
        generation = group.generation
        split = split or {m: {"t": set(range(i * 6 // len(ids), (i + 1) * 6 // len(ids)))}
                          for i, m in enumerate(ids)}
        leader = group.leader_id
        self.sync(leader, generation, [(m, assignment_v0(split[m])) for m in ids])
        for m in ids:
            if m != leader:
                self.sync(m, generation)
        assert self.c.group("g").state.value == "Stable"
        return ids, generation

    # ------------------------------------------------------------------ consumer members
    def hb(self, member_id, epoch, *, owned=(), names=("t",), group="g", **kw):
        if epoch == 0:
            kw.setdefault("rebalance_timeout_ms", self.REBALANCE)
        if isinstance(owned, dict):
            owned = tuple((t, tuple(sorted(ps))) for t, ps in owned.items())
        return self.one(ConsumerGroupHeartbeat(
            request_id=self.rid(), group_id=group, member_id=member_id, member_epoch=epoch,
            owned=owned, subscribed_topic_names=names if epoch == 0 else None,
            topics=self.topics, **kw))

    # ------------------------------------------------------------------ offsets and looks
    def commit(self, member_id, generation, offsets, *, v9=True, group="g"):
        return self.one(OffsetCommit(
            request_id=self.rid(), group_id=group, generation_id=generation, member_id=member_id,
            group_instance_id=None, supports_member_epochs=v9,
            offsets=tuple(CommitOffset(topic=t, partition=p, offset=o) for (t, p), o in offsets.items())))

    def fetch(self, group="g"):
        result = self.one(OffsetFetch(request_id=self.rid(), group_id=group, topics=None))
        return {(p.topic, p.partition): p.offset for p in result.partitions}

    def describe(self, group="g"):
        return self.one(ConsumerGroupDescribe(request_id=self.rid(), group_ids=(group,))).groups[0]

    def cgroup(self, group="g"):
        return self.c._core.consumer_groups.get(group)


def parts(assignment) -> dict[str, set[int]]:
    return {t: set(ps) for t, ps in (assignment or ())}
