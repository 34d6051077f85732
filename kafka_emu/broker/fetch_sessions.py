"""Fetch sessions (KIP-227): a consumer's incremental fetch names only what changed.

Without sessions every Fetch lists every partition the consumer reads and every answer carries
every one of them; a consumer assigned 13,000 partitions sends and gets some hundreds of KB
per fetch, and a single-threaded server spends its time parsing and writing them while the
group's heartbeats wait behind. With a session the broker remembers the partitions (and what it
last answered for each), the client sends only partitions it adds or whose fetch position
moved, and the answer carries only partitions with something to say.

As Kafka's FetchSession and FetchSessionCache (Fetch v7+; ``session_id``, ``session_epoch``):

- epoch -1 (FINAL): a sessionless full fetch; a session id given with it is closed first.
- epoch 0 (INITIAL): a full fetch that also asks for a new session (one given is closed first).
  The answer names the new session's id, or 0 when the cache has no room for it.
- epoch > 0: an incremental fetch in that session. Unknown session: FETCH_SESSION_ID_NOT_FOUND;
  a session that names topics by id asked by name or the other way round (a version change):
  FETCH_SESSION_TOPIC_ID_ERROR; another epoch than the one expected:
  INVALID_FETCH_SESSION_EPOCH -- each a top-level error with session id 0, the session
  unchanged. Otherwise the request's partitions are added or updated, its forgotten ones
  removed, the expected epoch moves on (after 2**31-1, to 1), and every partition of the session
  is read; the answer carries a partition only if it returns records, reports an error, or its
  high watermark or log start offset differs from what the session last answered for it (a
  partition new to the session always). A partition that returned records moves to the end of
  the session's order, so the next fetch's byte budget reaches the others first.

The cache holds ``max.incremental.fetch.session.cache.slots`` sessions (Kafka's default 1000; 0
turns sessions off: every INITIAL fetch is answered with session id 0). When it is full a new
session takes the place of the least recently used one unused for EVICTION_MS (Kafka's 120 s);
else of the smallest one, if the new session is larger (Kafka's ``evictableBySize``); else it
is not created. Sessions belong to a broker: in a cluster each node keeps its own. A session
is not tied to a connection (a client may reconnect and go on in it), as in Kafka.
"""

from __future__ import annotations

import random
import time
from typing import Any, Iterable

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
NO_SESSION = 0
EVICTION_MS = 120_000  # Kafka's fetch session eviction time (KafkaServer: a constant)


def _now_ms() -> float:
    return time.monotonic() * 1000  # wall time: sessions expire on it, not on the test clock


def next_epoch(epoch: int) -> int:
    """The epoch a session expects after ``epoch`` (Kafka's FetchMetadata.nextEpoch)."""
    return 1 if epoch >= 2**31 - 1 else epoch + 1


class Cached:
    """One partition of a session: the request fields the client last sent for it, and the
    high watermark and log start offset last answered (-1: never, or an error since)."""

    __slots__ = ("key", "request", "high_watermark", "log_start_offset")

    def __init__(self, key: tuple, request: Any) -> None:
        self.key = key  # (topic key, partition index): its place in the session
        self.request = request
        self.high_watermark = -1
        self.log_start_offset = -1


class SessionTopic:
    """A run of session partitions of one topic: what the fetch handler reads as a FetchTopic
    (``topic``, ``topic_id``, ``partitions``)."""

    __slots__ = ("topic", "topic_id", "partitions")

    def __init__(self, topic: str, topic_id: Any, partitions: list) -> None:
        self.topic, self.topic_id, self.partitions = topic, topic_id, partitions


class SessionRequest:
    """A Fetch as the handler reads it, over every partition of a session: the client's request
    with ``topics`` replaced (the rest read through)."""

    __slots__ = ("_request", "topics")

    def __init__(self, request: Any, topics: list) -> None:
        self._request, self.topics = request, topics

    def __getattr__(self, name: str) -> Any:
        return getattr(self._request, name)


