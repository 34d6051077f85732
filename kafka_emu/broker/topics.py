"""The broker's view of topics: names, ids and partition counts over the pure log catalogue.

Handlers ask this module whether a partition exists (offsets), list topics (Metadata) and
create or delete them (CreateTopics, DeleteTopics, auto-creation). Logs themselves live in
``kafka_emu.log``; this façade adds the broker policy (num.partitions, auto-creation,
log.retention.bytes and .ms) and the wake-ups that long-polling fetches wait on.

Wake-ups are per partition: a waiting Fetch watches the partition logs it read (``watch``), and
an append wakes only the watches of the logs it wrote (``notify_append(logs)``), so a Produce
does not make every long-polling Fetch of every topic re-read its partitions -- with several
brokers a client holds one waiting Fetch per broker, and every Produce used to wake them all.
``data_arrived`` stays for waits on any partition (ShareFetch): made when someone reads it, set
and dropped by the next append. ``notify_append()`` without logs (transaction markers: the last
stable offset moves) wakes everyone.
"""

from __future__ import annotations

import functools
import uuid
from typing import Any

import attrs
import trio

from ..frozen import lazy_dunders
from .config import BrokerConfig


@lazy_dunders  # __repr__, __eq__, __hash__ made on first use
@attrs.frozen(repr=False, eq=False)
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    partitions: int


class Watch:
    """One waiting fetch: the logs it watches, whether an append to one has come since it last
    read (``woken``), and its wait -- one cancel scope up to a deadline, which an append cancels
    (``wake``). A connection waits on it while reading on for the client's hang-up
    (connection_io.Connection.park); without one it is awaited as it is. A connection that reads
    its stdlib socket itself meanwhile sets ``socket``: an append then wakes that read with
    trio's ``notify_closing`` (ClosedResourceError, the socket left open), as Pending.resolve
    wakes a parked group request -- about half what a cancelled scope costs."""

    __slots__ = ("logs", "woken", "wake", "seconds", "deadline", "socket")

    def __init__(self, logs, seconds: float) -> None:
        self.logs = logs
        self.woken = False
        self.wake = None  # the waiting scope's cancel, while it waits
        self.seconds = seconds  # from the first wait (wall time: an I/O wait)
        self.deadline: float | None = None
        # the stdlib socket its connection reads while it waits (Connection._park_watch): an
        # append wakes that read with notify_closing, not a cancellation
        self.socket = None

    def scope(self) -> trio.CancelScope:
        """The wait's cancel scope: up to the deadline of the first wait."""
        if self.deadline is None:
            self.deadline = trio.current_time() + self.seconds
        return trio.CancelScope(deadline=self.deadline)

    async def wait(self, until=None) -> bool:
        """Until an append (``woken``) or the deadline: True; or until ``until()`` returns
        first (the client hung up): False. The caller clears ``woken`` before it reads again."""
        if self.woken:
            return True
        with self.scope() as scope:
            self.wake = scope.cancel
            if until is None:
                await trio.sleep_forever()
            else:
                await until()
        self.wake = None
        return scope.cancelled_caught

    def __call__(self):
        return self.wait()

    def notify(self) -> None:
        self.woken = True
        if self.socket is not None:
            trio.lowlevel.notify_closing(self.socket)
        elif self.wake is not None:
            self.wake()


class Topics:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self._arrived: trio.Event | None = None  # data_arrived, while someone holds it
        self._watches: dict[Any, set[Watch]] = {}  # partition log -> watches of it
        for name, partitions in config.topics:
            self.create(name, partitions)

    # ``catalogue`` and ``producer_ids`` are made on first use: the log package (batches,
    # records, producer state) is a tenth of a serve's start, and a broker answering only
    # ApiVersions, Metadata of no topics or group requests never needs it. cached_property, not
    # ``__getattr__``: that would make every attribute read of Topics on the data path take
    # CPython's unspecialised lookup.
    @functools.cached_property
    def catalogue(self) -> Any:
        from ..log.catalogue import TopicCatalogue
        from ..log.config import LogConfig
        config = self.config
        return TopicCatalogue(
            default_config=LogConfig(retention_bytes=config.log_retention_bytes,
                                     retention_ms=config.log_retention_ms),
            default_num_partitions=config.num_partitions)

    @functools.cached_property
    def producer_ids(self) -> Any:
        from ..log.producers import ProducerIdAllocator
        return ProducerIdAllocator()

    # -- lookups ---------------------------------------------------------------------------
    def _info(self, topic) -> TopicInfo:
        return TopicInfo(topic.name, topic.topic_id, topic.num_partitions)

    def lookup(self, name: str) -> TopicInfo | None:
        topic = self.catalogue.get(name)
        return None if topic is None else self._info(topic)

    def lookup_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        topic = self.catalogue.get_by_id(topic_id)
        return None if topic is None else self._info(topic)

    def all(self) -> list[TopicInfo]:
        return [self._info(t) for t in self.catalogue]

    def exists(self, name: str, partition: int) -> bool:
        topic = self.catalogue.get(name)
        return topic is not None and 0 <= partition < len(topic.partitions)

    # -- changes ---------------------------------------------------------------------------
    def create(self, name: str, partitions: int | None = None, *, configs=None,
               validate_only: bool = False) -> TopicInfo:
        count = -1 if partitions is None else partitions
        return self._info(self.catalogue.create_topic(name, count, configs=configs,
                                                      validate_only=validate_only))

    def partition(self, name: str, index: int):
        """The PartitionLog, or KafkaError(UNKNOWN_TOPIC_OR_PARTITION)."""
        return self.catalogue.partition(name, index)

    def partition_by_id(self, topic_id: uuid.UUID, index: int):
        return self.catalogue.partition_by_id(topic_id, index)

    def auto_create(self, name: str) -> TopicInfo:
        return self.create(name, self.config.num_partitions)

    # -- wake-ups -------------------------------------------------------------------------
    @property
    def data_arrived(self) -> trio.Event:
        """Set by the next append to any partition (take it before reading, then wait)."""
        arrived = self._arrived
        if arrived is None:
            arrived = self._arrived = trio.Event()
        return arrived

    def watch(self, logs, seconds: float) -> Watch:
        """Watch these partition logs until ``unwatch``, for a wait of at most ``seconds``:
        each append to one wakes it (Watch.notify)."""
        watch = Watch(logs, seconds)
        watches = self._watches
        for log in logs:
            found = watches.get(log)
            if found is None:
                watches[log] = {watch}
            else:
                found.add(watch)
        return watch

    def unwatch(self, watch: Watch) -> None:
        watches = self._watches
        for log in watch.logs:
            found = watches.get(log)
            if found is not None:
                found.discard(watch)
                if not found:
                    del watches[log]

    def notify_append(self, logs=None) -> None:
        """Wake the fetches waiting on these logs (every waiting fetch when None)."""
        arrived = self._arrived
        if arrived is not None:
            self._arrived = None
            arrived.set()
        watches = self._watches
        if not watches:
            return
        if logs is None:
            for found in watches.values():
                for watch in found:
                    watch.notify()
            return
        for log in logs:
            found = watches.get(log)
            if found is not None:
                for watch in found:
                    watch.notify()
