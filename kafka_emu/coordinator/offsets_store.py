"""Committed offsets, keyed group -> topic -> partition (Kafka's OffsetMetadataManager.Offsets).

Pure storage: validation, retention policy and replies live in ``offsets.py``.
"""

from __future__ import annotations

from typing import Iterator

import attrs

from kafka_emu.frozen import fast_init_module


@attrs.frozen(kw_only=True)
class StoredOffset:
    offset: int
    leader_epoch: int  # -1 = none
    metadata: str  # null is stored as "" (4.1)
    commit_timestamp_ms: int
    # Only for commits that carried an explicit retention (OffsetCommit v2-4, 4.3).
    expire_timestamp_ms: int | None = None


class OffsetStore:
    def __init__(self) -> None:
        self._by_group: dict[str, dict[str, dict[int, StoredOffset]]] = {}

    def get(self, group_id: str, topic: str, partition: int) -> StoredOffset | None:
        topics = self._by_group.get(group_id)
        if topics is None:
            return None
        partitions = topics.get(topic)
        if partitions is None:
            return None
        return partitions.get(partition)

    def put(self, group_id: str, topic: str, partition: int, value: StoredOffset) -> None:
        topics = self._by_group.get(group_id)  # not setdefault: it would build a dict per call
        if topics is None:
            topics = self._by_group[group_id] = {}
        partitions = topics.get(topic)
        if partitions is None:
            partitions = topics[topic] = {}
        partitions[partition] = value

    def delete(self, group_id: str, topic: str, partition: int) -> bool:
        topics = self._by_group.get(group_id)
        if topics is None:
            return False
        partitions = topics.get(topic)
        if partitions is None or partition not in partitions:
            return False
        del partitions[partition]
        if not partitions:
            del topics[topic]
        if not topics:
            del self._by_group[group_id]
        return True

    def delete_partitions(self, partitions: set[tuple[str, int]]) -> dict[str, list[tuple[str, int]]]:
        """Drop these partitions from every group; what was dropped, per group."""
        dropped: dict[str, list[tuple[str, int]]] = {}
        for group_id in list(self._by_group):
            gone = [tp for tp in sorted(partitions) if self.delete(group_id, *tp)]
            if gone:
                dropped[group_id] = gone
        return dropped

    def delete_group(self, group_id: str) -> list[tuple[str, int]]:
        topics = self._by_group.pop(group_id, {})
        return [(t, p) for t, parts in topics.items() for p in parts]

    def has_group(self, group_id: str) -> bool:
        return group_id in self._by_group

    def group_items(self, group_id: str) -> Iterator[tuple[str, int, StoredOffset]]:
        """All (topic, partition, value) of a group, sorted by topic then partition."""
        topics = self._by_group.get(group_id, {})
        for topic in sorted(topics):
            partitions = topics[topic]
            for partition in sorted(partitions):
                yield topic, partition, partitions[partition]


# a StoredOffset is built for every committed partition: the cheaper frozen __init__ (kafka_emu/frozen.py)
fast_init_module(globals())
