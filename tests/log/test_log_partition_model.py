"""PartitionLog against a brute-force model under random appends, deletes, reads and lookups."""

from __future__ import annotations

import attrs
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from log_testing import make_batch, raises_code

from kafka_emu.errors import ErrorCode
from kafka_emu.log.batch import crc_is_valid, parse_header
from kafka_emu.log.config import LogConfig
from kafka_emu.log.partition import MAX_TIMESTAMP, NOT_FOUND, PartitionLog


@attrs.define
class ModelBatch:
    base: int
    timestamps: list[int]
    size: int


class PartitionLogMachine(RuleBasedStateMachine):
    @initialize(retention=st.sampled_from([-1, -1, 0, 200, 600, 2_000]),
                retention_ms=st.sampled_from([-1, 0, 20, 40]))
    def start(self, retention, retention_ms):
        self.retention = retention
        self.retention_ms = retention_ms
        self.log = PartitionLog(config=LogConfig(retention_bytes=retention, retention_ms=retention_ms),
                                leader_epoch=1)
        self.batches: list[ModelBatch] = []
        self.log_start = 0
        self.hwm = 0

    @rule(
        timestamps=st.lists(st.integers(0, 50), min_size=1, max_size=6),
        value_size=st.integers(0, 120),
    )
    def append(self, timestamps, value_size):
        batch = make_batch(len(timestamps), timestamps=timestamps, value_size=value_size)
        result = self.log.append(batch, now_ms=0)
        assert result.base_offset == self.hwm
        self.batches.append(ModelBatch(self.hwm, timestamps, len(batch)))
        self.hwm += len(timestamps)
        assert result.log_start_offset == self.log_start

    @rule(now=st.integers(0, 120))
    def retention_check(self, now):
        # Kafka's rules, segment by segment (UnifiedLog.deleteRetentionMsBreachedSegments and
        # deleteRetentionSizeBreachedSegments), with one batch per segment
        before = len(self.batches)
        if self.retention_ms >= 0:
            while self.batches and now - max(self.batches[0].timestamps) > self.retention_ms:
                self.batches.pop(0)
        if self.retention >= 0:
            diff = sum(b.size for b in self.batches) - self.retention
            while self.batches and diff - self.batches[0].size >= 0:
                diff -= self.batches.pop(0).size
        if len(self.batches) < before:
            self.log_start = max(self.log_start, self.batches[0].base if self.batches else self.hwm)
        assert self.log.delete_old_batches(now) == before - len(self.batches)
        assert self.log.log_start_offset == self.log_start

    @rule(data=st.data())
    def delete_records(self, data):
        offset = data.draw(st.integers(-3, self.hwm + 2))
        if offset < -1 or offset > self.hwm:
            with raises_code(ErrorCode.OFFSET_OUT_OF_RANGE):
                self.log.delete_records(offset)
            return
        target = self.hwm if offset == -1 else offset
        self.log_start = max(self.log_start, target)
        self.batches = [b for b in self.batches if b.base + len(b.timestamps) > self.log_start]
        assert self.log.delete_records(offset) == self.log_start

    @rule(data=st.data(), max_bytes=st.integers(0, 1_500), min_one=st.booleans())
    def read(self, data, max_bytes, min_one):
        offset = data.draw(st.integers(self.log_start - 2, self.hwm + 2))
        if offset < self.log_start or offset > self.hwm:
            with raises_code(ErrorCode.OFFSET_OUT_OF_RANGE):
                self.log.read(offset, max_bytes, min_one=min_one)
            return
        batches, size, hwm = self.log.read_sized(offset, max_bytes, min_one=min_one)
        assert (batches, hwm) == self.log.read(offset, max_bytes, min_one=min_one)
        assert size == sum(map(len, batches))  # Fetch's length prefix, from the position column
        assert hwm == self.hwm
        expected = []
        if offset < self.hwm:
            start = next(i for i, b in enumerate(self.batches) if b.base + len(b.timestamps) > offset)
            used = 0
            for b in self.batches[start:]:
                if used + b.size > max_bytes and (expected or not min_one):
                    break
                expected.append(b.base)
                used += b.size
        assert [parse_header(b).base_offset for b in batches] == expected
        assert all(crc_is_valid(b) for b in batches)

    def _records(self):
        for b in self.batches:
            for i, ts in enumerate(b.timestamps):
                yield b.base + i, ts

    @rule(wanted=st.integers(-1, 55))
    def offset_for_timestamp(self, wanted):
        if wanted == -1:
            return
        got = self.log.offset_for_timestamp(wanted)
        match = next(
            ((o, ts) for o, ts in self._records() if ts >= wanted and o >= self.log_start), None
        )
        if match is None:
            assert got == NOT_FOUND
        else:
            assert (got.offset, got.timestamp, got.leader_epoch) == (match[0], match[1], 1)

    @precondition(lambda self: self.batches)
    @rule()
    def max_timestamp(self):
        largest = max(ts for _, ts in self._records())
        offset = next(o for o, ts in self._records() if ts == largest)
        assert self.log.offset_for_timestamp(MAX_TIMESTAMP) == (largest, offset, 1)

    @invariant()
    def offsets_and_size_agree(self):
        assert self.log.high_watermark == self.hwm
        assert self.log.log_start_offset == self.log_start
        assert self.log.batch_count == len(self.batches)
        assert self.log.size_bytes == sum(b.size for b in self.batches)


PartitionLogMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=60, deadline=None)
test_partition_log_matches_model = PartitionLogMachine.TestCase
