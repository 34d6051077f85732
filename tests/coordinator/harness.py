"""A thin, deterministic driver for the pure coordinator used by the scenario tests.

Member ids come from a counter (``new_member_uuid``), request ids are ``"r1", "r2", ...``, and
every event is recorded. Each call returns a dict ``request_id -> result`` of the replies produced
by that call, so a test can assert both "my request was parked" (absent) and "these earlier
requests were answered".
"""

from __future__ import annotations

import itertools
import struct

from kafka_emu.coordinator import (
    CommitOffset,
    Coordinator,
    CoordinatorConfig,
    DeleteGroups,
    DescribeGroups,
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    LeaveMember,
    ListGroups,
    OffsetCommit,
    OffsetDelete,
    OffsetFetch,
    SyncGroup,
)
from kafka_emu.errors import ErrorCode

E = ErrorCode
SESSION = 10_000
REBALANCE = 30_000


def subscription(*topics: str, version: int = 0) -> bytes:
    """A ConsumerProtocolSubscription (section 7) naming ``topics``, null user data."""
    out = struct.pack(">hi", version, len(topics))
    for t in topics:
        raw = t.encode()
        out += struct.pack(">h", len(raw)) + raw
    return out + struct.pack(">i", -1)


DEFAULT_PROTOCOLS = (("range", subscription("t")),)


