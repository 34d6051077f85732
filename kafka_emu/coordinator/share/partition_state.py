"""One share-partition's delivery state (KIP-932), as Kafka 4.2's SharePartition keeps it.

Theory of operation. A share-partition is a window ``[start_offset, end_offset)`` over a topic
partition's log, shared by every member of one share group. Records before ``start_offset`` are
finished (acknowledged or archived) and forgotten; records from ``end_offset`` on were never
delivered. Every offset inside the window is *in flight* and has one ``InFlight`` entry:

    AVAILABLE --acquire--> ACQUIRED --accept--> ACKNOWLEDGED
        ^                     |  --reject / gap--> ARCHIVED
        +---release / lock expiry / holder leaves (delivery count < limit)
                              +---release / lock expiry / holder leaves (at the limit)--> ARCHIVED

Acquiring a record counts one more delivery and takes an acquisition lock with an absolute
deadline (``now_ms + record lock duration``); the lock is the only timer here (``next_deadline``,
``expire(now_ms)``). A record released while its delivery count has reached the delivery count
limit is archived instead of made available again (a poison record). The start offset moves only
over a prefix of finished records, so it never passes a record that may still be delivered.

New records are acquired a whole log batch at a time (Kafka's batch-optimised acquire: the
response's max records may be exceeded to end on a batch boundary; ShareAcquireMode
record-limit never exceeds it), at most ``max_record_locks`` in flight, and form in-flight
batches cut at log batch boundaries once the fetch's BatchSize is reached. Records AVAILABLE
again are re-acquired an in-flight batch at a time, throttled as Kafka 4.2 does once they were
delivered often (``_reacquire``: half a batch per further delivery, the last attempt alone), so
a poison record ends up archived on its own. Control batches and aborted transactional batches
are archived as they enter the window, never delivered. The values (states, events, configs)
are in delivery_types.py.

Everything is pure: time is ``now_ms``, the log is described by ``LogBatch`` tuples the broker
reads, and every change is also returned as ``DeliveryEvent`` values for the observer seam.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from ...errors import ErrorCode
from .delivery_types import (FINISHED, AckBatch, AckError, AckType, Acquired,  # noqa: F401
                             DeliveryConfig, DeliveryEvent, InFlight, LogBatch, RecordState,
                             _runs, _sorted_runs)


class SharePartition:
    """The delivery state of one (group, topic, partition). Not initialised until the first
    fetch (or an AlterShareGroupOffsets) fixes the start offset."""

    def __init__(self, config: DeliveryConfig | None = None) -> None:
        self.config = config or DeliveryConfig()
        self.start_offset = -1
        self.end_offset = -1
        self.records: dict[int, InFlight] = {}
        self._locks: dict[int, tuple[int, set[int]]] = {}  # id -> (deadline, offsets)
        self._heap: list[tuple[int, int]] = []  # (deadline, lock id); stale ones skipped
        self._next_lock = 1
        self._available = 0  # AVAILABLE records in flight: a fetch skips the scan when 0
        self._batches: dict[int, int] = {}  # in-flight batches: first offset -> last offset
        self._throttled = False  # set by _reacquire_all: this fetch takes nothing more

    # -- queries -------------------------------------------------------------------------
    @property
    def initialised(self) -> bool:
        return self.start_offset >= 0

    def in_flight_count(self) -> int:
        return self.end_offset - self.start_offset if self.initialised else 0

    def next_fetch_offset(self) -> int:
        """Where the broker should read the log from: the first AVAILABLE record in flight,
        else the end offset."""
        if self._available:
            for offset in range(self.start_offset, self.end_offset):
                if self.records[offset].state is RecordState.AVAILABLE:
                    return offset
        return self.end_offset

    def has_available(self, log_limit: int) -> bool:
        """Could a fetch acquire anything now, with the log readable up to ``log_limit``?"""
        if not self.initialised:
            return True
        if self._available:
            return True
        return (log_limit > self.end_offset
                and self.in_flight_count() < self.config.max_record_locks)

    def next_deadline(self) -> int | None:
        heap = self._heap
        while heap:
            deadline, lock = heap[0]
            entry = self._locks.get(lock)
            if entry is not None and entry[0] == deadline and entry[1]:
                return deadline
            heapq.heappop(heap)
            if entry is not None and not entry[1]:
                del self._locks[lock]
        return None

    def held_by(self, member_id: str) -> list[int]:
        return [o for o, r in self.records.items()
                if r.state is RecordState.ACQUIRED and r.member_id == member_id]

    def lock_deadline(self, offset: int) -> int | None:
        record = self.records.get(offset)
        if record is None or not record.lock:
            return None
        return self._locks[record.lock][0]

    # -- start offset --------------------------------------------------------------------
    def initialise(self, log_start: int, log_end: int) -> None:
        """Fix the start offset by share.auto.offset.reset (Kafka: on the first fetch)."""
        start = log_start if self.config.auto_offset_reset == "earliest" else log_end
        self.reset_to(start)

    def reset_to(self, offset: int) -> None:
        """Start over at ``offset`` with nothing in flight (AlterShareGroupOffsets)."""
        self.start_offset = self.end_offset = offset
        self.records.clear()
        self._locks.clear()
        self._heap.clear()
        self._batches.clear()
        self._available = 0

    def _advance_start(self) -> None:
        records = self.records
        start, end = self.start_offset, self.end_offset
        batches = self._batches
        while start < end and records[start].state in FINISHED:
            record = records.pop(start)
            if batches.get(record.batch) == start:  # the batch's last record: it is gone
                del batches[record.batch]
            start += 1
        self.start_offset = start

    def _catch_up(self, log_start: int) -> list[DeliveryEvent]:
        """Records the log no longer holds (retention, DeleteRecords) are archived."""
        facts = []
        while self.start_offset < log_start:
            if self.start_offset < self.end_offset:
                record = self.records.pop(self.start_offset)
                if self._batches.get(record.batch) == self.start_offset:
                    del self._batches[record.batch]
                if record.state not in FINISHED:
                    facts.append(("archive", record.member_id, self.start_offset,
                                  record.delivery_count, None))
                    self._leave_state(record, self.start_offset)
            self.start_offset += 1
        self.end_offset = max(self.end_offset, self.start_offset)
        return _runs(facts)

    # -- acquire -------------------------------------------------------------------------
    def acquire(self, member_id: str, batches: Sequence[LogBatch], *, log_start: int,
                log_limit: int, max_records: int, now_ms: int, record_limit: bool = False,
                batch_size: int = 0) -> tuple[list[Acquired], list[DeliveryEvent]]:
        """Acquire for ``member_id`` from ``batches`` (the log read from ``next_fetch_offset``,
        in order), never at or past ``log_limit`` (the high watermark, or the last stable
        offset under read_committed). Returns the acquired runs and the events.

        First the in-flight records of those batches that are AVAILABLE again, an in-flight
        batch at a time (``_reacquire``), then new records, a log batch at a time. Batch-
        optimised (the default): max records is checked between batches, so a batch is taken
        whole; new records form in-flight batches cut at log batch boundaries once
        ``batch_size`` records are reached. ``record_limit`` (ShareFetch v2's ShareAcquireMode
        1, KIP-1206) never passes ``max_records``, splitting a batch."""
        if not self.initialised:
            self.initialise(log_start, log_limit)
        events = self._catch_up(log_start)
        deadline = now_ms + self.config.record_lock_duration_ms
        lock = self._next_lock
        held: set[int] = set()
        acquired: list[tuple[int, int]] = []  # (offset, delivery count)
        archived: list[int] = []
        records = self.records
        batches = [b for b in batches
                   if b.last_offset >= self.start_offset and b.last_offset < log_limit]
        if self._available:
            self._reacquire_all(member_id, lock, batches, acquired, held, max_records,
                                record_limit)
        room = self.config.max_record_locks - self.in_flight_count()
        current = -1  # the in-flight batch new records join (its first offset)
        for batch in batches:
            if len(acquired) >= max_records or self._throttled:
                break
            first_new = max(batch.base_offset, self.end_offset)
            if first_new > batch.last_offset:
                continue
            # the batch is taken whole if the in-flight limit has room when it starts (Kafka
            # may pass max.record.locks and max records to end on a batch boundary)
            if room <= 0:
                break
            if current < 0 or (batch_size > 0 and first_new - current >= batch_size):
                current = first_new
            for offset in range(first_new, batch.last_offset + 1):
                if record_limit and len(acquired) >= max_records:
                    break
                if offset > self.end_offset:  # offsets the log does not hold
                    for gap in range(self.end_offset, offset):
                        records[gap] = InFlight(RecordState.ARCHIVED, batch=gap)
                        self._batches[gap] = gap
                        room -= 1
                if batch.skip:
                    records[offset] = InFlight(RecordState.ARCHIVED, batch=current)
                    archived.append(offset)
                else:
                    records[offset] = InFlight(RecordState.ACQUIRED, 1, member_id, lock,
                                               batch=current)
                    held.add(offset)
                    acquired.append((offset, 1))
                self._batches[current] = offset
                room -= 1
                self.end_offset = offset + 1
        self._throttled = False
        if held:
            self._locks[lock] = (deadline, held)
            heapq.heappush(self._heap, (deadline, lock))
            self._next_lock += 1
        self._advance_start()
        runs: list[Acquired] = []
        for offset, count in sorted(acquired):
            if runs and runs[-1].last_offset == offset - 1 and runs[-1].delivery_count == count:
                runs[-1] = runs[-1]._replace(last_offset=offset)
            else:
                runs.append(Acquired(offset, offset, count))
        events += [DeliveryEvent(kind="acquire", member_id=member_id, first_offset=r.first_offset,
                                 last_offset=r.last_offset, delivery_count=r.delivery_count)
                   for r in runs]
        events += _runs(("archive", "", o, 0, None) for o in archived)
        return runs, events

    def _reacquire_all(self, member_id: str, lock: int, batches: Sequence[LogBatch],
                       acquired: list, held: set, max_records: int, record_limit: bool) -> None:
        """The AVAILABLE in-flight records the read covers, an in-flight batch at a time."""
        records = self.records
        groups: list[tuple[int, list[int]]] = []
        for batch in batches:
            for offset in range(max(batch.base_offset, self.start_offset),
                                min(batch.last_offset + 1, self.end_offset)):
                record = records[offset]
                if record.state is not RecordState.AVAILABLE:
                    continue
                if groups and groups[-1][0] == record.batch:
                    groups[-1][1].append(offset)
                else:
                    groups.append((record.batch, [offset]))
        for first, offsets in groups:
            if len(acquired) >= max_records:
                break
            size = self._batches.get(first, offsets[-1]) - first + 1
            if self._reacquire(member_id, lock, size, offsets, acquired, held, max_records,
                               record_limit):
                self._throttled = True
                break

    def _reacquire(self, member_id: str, lock: int, size: int, offsets: list[int],
                   acquired: list, held: set, max_records: int, record_limit: bool) -> bool:
        """Re-acquire AVAILABLE ``offsets`` of one in-flight batch of ``size`` records, as Kafka
        4.2 throttles repeated deliveries (KAFKA-17541): from ``max(2, ceil(limit / 2))``
        deliveries on, a batch goes alone in its fetch, and only ``size >> (count - threshold
        + 1)`` of its records (at least 1); a record on its last delivery attempt goes alone
        (limit > 2). Returns True when throttling ends this fetch."""
        records = self.records
        limit = self.config.delivery_count_limit
        threshold = max(2, -(-limit // 2))
        throttled = max(records[o].delivery_count for o in offsets) >= threshold
        if throttled and acquired:
            return True  # delivered on its own, in a later fetch
        cap = None
        got = 0
        for offset in offsets:
            record = records[offset]
            count = record.delivery_count
            if limit > 2 and count == limit - 1 and got:
                break  # its last attempt: alone, next time
            if count >= threshold and cap is None:
                cap = max(1, size >> (count - threshold + 1))
            self._available -= 1
            record.state = RecordState.ACQUIRED
            record.delivery_count = count + 1
            record.member_id, record.lock = member_id, lock
            held.add(offset)
            acquired.append((offset, count + 1))
            got += 1
            if limit > 2 and count + 1 == limit:
                break
            if record_limit and len(acquired) >= max_records:
                break
            if cap is not None and got >= cap:
                break
        return throttled and got > 0

    # -- acknowledge ---------------------------------------------------------------------
    def validate(self, member_id: str, batches: Sequence[AckBatch], *,
                 renew_allowed: bool = False) -> None:
        """Raise AckError unless every batch is well formed and every offset is ACQUIRED by
        ``member_id``: INVALID_REQUEST for a malformed batch, INVALID_RECORD_STATE else."""
        top = AckType.RENEW if renew_allowed else AckType.REJECT
        previous_last = None
        for b in batches:
            if b.first_offset > b.last_offset or not b.types:
                raise AckError(ErrorCode.INVALID_REQUEST, "bad acknowledgement batch range")
            if previous_last is not None and b.first_offset <= previous_last:
                raise AckError(ErrorCode.INVALID_REQUEST, "acknowledgement batches overlap")
            previous_last = b.last_offset
            if len(b.types) not in (1, b.last_offset - b.first_offset + 1):
                raise AckError(ErrorCode.INVALID_REQUEST,
                               "acknowledge types do not match the batch's offsets")
            if any(t < 0 or t > top for t in b.types):
                raise AckError(ErrorCode.INVALID_REQUEST, "unknown acknowledge type")
            if b.last_offset < self.start_offset:
                continue  # all finished already: Kafka skips such a batch, no error
            for offset in range(b.first_offset, b.last_offset + 1):
                record = self.records.get(offset)
                if record is None or record.state is not RecordState.ACQUIRED:
                    raise AckError(ErrorCode.INVALID_RECORD_STATE,
                                   f"The record at offset {offset} is not acquired")
                if record.member_id != member_id:
                    raise AckError(ErrorCode.INVALID_RECORD_STATE,
                                   f"Member {member_id} is not the owner of offset {offset}")

    def acknowledge(self, member_id: str, batches: Sequence[AckBatch], now_ms: int, *,
                    renew_allowed: bool = False) -> list[DeliveryEvent]:
        """Apply a partition's acknowledgements all or nothing (raises AckError first)."""
        self.validate(member_id, batches, renew_allowed=renew_allowed)
        facts = []
        renewed: set[int] = set()
        for b in batches:
            if b.last_offset < self.start_offset:
                continue
            for i, offset in enumerate(range(b.first_offset, b.last_offset + 1)):
                kind = AckType(b.types[i] if len(b.types) > 1 else b.types[0])
                record = self.records[offset]
                if kind is AckType.RENEW:
                    renewed.add(offset)
                    continue
                facts.append(("acknowledge", member_id, offset, record.delivery_count, int(kind)))
                if kind is AckType.ACCEPT:
                    self._leave_state(record, offset)
                    record.state = RecordState.ACKNOWLEDGED
                elif kind is AckType.RELEASE:
                    facts.append(self._release(record, offset, "release"))
                else:  # REJECT, GAP
                    self._leave_state(record, offset)
                    record.state = RecordState.ARCHIVED
                    facts.append(("archive", member_id, offset, record.delivery_count, None))
        if renewed:
            self._relock(renewed, now_ms + self.config.record_lock_duration_ms)
        self._advance_start()
        return _sorted_runs(facts)

    # -- release -------------------------------------------------------------------------
    def _leave_state(self, record: InFlight, offset: int) -> None:
        """Drop the record from its lock (if any) before it changes state."""
        if record.state is RecordState.AVAILABLE:
            self._available -= 1
        if record.lock:
            entry = self._locks.get(record.lock)
            if entry is not None:
                entry[1].discard(offset)
            record.lock = 0
        record.member_id = ""

    def _release(self, record: InFlight, offset: int, kind: str):
        """ACQUIRED -> AVAILABLE, or ARCHIVED at the delivery count limit."""
        member = record.member_id
        if record.lock:
            entry = self._locks.get(record.lock)
            if entry is not None:
                entry[1].discard(offset)
            record.lock = 0
        record.member_id = ""
        if record.delivery_count >= self.config.delivery_count_limit:
            record.state = RecordState.ARCHIVED
            return ("archive", member, offset, record.delivery_count, None)
        record.state = RecordState.AVAILABLE
        self._available += 1
        return (kind, member, offset, record.delivery_count, None)

    def _relock(self, offsets: set[int], deadline: int) -> None:
        lock = self._next_lock
        self._next_lock += 1
        for offset in offsets:
            record = self.records[offset]
            entry = self._locks.get(record.lock)
            if entry is not None:
                entry[1].discard(offset)
            record.lock = lock
        self._locks[lock] = (deadline, set(offsets))
        heapq.heappush(self._heap, (deadline, lock))

    def release_member(self, member_id: str) -> list[DeliveryEvent]:
        """The member left, was fenced or closed its share session: what it holds goes back."""
        facts = [self._release(self.records[o], o, "release") for o in sorted(self.held_by(member_id))]
        self._advance_start()
        return _sorted_runs(facts)

    def reload_from_state(self) -> list[DeliveryEvent]:
        """A new leader's view (share-group state: acquisitions are never written there): each
        ACQUIRED record is released with the delivery count of its last write, one less."""
        facts = []
        for offset in sorted(self.records):
            record = self.records[offset]
            if record.state is RecordState.ACQUIRED:
                record.delivery_count -= 1  # below the limit: _release makes it AVAILABLE
                facts.append(self._release(record, offset, "release"))
        self._advance_start()
        return _sorted_runs(facts)

    def expire_locks(self, member_id: str | None = None, now_ms: int = 0) -> list[DeliveryEvent]:
        """Let every lock (of ``member_id`` only, if given) run out now (control plane)."""
        facts = []
        for offset in sorted(self.records):
            record = self.records[offset]
            if record.state is RecordState.ACQUIRED and member_id in (None, record.member_id):
                facts.append(self._release(record, offset, "lock_expired"))
        self._advance_start()
        return _sorted_runs(facts)

    def expire(self, now_ms: int) -> list[DeliveryEvent]:
        """Release the records of every acquisition lock due by ``now_ms``."""
        facts = []
        while True:
            deadline = self.next_deadline()
            if deadline is None or deadline > now_ms:
                break
            _, lock = heapq.heappop(self._heap)
            _, offsets = self._locks.pop(lock)
            for offset in sorted(offsets):
                record = self.records[offset]
                record.lock = 0  # the lock is gone; _release must not look it up
                facts.append(self._release(record, offset, "lock_expired"))
        if facts:
            self._advance_start()
        return _sorted_runs(facts)
