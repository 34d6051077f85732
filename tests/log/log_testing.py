"""Helpers shared by the tests of kafka_emu.log (a uniquely named module, not a conftest)."""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Iterator

import pytest

from kafka_emu.errors import ErrorCode, KafkaError
from kafka_emu.log.batch import with_fresh_crc
from kafka_emu.log.records import Record, build_batch


def make_batch(
    count: int = 1,
    *,
    value_size: int = 10,
    timestamp_ms: int = 1_000,
    timestamps: list[int] | None = None,
    **kwargs: object,
) -> bytes:
    """An uncompressed batch of ``count`` records, timestamps ``timestamp_ms`` + i by default."""
    stamps = timestamps if timestamps is not None else [timestamp_ms + i for i in range(count)]
    records = [
        Record(key=b"k%d" % i, value=bytes([i % 256]) * value_size, timestamp_ms=ts)
        for i, ts in enumerate(stamps)
    ]
    return build_batch(records, **kwargs)  # type: ignore[arg-type]


def idempotent_batch(count: int, *, pid: int, epoch: int, seq: int, timestamp_ms: int = 1_000) -> bytes:
    return make_batch(
        count, producer_id=pid, producer_epoch=epoch, base_sequence=seq, timestamp_ms=timestamp_ms
    )


def patch(batch: bytes, offset: int, fmt: str, value: int, *, fresh_crc: bool = True) -> bytes:
    """``batch`` with one big-endian field overwritten, the CRC recomputed unless told not to."""
    buf = bytearray(batch)
    struct.pack_into(">" + fmt, buf, offset, value)
    return with_fresh_crc(buf) if fresh_crc else bytes(buf)


@contextlib.contextmanager
def raises_code(code: ErrorCode) -> Iterator[pytest.ExceptionInfo[KafkaError]]:
    """``pytest.raises(KafkaError)`` that also checks the wire code."""
    with pytest.raises(KafkaError) as info:
        yield info
    assert info.value.code == code, (info.value.code, str(info.value))
