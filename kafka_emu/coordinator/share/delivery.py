"""Every share-partition and share session of a broker: Kafka's SharePartitionManager, pure.

Theory of operation. Share-partitions are made on the first ShareFetch that names them, keyed
(group id, topic id, partition); their delivery config is the group's effective share config,
looked up at every fetch so an IncrementalAlterConfigs on the group applies to the next
acquisition (``config_for``, given by whoever knows group configs; broker defaults otherwise).
The acquisition locks of all share-partitions form one timer: ``next_deadline()`` is the
earliest lock, ``expire(now_ms)`` releases what fell due. A member leaving the group, closing
its share session or losing its connection gets what it holds released at once (in that
session's share-partitions: Kafka releases a session's partitions, not the member's others).

Several brokers (``emu.brokers``): one state for all, as Kafka's share-group state topic is one;
share sessions are per broker (``sessions_at(node_id)``: a consumer keeps one with each leader
it fetches from, as Kafka's ShareSessionCache is per broker). A partition's leader moving makes
the new leader load the share-partition from that state (``leader_changed``).

Every change comes back as ``(key, DeliveryEvent)`` pairs for the observer seam. Pure: now_ms.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from .partition_state import DeliveryConfig, DeliveryEvent, SharePartition
from .sessions import ShareSessionCache

Key = tuple  # (group_id, topic_id, partition)
Events = list[tuple[Key, DeliveryEvent]]


class ShareDelivery:
    def __init__(self, *, defaults: DeliveryConfig | None = None, max_sessions: int = 2000,
                 config_for: Callable[[str], DeliveryConfig | None] | None = None) -> None:
        self.defaults = defaults or DeliveryConfig()
        self._config_for = config_for
        self.partitions: dict[Key, SharePartition] = {}
        self.max_sessions = max_sessions
        self.sessions = ShareSessionCache(max_sessions)  # one broker's (None: the only one)
        self._node_sessions: dict[int, ShareSessionCache] = {}

    def sessions_at(self, node_id: int | None) -> ShareSessionCache:
        """The share sessions of broker ``node_id`` (None: a one-broker emulator's)."""
        if node_id is None:
            return self.sessions
        cache = self._node_sessions.get(node_id)
        if cache is None:
            cache = self._node_sessions[node_id] = ShareSessionCache(self.max_sessions)
        return cache

    def _all_sessions(self) -> list[ShareSessionCache]:
        return [self.sessions, *self._node_sessions.values()]

    def config_for(self, group_id: str) -> DeliveryConfig:
        found = self._config_for(group_id) if self._config_for is not None else None
        return found or self.defaults

    # -- share-partitions ----------------------------------------------------------------
    def partition(self, group_id: str, topic_id: uuid.UUID, partition: int, *,
                  create: bool = False) -> SharePartition | None:
        key = (group_id, topic_id, partition)
        sp = self.partitions.get(key)
        if sp is None and create:
            sp = self.partitions[key] = SharePartition(self.config_for(group_id))
        elif sp is not None and create:
            sp.config = self.config_for(group_id)  # group configs apply from the next fetch
        return sp

    def start_offset(self, group_id: str, topic_id: uuid.UUID, partition: int) -> int:
        sp = self.partitions.get((group_id, topic_id, partition))
        return sp.start_offset if sp is not None else -1

    def of_group(self, group_id: str) -> dict[Key, SharePartition]:
        return {k: sp for k, sp in self.partitions.items() if k[0] == group_id}

    def alter_start(self, group_id: str, topic_id: uuid.UUID, partition: int,
                    offset: int) -> None:
        """AlterShareGroupOffsets: start over at ``offset`` (the group must be empty)."""
        sp = self.partition(group_id, topic_id, partition, create=True)
        sp.reset_to(offset)

    def delete(self, group_id: str, topic_id: uuid.UUID) -> bool:
        """DeleteShareGroupOffsets: forget the topic's share-partitions of the group."""
        keys = [k for k in self.partitions if k[0] == group_id and k[1] == topic_id]
        for k in keys:
            del self.partitions[k]
        return bool(keys)

    def group_deleted(self, group_id: str) -> None:
        for k in [k for k in self.partitions if k[0] == group_id]:
            del self.partitions[k]
        for cache in self._all_sessions():
            cache.drop_group(group_id)

    # -- releases ------------------------------------------------------------------------
    def member_left(self, group_id: str, member_id: str, now_ms: int = 0) -> Events:
        """The member left or was fenced: its session goes, what it holds is released."""
        for cache in self._all_sessions():
            cache.close(group_id, member_id)
        return self.release_member(group_id, member_id)

    def release_member(self, group_id: str, member_id: str, only=None) -> Events:
        """Release what the member holds (in the share-partitions ``only`` names, (topic id,
        partition) pairs, when given: a closed session's)."""
        out: Events = []
        for key, sp in self.of_group(group_id).items():
            if only is None or (key[1], key[2]) in only:
                out += [(key, e) for e in sp.release_member(member_id)]
        return out

    def closed_connection(self, connection_id: int) -> Events:
        out: Events = []
        for cache in self._all_sessions():
            for session in cache.closed_connection(connection_id):
                out += self.release_member(session.group_id, session.member_id,
                                           only=set(session.partitions))
        return out

    def leader_changed(self, topic_id: uuid.UUID, partition: int) -> Events:
        """The partition's leader moved: every group's share-partition of it is loaded by the
        new leader from the share-group state (SharePartition.maybeInitialize), where no
        acquisition was ever written -- what was ACQUIRED is AVAILABLE again, its delivery
        count back to its last write (SharePartition.acquire does not persist)."""
        out: Events = []
        for key, sp in self.partitions.items():
            if key[1] == topic_id and key[2] == partition:
                out += [(key, e) for e in sp.reload_from_state()]
        return out

    def expire_locks_now(self, group_id: str, member_id: str | None = None) -> Events:
        """Control plane: every lock of the group (of one member) runs out now."""
        out: Events = []
        for key, sp in self.of_group(group_id).items():
            out += [(key, e) for e in sp.expire_locks(member_id)]
        return out

    # -- the lock timer --------------------------------------------------------------------
    def next_deadline(self) -> int | None:
        best = None
        for sp in self.partitions.values():
            d = sp.next_deadline()
            if d is not None and (best is None or d < best):
                best = d
        return best

    def expire(self, now_ms: int) -> Events:
        out: Events = []
        for key, sp in self.partitions.items():
            d = sp.next_deadline()
            if d is not None and d <= now_ms:
                out += [(key, e) for e in sp.expire(now_ms)]
        return out
