"""Group and Member entities (Kafka's ClassicGroup / ClassicGroupMember).

A ``Group`` owns its members, the static instance-id map, the pending (MEMBER_ID_REQUIRED) ids,
per-protocol support counts and the pending-sync set, and keeps the counters that make the hot
checks O(1): ``has_all_members_joined`` compares two integers, ``supports_protocols`` looks up a
count per protocol name. Nothing here touches timers or replies; the rebalance engine does that.

Parked requests are represented by the request id stored on the member (``join_request`` /
``sync_request``); "awaiting join" means ``join_request is not None``.

Deterministic stand-ins for Kafka's hash-map order (documented in the package docstring):
- members iterate in insertion order; a static replacement re-inserts the member at the end;
- when the leader is removed, the earliest-added remaining member becomes leader;
- at join completion a leader that did not rejoin is replaced by the earliest-added member with
  a parked JoinGroup;
- protocol votes are counted as Kafka counts them, and ties break in the iteration order of
  Kafka's vote map (``java_order``: it depends only on the names; two tied names in one hash
  bucket go by which got its first vote earlier in member order).
"""

from __future__ import annotations

import functools
import struct
from typing import TYPE_CHECKING, Hashable, Iterable

import attrs

from kafka_emu.bounded import shared_number
from kafka_emu.errors import ErrorCode

from .events import LeaderChanged, StateChanged
from .java_order import hashmap_order
from .results import DescribedGroup, JoinGroupMember
from .state import VALID_PREVIOUS, GroupState, IllegalStateTransition

if TYPE_CHECKING:
    from .core import Core

CONSUMER_PROTOCOL_TYPE = "consumer"


@attrs.define(eq=False)
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    assignment: bytes = b""
    join_request: Hashable | None = None
    sync_request: Hashable | None = None
    # Added in the current rebalance and not yet through a join completion (3.7): such a member
    # can expire even while its JoinGroup is parked.
    is_new: bool = False
    # Set by the operator command IgnoreHeartbeats: heartbeats (and commits, which double as
    # heartbeats) are answered but no longer reset the session, so the member expires naturally.
    heartbeats_ignored: bool = False
    # protocol name -> metadata, for O(1) lookups; kept in step with ``protocols``.
    metadata_by_name: dict[str, bytes] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        # Members of one group mostly send the same protocols and come from the same client
        # software and host: equal values are shared, not kept once per member (memory).
        self.protocols, self.metadata_by_name = _shared_protocols(self.protocols)
        self.client_id = _shared_text(self.client_id)
        self.client_host = _shared_text(self.client_host)
        self.protocol_type = _shared_text(self.protocol_type)
        self.rebalance_timeout_ms = shared_number(self.rebalance_timeout_ms)
        self.session_timeout_ms = shared_number(self.session_timeout_ms)

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def awaiting_join(self) -> bool:
        return self.join_request is not None

    def set_protocols(self, protocols: tuple[tuple[str, bytes], ...]) -> None:
        self.protocols, self.metadata_by_name = _shared_protocols(protocols)

    def metadata(self, protocol_name: str | None) -> bytes:
        if protocol_name is None:
            return b""
        return self.metadata_by_name.get(protocol_name, b"")

    def matches(self, protocols: tuple[tuple[str, bytes], ...]) -> bool:
        """Same ordered (name, metadata) list, byte for byte (3.10 "same protocols")."""
        return tuple(protocols) == self.protocols

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise AssertionError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def has_satisfied_heartbeat(self) -> bool:
        # Members parked in a join or sync count as alive, except new ones (3.7).
        if self.is_new:
            return False
        return self.join_request is not None or self.sync_request is not None


# Sharing equal values between members: a bounded cache hands out the first object seen for an
# equal value, so members with equal protocols hold one tuple (its names and metadata bytes)
# and one name -> metadata dict, which nothing mutates (``set_protocols`` replaces both).
# Equal values behave the same wherever they came from, so sharing changes no behaviour. The
# bounds (entries, and metadata size: larger protocols are kept per member as before) cap what
# the cache can hold on to after its members are gone: 256 x 16 KB at the very most.
_SHARED_ENTRIES = 256
_SHARED_MAX_BYTES = 16384


