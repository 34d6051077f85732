"""The topic catalogue as the coordinator reads it (name -> partition count, internal topics
left out), looked up lazily: a JoinGroup carries it in case its group turns out to be a consumer
group serving classic members (which needs the partition counts of their subscriptions), and
most JoinGroups never read it, so nothing is copied up front."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Iterator


class TopicCounts(Mapping):
    __slots__ = ("_topics",)

    def __init__(self, topics) -> None:
        self._topics = topics  # the broker's Topics

    def __getitem__(self, name: str) -> int:
        topic = self._topics.catalogue.get(name)
        if topic is None or topic.is_internal:
            raise KeyError(name)
        return topic.num_partitions

    def __iter__(self) -> Iterator[str]:
        return (t.name for t in self._topics.catalogue if not t.is_internal)

    def __len__(self) -> int:
        return sum(1 for _ in self)
