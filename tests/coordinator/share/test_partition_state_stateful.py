"""The share-partition state machine against a simple per-offset model (hypothesis).

The model knows, for every offset ever appended: how often it was delivered, who holds it and
until when, and whether it is finished (accepted or archived). Invariants: an acknowledged or
archived record is never acquired again; no record is held by two members; the start offset
only moves over finished records and never back; no delivery count passes the limit; and the
SharePartition's view of every in-flight offset equals the model's.
"""

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kafka_emu.coordinator.share.partition_state import (AckBatch, AckType, DeliveryConfig,
                                                         LogBatch, RecordState, SharePartition)

MEMBERS = ("m0", "m1", "m2")
LOCK_MS = 1000
LIMIT = 3


class SharePartitionMachine(RuleBasedStateMachine):
    @initialize(max_locks=st.integers(4, 40))
    def setup(self, max_locks):
        self.sp = SharePartition(DeliveryConfig(
            record_lock_duration_ms=LOCK_MS, delivery_count_limit=LIMIT,
            max_record_locks=max_locks, auto_offset_reset="earliest"))
        self.batches: list[LogBatch] = []
        self.now = 0
        self.count: dict[int, int] = {}
        self.holder: dict[int, tuple[str, int]] = {}  # offset -> (member, deadline)
        self.finished: set[int] = set()
        self.control: set[int] = set()
        self.last_start = 0

    @property
    def log_end(self) -> int:
        return self.batches[-1].last_offset + 1 if self.batches else 0

    @rule(size=st.integers(1, 6), control=st.booleans())
    def append(self, size, control):
        base = self.log_end
        if control:
            size = 1
            self.control.add(base)
            self.finished.add(base)  # archived as it enters the window, never delivered
        self.batches.append(LogBatch(base, base + size - 1, control))

    @rule(member=st.sampled_from(MEMBERS), max_records=st.integers(1, 12),
          record_limit=st.booleans(), batch_size=st.sampled_from([0, 1, 3, 500]))
    def fetch(self, member, max_records, record_limit, batch_size):
        start_at = self.sp.next_fetch_offset() if self.sp.initialised else 0
        batches = [b for b in self.batches if b.last_offset >= start_at]
        runs, _ = self.sp.acquire(member, batches, log_start=0, log_limit=self.log_end,
                                  max_records=max_records, now_ms=self.now,
                                  record_limit=record_limit, batch_size=batch_size)
        if record_limit:  # ShareAcquireMode record-limit: never past max_records
            assert sum(r.last_offset - r.first_offset + 1 for r in runs) <= max_records
        for run in runs:
            for offset in range(run.first_offset, run.last_offset + 1):
                assert offset not in self.finished, f"finished {offset} delivered again"
                assert offset not in self.holder, f"{offset} acquired by two members"
                assert offset not in self.control
                self.count[offset] = self.count.get(offset, 0) + 1
                assert run.delivery_count == self.count[offset] <= LIMIT
                self.holder[offset] = (member, self.now + LOCK_MS)

    def _release(self, offset):
        del self.holder[offset]
        if self.count[offset] >= LIMIT:
            self.finished.add(offset)

    @precondition(lambda self: self.holder)
    @rule(data=st.data(), kind=st.sampled_from([AckType.ACCEPT, AckType.RELEASE, AckType.REJECT]),
          wrong_member=st.booleans())
    def acknowledge(self, data, kind, wrong_member):
        offset = data.draw(st.sampled_from(sorted(self.holder)))
        member = self.holder[offset][0]
        if wrong_member:
            other = next(m for m in MEMBERS if m != member)
            try:
                self.sp.acknowledge(other, [AckBatch(offset, offset, (int(kind),))], self.now)
            except Exception as exc:
                assert exc.code == 121  # INVALID_RECORD_STATE
            else:
                raise AssertionError("another member acknowledged a record it does not hold")
            return
        self.sp.acknowledge(member, [AckBatch(offset, offset, (int(kind),))], self.now)
        if kind is AckType.RELEASE:
            self._release(offset)
        else:
            del self.holder[offset]
            self.finished.add(offset)

    @rule(offset=st.integers(0, 60), kind=st.sampled_from(list(AckType)[:4]))
    def acknowledge_unheld(self, offset, kind):
        if offset in self.holder:
            return
        try:
            self.sp.acknowledge("m0", [AckBatch(offset, offset, (int(kind),))], self.now)
        except Exception as exc:
            assert exc.code == 121
        else:
            # Kafka skips a batch wholly before the start offset: already finished, no error
            assert self.sp.initialised and offset < self.sp.start_offset, (
                f"acknowledged {offset}, which nobody holds")

    @rule(member=st.sampled_from(MEMBERS))
    def member_leaves(self, member):
        self.sp.release_member(member)
        for offset in [o for o, (m, _) in self.holder.items() if m == member]:
            self._release(offset)

    @rule(ms=st.integers(1, 1500))
    def advance(self, ms):
        self.now += ms
        assert (self.sp.next_deadline() is None) == (not self.holder)
        if self.holder:
            assert self.sp.next_deadline() == min(d for _, d in self.holder.values())
        self.sp.expire(self.now)
        for offset in [o for o, (_, d) in self.holder.items() if d <= self.now]:
            self._release(offset)

    @invariant()
    def matches_model(self):
        sp = self.sp
        if not hasattr(self, "sp") or not sp.initialised:
            return
        assert sp.start_offset >= self.last_start
        for offset in range(self.last_start, sp.start_offset):
            assert offset in self.finished, f"start passed unfinished {offset}"
        self.last_start = sp.start_offset
        assert sp.end_offset - sp.start_offset == len(sp.records)
        if sp.start_offset < sp.end_offset:
            assert sp.records[sp.start_offset].state not in (RecordState.ACKNOWLEDGED,
                                                             RecordState.ARCHIVED)
        for offset, record in sp.records.items():
            assert record.delivery_count <= LIMIT
            if offset in self.holder:
                assert record.state is RecordState.ACQUIRED
                assert record.member_id == self.holder[offset][0]
                assert sp.lock_deadline(offset) == self.holder[offset][1]
            elif offset in self.finished:
                assert record.state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)
            else:
                assert record.state is RecordState.AVAILABLE
            assert record.delivery_count == self.count.get(offset, 0)


TestSharePartitionMachine = SharePartitionMachine.TestCase
TestSharePartitionMachine.settings = settings(max_examples=150, stateful_step_count=40,
                                              deadline=None)