class FetchSession:
    __slots__ = ("id", "epoch", "by_ids", "partitions", "names", "last_used_ms")

    def __init__(self, session_id: int, by_ids: bool, now_ms: float) -> None:
        self.id = session_id
        self.epoch = 1  # the first incremental fetch's
        self.by_ids = by_ids
        # (topic key, partition index) -> Cached, in the session's order (dicts keep it)
        self.partitions: dict[tuple, Cached] = {}
        self.names: dict[Any, tuple[str, Any]] = {}  # topic key -> (name, id) as the client sent
        self.last_used_ms = now_ms

    def key(self, topic: Any) -> Any:
        return topic.topic_id if self.by_ids else topic.topic

    def used(self, epoch: int) -> None:
        """An incremental fetch at ``epoch`` taken: the next one expected, and the session's
        last use (for eviction)."""
        self.epoch = next_epoch(epoch)
        self.last_used_ms = _now_ms()

    def update(self, topics: Iterable, forgotten: Iterable = ()) -> list[Cached]:
        """The request's partitions added or updated, then its forgotten ones removed (Kafka's
        order: a partition both sent and forgotten is gone); the entries of the partitions
        sent, in the request's order (as its answer lists them)."""
        partitions, names = self.partitions, self.names
        sent = []
        for t in topics:
            key = self.key(t)
            names.setdefault(key, (t.topic, t.topic_id))
            for p in t.partitions:
                place = (key, p.partition)
                cached = partitions.get(place)
                if cached is None:
                    cached = partitions[place] = Cached(place, p)
                else:
                    cached.request = p
                sent.append(cached)
        for f in forgotten:
            key = self.key(f)
            for index in f.partitions:
                partitions.pop((key, index), None)
        return sent

    def topics(self) -> tuple[list[SessionTopic], list[Cached]]:
        """The session's partitions as fetch topics (one per run of a topic, in order), and
        the cached entries in the same order."""
        topics: list[SessionTopic] = []
        order: list[Cached] = []
        current = None
        names = self.names
        for (key, _), cached in self.partitions.items():
            if key != current:
                name, topic_id = names[key]
                run: list = []
                topics.append(SessionTopic(name, topic_id, run))
                current = key
            run.append(cached.request)
            order.append(cached)
        return topics, order

    def changed(self, responses: list, order: list[Cached]) -> list:
        """Of an answer over every partition (in ``order``), the topics and partitions an
        incremental answer carries; the cache takes what they say, and partitions that
        returned records move to the end."""
        out = []
        moved = []
        i = 0
        for topic in responses:
            parts = []
            for part in topic.partitions:
                cached = order[i]
                i += 1
                must = False
                if part.records:
                    must = True
                    moved.append(cached)
                if part.high_watermark != cached.high_watermark:
                    must = True
                    cached.high_watermark = part.high_watermark
                if part.log_start_offset != cached.log_start_offset:
                    must = True
                    cached.log_start_offset = part.log_start_offset
                if part.error_code:
                    must = True
                    cached.high_watermark = -1  # answered again once the error is gone
                if must:
                    parts.append(part)
            if len(parts) == len(topic.partitions):
                out.append(topic)
            elif parts:
                # (imported here: the broker makes its cache at start, before any Fetch)
                from ..protocol.messages.fetch import FetchableTopicResponse
                out.append(FetchableTopicResponse(topic=topic.topic, topic_id=topic.topic_id,
                                                  partitions=parts))
        if moved:
            partitions = self.partitions
            for cached in moved:
                partitions[cached.key] = partitions.pop(cached.key)
        return out

    def remember(self, responses: list, order: list[Cached]) -> None:
        """What a full answer (the session's first) said of each partition."""
        i = 0
        for topic in responses:
            for part in topic.partitions:
                cached = order[i]
                i += 1
                cached.high_watermark = -1 if part.error_code else part.high_watermark
                cached.log_start_offset = part.log_start_offset


class FetchSessionCache:
    """A broker's sessions, by (node id, session id)."""

    def __init__(self, slots: int, rng: random.Random | None = None) -> None:
        self.slots = slots
        self.sessions: dict[tuple[int, int], FetchSession] = {}
        self._rng = rng or random.Random()

    def get(self, node_id: int, session_id: int) -> FetchSession | None:
        return self.sessions.get((node_id, session_id))

    def remove(self, node_id: int, session_id: int) -> None:
        self.sessions.pop((node_id, session_id), None)

    def create(self, node_id: int, by_ids: bool, size: int,
               now_ms: float | None = None) -> FetchSession | None:
        """A new session for ``size`` partitions, or None when there is no room for it."""
        if self.slots <= 0:
            return None
        now_ms = _now_ms() if now_ms is None else now_ms
        if len(self.sessions) >= self.slots and not self._evict(size, now_ms):
            return None
        while True:
            session_id = self._rng.randint(1, 2**31 - 1)
            if (node_id, session_id) not in self.sessions:
                break
        session = FetchSession(session_id, by_ids, now_ms)
        self.sessions[(node_id, session_id)] = session
        return session

    def _evict(self, size: int, now_ms: float) -> bool:
        stale = [(s.last_used_ms, k) for k, s in self.sessions.items()
                 if now_ms - s.last_used_ms >= EVICTION_MS]
        if stale:
            del self.sessions[min(stale)[1]]
            return True
        smallest = min(self.sessions.items(),
                       key=lambda item: (len(item[1].partitions), item[1].last_used_ms))
        if len(smallest[1].partitions) < size:
            del self.sessions[smallest[0]]
            return True
        return False
