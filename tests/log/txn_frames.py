"""Hand-built magic-2 batches for the transaction tests: struct.pack and kafka-python's CRC-32C,
independent of kafka_emu.log.records (so the log is checked against another encoder)."""

from __future__ import annotations

import struct

from kafka.record.default_records import DefaultRecordBatch
from kafka.record.util import calc_crc32c, encode_varint

TRANSACTIONAL = 0x10
CONTROL = 0x20


def _varint(value: int) -> bytes:
    out = bytearray()
    encode_varint(value, out.append)
    return bytes(out)


def _bytes_field(data: bytes | None) -> bytes:
    return _varint(-1) if data is None else _varint(len(data)) + data


def raw_batch(values: list[bytes], *, pid: int = -1, epoch: int = -1, seq: int = -1,
              transactional: bool = False, timestamp_ms: int = 1_000) -> bytes:
    """One uncompressed batch of records with these values (keys k0, k1, ...)."""
    body = b""
    for i, value in enumerate(values):
        record = (b"\x00" + _varint(0) + _varint(i) + _bytes_field(b"k%d" % i)
                  + _bytes_field(value) + _varint(0))
        body += _varint(len(record)) + record
    attributes = TRANSACTIONAL if transactional else 0
    after_crc = struct.pack(">hiqqqhii", attributes, len(values) - 1, timestamp_ms, timestamp_ms,
                            pid, epoch, seq, len(values))
    crc = calc_crc32c(memoryview(after_crc + body))
    length = 4 + 1 + 4 + len(after_crc) + len(body)  # leader epoch, magic, crc, rest
    return struct.pack(">qiibI", 0, length, -1, 2, crc) + after_crc + body


def read_batches(blob: bytes) -> list[DefaultRecordBatch]:
    """kafka-python's reader over a stored log or a fetched records blob."""
    out, pos = [], 0
    while pos + 12 <= len(blob):
        length = struct.unpack_from(">i", blob, pos + 8)[0]
        out.append(DefaultRecordBatch(bytes(blob[pos:pos + 12 + length])))
        pos += 12 + length
    return out