class Harness:
    def __init__(self, config: CoordinatorConfig | None = None, **config_kw) -> None:
        if config is None:
            # The scenarios spell out their own initial delay (the 3.6 tests set one); the rest
            # want a first join that completes at once, kafka-emu's default before it was 100.
            config_kw.setdefault("group_initial_rebalance_delay_ms", 0)
            config = CoordinatorConfig(**config_kw)
        self.events: list = []
        counter = itertools.count(1)
        self.coord = Coordinator(config, observer=self.events.append, new_member_uuid=lambda: f"u{next(counter)}")
        self._rid = itertools.count(1)
        self.now = 0

    # ------------------------------------------------------------------ plumbing
    def rid(self) -> str:
        return f"r{next(self._rid)}"

    def _run(self, cmd, now: int | None) -> dict:
        if now is not None:
            self.now = now
        replies = self.coord.handle(cmd, self.now)
        out = {}
        for reply in replies:
            assert reply.request_id not in out, "answered twice in one call"
            out[reply.request_id] = reply.result
        return out

    def expire(self, now: int) -> dict:
        self.now = now
        return {r.request_id: r.result for r in self.coord.expire(now)}

    def tick(self) -> dict:
        """Fire whatever is due exactly now (the broker's "next timer tick")."""
        return self.expire(self.now)

    def group(self, group_id: str = "g"):
        return self.coord.group(group_id)

    def state(self, group_id: str = "g") -> str:
        return self.coord.describe(group_id).state

    def events_of(self, cls) -> list:
        return [e for e in self.events if isinstance(e, cls)]

    # ------------------------------------------------------------------ commands
    def join(
        self,
        member_id: str = "",
        *,
        group_id: str = "g",
        instance: str | None = None,
        protocols=DEFAULT_PROTOCOLS,
        protocol_type: str = "consumer",
        session: int = SESSION,
        rebalance: int = REBALANCE,
        client_id: str = "c",
        client_host: str = "/127.0.0.1",
        v4: bool = True,
        v9: bool = True,
        now: int | None = None,
        rid: str | None = None,
    ) -> tuple[str, dict]:
        rid = rid or self.rid()
        cmd = JoinGroup(
            request_id=rid,
            group_id=group_id,
            member_id=member_id,
            group_instance_id=instance,
            session_timeout_ms=session,
            rebalance_timeout_ms=rebalance,
            protocol_type=protocol_type,
            protocols=tuple(protocols),
            client_id=client_id,
            client_host=client_host,
            require_known_member_id=v4,
            supports_skip_assignment=v9,
        )
        return rid, self._run(cmd, now)

    def sync(
        self,
        member_id: str,
        generation: int,
        assignments=(),
        *,
        group_id: str = "g",
        instance: str | None = None,
        protocol_type: str | None = "consumer",
        protocol_name: str | None = "range",
        now: int | None = None,
    ) -> tuple[str, dict]:
        rid = self.rid()
        cmd = SyncGroup(
            request_id=rid,
            group_id=group_id,
            generation_id=generation,
            member_id=member_id,
            group_instance_id=instance,
            protocol_type=protocol_type,
            protocol_name=protocol_name,
            assignments=tuple(assignments),
        )
        return rid, self._run(cmd, now)

    def heartbeat(self, member_id: str, generation: int, *, group_id="g", instance=None, now=None):
        rid = self.rid()
        cmd = Heartbeat(
            request_id=rid, group_id=group_id, generation_id=generation, member_id=member_id, group_instance_id=instance
        )
        return self._run(cmd, now)[rid]

    def leave(self, *members, group_id: str = "g", now: int | None = None) -> tuple[str, dict]:
        """members: member ids, or (member_id, instance_id) pairs."""
        rid = self.rid()
        leaving = tuple(
            LeaveMember(member_id=m, group_instance_id=None) if isinstance(m, str) else LeaveMember(member_id=m[0], group_instance_id=m[1])
            for m in members
        )
        return rid, self._run(LeaveGroup(request_id=rid, group_id=group_id, members=leaving), now)

    def commit(
        self,
        offsets,
        *,
        member_id: str = "",
        generation: int = -1,
        group_id: str = "g",
        instance: str | None = None,
        retention: int = -1,
        v9: bool = True,
        now: int | None = None,
    ):
        """offsets: (topic, partition, offset) or (topic, partition, offset, metadata) tuples."""
        rid = self.rid()
        items = tuple(
            CommitOffset(topic=o[0], partition=o[1], offset=o[2], metadata=o[3] if len(o) > 3 else "")
            for o in offsets
        )
        cmd = OffsetCommit(
            request_id=rid,
            group_id=group_id,
            generation_id=generation,
            member_id=member_id,
            group_instance_id=instance,
            retention_time_ms=retention,
            offsets=items,
            missing_group_is_not_found=v9,
        )
        return self._run(cmd, now)[rid]

    def fetch(self, topics=None, *, group_id: str = "g", now: int | None = None):
        rid = self.rid()
        return self._run(OffsetFetch(request_id=rid, group_id=group_id, topics=topics), now)[rid]

    def list_groups(self, states=(), types=(), now: int | None = None):
        rid = self.rid()
        return self._run(ListGroups(request_id=rid, states_filter=tuple(states), types_filter=tuple(types)), now)[rid]

    def describe(self, *group_ids, v6: bool = True, now: int | None = None):
        rid = self.rid()
        return self._run(DescribeGroups(request_id=rid, group_ids=group_ids, not_found_is_error=v6), now)[rid]

    def delete_groups(self, *group_ids, now: int | None = None):
        rid = self.rid()
        return self._run(DeleteGroups(request_id=rid, group_ids=group_ids), now)[rid]

    def delete_offsets(self, partitions, *, group_id: str = "g", now: int | None = None):
        rid = self.rid()
        return self._run(OffsetDelete(request_id=rid, group_id=group_id, partitions=tuple(partitions)), now)[rid]

    # --------------------------------------------------------------- composites
    def new_member(self, *, group_id: str = "g", **kw) -> tuple[str, str, dict]:
        """v4 two-step join of a dynamic member; returns (member_id, parked join rid, replies)."""
        _, replies = self.join(group_id=group_id, **kw)
        (result,) = replies.values()
        assert result.error == E.MEMBER_ID_REQUIRED, result
        rid, replies = self.join(result.member_id, group_id=group_id, **kw)
        return result.member_id, rid, replies

    def stable_group(self, n: int = 1, *, group_id: str = "g", static: bool = False, **kw) -> list[str]:
        """Bring a group with ``n`` members to Stable (generation 1 if new). The first member is
        the leader; member i gets assignment b"a<i>"."""
        rids = {}
        for i in range(n):
            if static:
                rid, _ = self.join(group_id=group_id, instance=f"i{i}", **kw)
                rids[rid] = None
            else:
                _, rid, _ = self.new_member(group_id=group_id, **kw)
                rids[rid] = None
        answered = self.tick()
        results = [answered[r] for r in rids]
        assert all(r.error == E.NONE for r in results), results
        members = [r.member_id for r in results]
        gen = results[0].generation_id
        leader = results[0].leader
        names = {"protocol_type": results[0].protocol_type, "protocol_name": results[0].protocol_name}
        for m in members:
            if m != leader:
                self.sync(m, gen, group_id=group_id, **names)
        self.sync(leader, gen, [(m, f"a{i}".encode()) for i, m in enumerate(members)], group_id=group_id, **names)
        assert self.state(group_id) == "Stable"
        return members
