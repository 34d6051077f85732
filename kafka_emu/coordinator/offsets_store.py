"""Committed offsets, keyed group -> topic -> partition (Kafka's OffsetMetadataManager.Offsets),
and the pending transactional offsets (``pendingTransactionalOffsets``, KIP-98/447).

Pending offsets are kept per producer id, then group -> (topic, partition), apart from the
committed ones: OffsetFetch never reads them, a commit marker moves them into the main store and
an abort drops them (``txn_offsets.py``). ``open_txns`` indexes which producers have pending
offsets in a group (Kafka's openTransactionsByGroup), for ``has_pending`` (require_stable).

Pure storage: validation, retention policy and replies live in ``offsets.py`` and
``txn_offsets.py``.
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


@attrs.frozen(kw_only=True)
class PendingOffset:
    """A transactional offset awaiting its marker. Kafka keeps, at the marker, whichever of it
    and the committed offset was written later to ``__consumer_offsets``; ``seq`` orders the
    transactional writes, and ``committed_before`` is what was committed when it was written
    (a plain commit since then is newer). See ``wins``."""

    value: StoredOffset
    committed_before: StoredOffset | None
    seq: int


class OffsetStore:
    def __init__(self) -> None:
        self._by_group: dict[str, dict[str, dict[int, StoredOffset]]] = {}
        # producer id -> group id -> (topic, partition) -> PendingOffset
        self.pending: dict[int, dict[str, dict[tuple[str, int], PendingOffset]]] = {}
        self.open_txns: dict[str, set[int]] = {}  # group id -> producer ids with pending
        # producer id -> the latest epoch written for it (the __consumer_offsets partition's
        # producer state in Kafka, which refuses older epochs)
        self.producer_epochs: dict[int, int] = {}
        self._txn_seq = 0
        # (group, topic, partition) -> (value a marker committed, its transactional write's seq)
        self._txn_committed: dict[tuple[str, str, int], tuple[StoredOffset, int]] = {}

    def wins(self, group_id: str, topic: str, partition: int, pending: PendingOffset) -> bool:
        """Does a committing marker write ``pending`` over the current committed offset?
        Yes unless that offset was written after it (replayEndTransactionMarker keeps the
        higher record offset): a plain commit since (the value is no longer the one it saw), or
        another transaction's offset written later and committed first."""
        current = self.get(group_id, topic, partition)
        if current is pending.committed_before:
            return True
        by_txn = self._txn_committed.get((group_id, topic, partition))
        return by_txn is not None and by_txn[0] is current and by_txn[1] < pending.seq

    def commit_pending(self, group_id: str, topic: str, partition: int,
                       pending: PendingOffset) -> None:
        self.put(group_id, topic, partition, pending.value)
        self._txn_committed[(group_id, topic, partition)] = (pending.value, pending.seq)

    def has_pending(self, group_id: str, topic: str, partition: int) -> bool:
        """Some producer has a pending transactional offset for this partition
        (OffsetMetadataManager.hasPendingTransactionalOffsets)."""
        for pid in self.open_txns.get(group_id, ()):
            if (topic, partition) in self.pending[pid].get(group_id, {}):
                return True
        return False

    def put_pending(self, producer_id: int, group_id: str, topic: str, partition: int,
                    value: StoredOffset) -> None:
        groups = self.pending.setdefault(producer_id, {})
        self._txn_seq += 1
        groups.setdefault(group_id, {})[(topic, partition)] = PendingOffset(
            value=value, committed_before=self.get(group_id, topic, partition),
            seq=self._txn_seq)
        self.open_txns.setdefault(group_id, set()).add(producer_id)

    def take_pending(self, producer_id: int, group_id: str) -> dict[tuple[str, int], PendingOffset]:
        """Remove and return one producer's pending offsets in one group."""
        groups = self.pending.get(producer_id)
        if groups is None:
            return {}
        taken = groups.pop(group_id, {})
        if not groups:
            del self.pending[producer_id]
        pids = self.open_txns.get(group_id)
        if pids is not None:
            pids.discard(producer_id)
            if not pids:
                del self.open_txns[group_id]
        return taken

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
        # a tombstone removes the partition's pending transactional offsets too (replay of a
        # tombstone in OffsetMetadataManager)
        for pid in self.open_txns.get(group_id, ()):
            self.pending[pid].get(group_id, {}).pop((topic, partition), None)
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
        # Kafka's deleteAllOffsets writes tombstones for pending partitions too, which drops them
        for pid in list(self.open_txns.get(group_id, ())):
            self.take_pending(pid, group_id)
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
