"""Every share-partition and share session of a broker: Kafka's SharePartitionManager, pure.

Theory of operation. Share-partitions are made on the first ShareFetch that names them, keyed
(group id, topic id, partition); their delivery config is the group's effective share config,
looked up at every fetch so an IncrementalAlterConfigs on the group applies to the next
acquisition (``config_for``, given by whoever knows group configs; broker defaults otherwise).
The acquisition locks of all share-partitions form one timer: ``next_deadline()`` is the
earliest lock, ``expire(now_ms)`` releases what fell due. A member leaving the group, closing
its share session or losing its connection gets what it holds released at once.

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
        self.sessions = ShareSessionCache(max_sessions)

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
        self.sessions.drop_group(group_id)

    # -- releases ------------------------------------------------------------------------
    def member_left(self, group_id: str, member_id: str, now_ms: int = 0) -> Events:
        """The member left or was fenced: its session goes, what it holds is released."""
        self.sessions.close(group_id, member_id)
        return self.release_member(group_id, member_id)

    def release_member(self, group_id: str, member_id: str) -> Events:
        out: Events = []
        for key, sp in self.of_group(group_id).items():
            out += [(key, e) for e in sp.release_member(member_id)]
        return out

    def closed_connection(self, connection_id: int) -> Events:
        out: Events = []
        for session in self.sessions.closed_connection(connection_id):
            out += self.release_member(session.group_id, session.member_id)
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
