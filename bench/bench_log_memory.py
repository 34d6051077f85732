"""How much memory a PartitionLog spends per stored message beyond the batch bytes themselves.

Run: .venv/bin/python bench/bench_log_memory.py [--messages N]

The input batches are built before tracing starts, so what tracemalloc sees is only what the log
allocates: the stored copy of each batch plus its bookkeeping (bytes object header, list slot,
three array('q') slots, producer state). Overhead = traced bytes - sum(len(batch)), per message.
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

from kafka_emu.log.partition import PartitionLog
from kafka_emu.log.records import Record, build_batch

TARGET_BYTES_PER_MESSAGE = 100


def make_inputs(messages: int, per_batch: int, value_size: int, idempotent: bool) -> list[bytes]:
    value = b"v" * value_size
    inputs = []
    seq = 0
    for start in range(0, messages, per_batch):
        records = [
            Record(key=b"key-%08d" % i, value=value, timestamp_ms=1_700_000_000_000 + i)
            for i in range(start, min(start + per_batch, messages))
        ]
        producer = dict(producer_id=7, producer_epoch=0, base_sequence=seq) if idempotent else {}
        inputs.append(build_batch(records, **producer))
        seq += len(records)
    return inputs


def measure(messages: int, per_batch: int, value_size: int, idempotent: bool) -> tuple[float, int]:
    inputs = make_inputs(messages, per_batch, value_size, idempotent)
    payload = sum(len(b) for b in inputs)
    gc.collect()
    tracemalloc.start()
    log = PartitionLog()
    for now_ms, batch in enumerate(inputs):
        log.append(batch, now_ms)
    gc.collect()
    held, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert log.high_watermark == messages and log.size_bytes == payload
    return (held - payload) / messages, payload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--value-size", type=int, default=1_000)
    args = parser.parse_args()
    print(f"{args.messages} messages of {args.value_size}-byte values (target < {TARGET_BYTES_PER_MESSAGE} B/msg)")
    print(f"{'records/batch':>14} {'idempotent':>10} {'payload MB':>11} {'overhead B/msg':>15}")
    worst = 0.0
    for per_batch in (100, 10, 1):
        for idempotent in (False, True):
            overhead, payload = measure(args.messages, per_batch, args.value_size, idempotent)
            worst = max(worst, overhead)
            print(f"{per_batch:>14} {str(idempotent):>10} {payload / 1e6:>11.1f} {overhead:>15.2f}")
    verdict = "OK" if worst < TARGET_BYTES_PER_MESSAGE else "OVER TARGET"
    print(f"worst overhead {worst:.2f} B/msg: {verdict}")


if __name__ == "__main__":
    main()