def _shared_protocols(protocols: tuple[tuple[str, bytes], ...]
                      ) -> tuple[tuple[tuple[str, bytes], ...], dict[str, bytes]]:
    """(protocols, name -> metadata), shared with earlier members that sent equal ones."""
    protocols = tuple(protocols)
    if sum(len(metadata) for _, metadata in protocols) > _SHARED_MAX_BYTES:
        return protocols, _first_metadata(protocols)
    return _shared(protocols)


@functools.lru_cache(maxsize=_SHARED_ENTRIES)
def _shared(protocols: tuple[tuple[str, bytes], ...]
            ) -> tuple[tuple[tuple[str, bytes], ...], dict[str, bytes]]:
    return protocols, _first_metadata(protocols)


@functools.lru_cache(maxsize=_SHARED_ENTRIES)
def _shared_text(text: str) -> str:
    return text


def _first_metadata(protocols: tuple[tuple[str, bytes], ...]) -> dict[str, bytes]:
    # Kafka keys a member's protocols by name; a duplicated name keeps its first metadata.
    out: dict[str, bytes] = {}
    for name, metadata in protocols:
        out.setdefault(name, metadata)
    return out


@attrs.frozen
class StoredGroup:
    """A classic group as written to ``__consumer_offsets`` (GroupMetadataValue), which a reload
    adopts: each member as a tuple of what is written of it -- (member_id, group_instance_id,
    client_id, client_host, rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols,
    assignment) -- a third smaller than a Member copy (thousands of members are stored at once
    when a large group becomes Stable)."""

    generation: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str | None
    members: tuple[tuple, ...]


class Group:
    """One classic group. Mutated only by the coordinator modules; ``state`` changes only via
    ``transition_to``."""

    def __init__(self, group_id: str, sink: "Core") -> None:
        self.group_id = group_id
        self._sink = sink
        self.state = GroupState.EMPTY
        # Kafka starts previousState at Dead; only "was it Empty" matters (initial rebalance).
        self.previous_state = GroupState.DEAD
        self.state_timestamp_ms = sink.now
        self.generation = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}
        self.static_members: dict[str, str] = {}
        # pending member id -> the same id: the string handed out, which its member then keeps
        self.pending_members: dict[str, str] = {}
        # member ids whose SyncGroup is awaited, as keys (a dict: a third of a set's size for
        # thousands of members)
        self.pending_sync: dict[str, None] = {}
        self.num_awaiting_join = 0
        self.supported_protocols: dict[str, int] = {}
        self.subscribed_topics: frozenset[str] | None = None
        self.new_member_added = False
        # What Kafka last wrote to __consumer_offsets for this group (a GroupMetadata record):
        # written on entering Stable or Empty and on a static member's replacement in Stable.
        # A coordinator move reloads the group from it (Coordinator.load_group).
        self.stored: StoredGroup | None = None
        # DescribeGroups' last description and what it was made from (admin.describe_group).
        self.described: tuple[tuple, DescribedGroup] | None = None

    # ----------------------------------------------------------------- state
    def transition_to(self, new: GroupState) -> None:
        """The one door for state changes: checks the allowed-previous table (3.1)."""
        old = self.state
        if old not in VALID_PREVIOUS[new]:
            raise IllegalStateTransition(self.group_id, old, new)
        self.previous_state = old
        self.state = new
        if new is GroupState.STABLE or new is GroupState.EMPTY:
            self.store()
        sink = self._sink
        self.state_timestamp_ms = sink.now
        if sink.observing:
            sink.emit(StateChanged(at_ms=sink.now, group_id=self.group_id, old=old, new=new))

    def store(self) -> None:
        """Record the group as Kafka's storeGroup writes it (members with their assignments)."""
        self.stored = StoredGroup(
            generation=self.generation, protocol_type=self.protocol_type,
            protocol_name=self.protocol_name, leader_id=self.leader_id,
            members=tuple((
                m.member_id, m.group_instance_id, m.client_id, m.client_host,
                m.rebalance_timeout_ms, m.session_timeout_ms, m.protocol_type, m.protocols,
                m.assignment) for m in self.members.values()))

    def load(self, stored: StoredGroup) -> None:
        """Adopt a stored group in a fresh Empty group: loading builds the group directly in
        its stored state (GroupMetadata.loadGroup), so this is not a transition."""
        for (member_id, instance_id, client_id, client_host, rebalance_timeout_ms,
             session_timeout_ms, protocol_type, protocols, assignment) in stored.members:
            self.add(Member(member_id=member_id, group_instance_id=instance_id,
                            client_id=client_id, client_host=client_host,
                            rebalance_timeout_ms=rebalance_timeout_ms,
                            session_timeout_ms=session_timeout_ms, protocol_type=protocol_type,
                            protocols=protocols, assignment=assignment), None)
        self.generation = stored.generation
        self.protocol_type = stored.protocol_type
        self.protocol_name = stored.protocol_name
        self._set_leader(stored.leader_id)
        self.subscribed_topics = self.compute_subscribed_topics() if self.members else None
        if self.members:
            old, self.state = self.state, GroupState.STABLE
            self.stored = stored
            sink = self._sink
            if sink.observing:
                sink.emit(StateChanged(at_ms=sink.now, group_id=self.group_id, old=old,
                                       new=GroupState.STABLE))

    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS[GroupState.PREPARING_REBALANCE]

    def _set_leader(self, leader: str | None) -> None:
        if leader != self.leader_id:
            self.leader_id = leader
            sink = self._sink
            if sink.observing:
                sink.emit(LeaderChanged(at_ms=sink.now, group_id=self.group_id, leader=leader))

    # --------------------------------------------------------------- members
    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def add(self, member: Member, join_request: Hashable | None) -> None:
        if member.group_instance_id is not None:
            assert member.group_instance_id not in self.static_members
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            # The first member sets the protocol type, also when re-populating an Empty group.
            self.protocol_type = member.protocol_type
        assert self.protocol_type == member.protocol_type
        if self.leader_id is None:
            self._set_leader(member.member_id)
        self.members[member.member_id] = member
        self._count_protocols(member, +1)
        member.join_request = join_request
        if join_request is not None:
            self.num_awaiting_join += 1
        self.pending_members.pop(member.member_id, None)

    def remove(self, member_id: str) -> Member | None:
        """Remove a member or pending id; re-elect the leader if needed. Returns the member."""
        member = self.members.pop(member_id, None)
        if member is not None:
            self._count_protocols(member, -1)
            if member.join_request is not None:
                self.num_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.leader_id == member_id:
            self._set_leader(next(iter(self.members), None))
        self.pending_members.pop(member_id, None)
        self.pending_sync.pop(member_id, None)
        return member

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> tuple[Member, Member]:
        """Swap a static member's id (3.8). The caller answers the old member's parked requests
        (taken from the returned old member) with FENCED_INSTANCE_ID. The pending-sync set is left
        alone, as in Kafka: an old id still in it makes the sync timer start a rebalance."""
        old = self.members.pop(old_id)
        if old.join_request is not None:
            self.num_awaiting_join -= 1
        new = Member(
            member_id=new_id,
            group_instance_id=old.group_instance_id,
            client_id=old.client_id,
            client_host=old.client_host,
            rebalance_timeout_ms=old.rebalance_timeout_ms,
            session_timeout_ms=old.session_timeout_ms,
            protocol_type=old.protocol_type,
            protocols=old.protocols,
            assignment=old.assignment,
        )
        # Same protocols as before, so the support counts do not change.
        self.members[new_id] = new
        if self.leader_id == old_id:
            self._set_leader(new_id)
        self.static_members[instance_id] = new_id
        return old, new

    def update_member(
        self,
        member: Member,
        protocols: tuple[tuple[str, bytes], ...],
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        join_request: Hashable | None,
    ) -> Hashable | None:
        """Update protocols/timeouts and park ``join_request``. Returns a previously parked join
        request that this one supersedes (Kafka drops it unanswered), else None."""
        self._count_protocols(member, -1)
        member.set_protocols(protocols)
        self._count_protocols(member, +1)
        member.rebalance_timeout_ms = shared_number(rebalance_timeout_ms)
        member.session_timeout_ms = shared_number(session_timeout_ms)
        superseded = member.join_request
        if join_request is not None and superseded is None:
            self.num_awaiting_join += 1
        elif join_request is None and superseded is not None:
            self.num_awaiting_join -= 1
        member.join_request = join_request
        return superseded

    def take_join(self, member: Member) -> Hashable | None:
        """Clear and return the member's parked JoinGroup id (None if it has none)."""
        request = member.join_request
        if request is not None:
            member.join_request = None
            self.num_awaiting_join -= 1
        return request

    def validate_member(self, member_id: str, instance_id: str | None) -> ErrorCode | None:
        """Static/dynamic member check shared by Sync/Heartbeat/Leave/Commit/Join (3.8)."""
        if instance_id is not None:
            existing = self.static_members.get(instance_id)
            if existing is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if existing != member_id:
                return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return None

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join and not self.pending_members

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def maybe_elect_new_joined_leader(self) -> bool:
        """3.3: keep a rejoined leader, else pick the earliest member with a parked join."""
        if self.leader_id is None:
            return False
        leader = self.members[self.leader_id]
        if leader.join_request is not None:
            return True
        for member in self.members.values():
            if member.join_request is not None:
                self._set_leader(member.member_id)
                return True
        return False

    # ------------------------------------------------------------- protocols
    def _count_protocols(self, member: Member, delta: int) -> None:
        counts = self.supported_protocols
        for name in member.metadata_by_name:
            counts[name] = counts.get(name, 0) + delta

    def supports_protocols(self, protocol_type: str, names: Iterable[str]) -> bool:
        """3.4 support check."""
        if self.state is GroupState.EMPTY:
            return protocol_type != "" and any(True for _ in names)
        if self.protocol_type != protocol_type:
            return False
        n = len(self.members)
        counts = self.supported_protocols
        return any(counts.get(name, 0) == n for name in names)

    def select_protocol(self) -> str:
        """Most votes wins; of equal maxima the first in Kafka's vote-map order (3.4)."""
        assert self.members, "cannot select a protocol for an empty group"
        n = len(self.members)
        candidates = {name for name, count in self.supported_protocols.items() if count == n}
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        most = max(votes.values())
        return next(name for name in hashmap_order(votes) if votes[name] == most)

    # ---------------------------------------------------------- generations
    def init_next_generation(self) -> None:
        self.generation += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.EMPTY)
        self.pending_sync.clear()

    def join_members(self) -> tuple[JoinGroupMember, ...]:
        """The member list a leader receives: every member, metadata for the chosen protocol."""
        name = self.protocol_name
        return tuple(
            JoinGroupMember(member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=m.metadata(name))
            for m in self.members.values()
        )

    # ---------------------------------------------------- subscribed topics
    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def compute_subscribed_topics(self) -> frozenset[str] | None:
        """Topics named in members' "consumer" subscriptions (section 7); None when unknown."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return frozenset()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            parsed = parse_subscription_topics(member.metadata(self.protocol_name))
            if parsed is None:
                return None
            topics.update(parsed)
        return frozenset(topics)

    def is_subscribed_to_topic(self, topic: str) -> bool:
        if self.subscribed_topics is not None:
            return topic in self.subscribed_topics
        # Unknown subscriptions: a "consumer" group is assumed subscribed to everything.
        return self.uses_consumer_protocol()


_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def parse_subscription_topics(data: bytes) -> list[str] | None:
    """Parse the version and v0 prefix (Topics, UserData) of a ConsumerProtocolSubscription.

    Kafka reads every version with the v0 schema, which all later versions extend; any parse
    failure makes the subscription unknown (None).
    """
    try:
        (version,) = _I16.unpack_from(data, 0)
        if version < 0:
            return None
        (count,) = _I32.unpack_from(data, 2)
        if count < 0:
            return None
        pos = 6
        topics = []
        for _ in range(count):
            (length,) = _I16.unpack_from(data, pos)
            pos += 2
            if length < 0 or pos + length > len(data):
                return None
            topics.append(data[pos : pos + length].decode("utf-8"))
            pos += length
        (user_len,) = _I32.unpack_from(data, pos)
        pos += 4
        if user_len > 0 and pos + user_len > len(data):
            return None
        return topics
    except (struct.error, UnicodeDecodeError):
        return None
