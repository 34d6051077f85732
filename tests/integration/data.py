"""Message fixtures shared by the data-path tests: deterministic keys, headers and timestamps,
and the checks that a consumed stream carries them intact and in order per partition."""

from __future__ import annotations

import time
from collections import defaultdict

COUNT = 1000
PARTITIONS = 3
COMPRESSIONS = ["none", "gzip", "snappy", "lz4", "zstd"]


def base_timestamp_ms() -> int:
    # a whole second in the recent past: CreateTime, distinct per message below
    return (int(time.time()) - 3600) * 1000


def message(i: int, base_ts: int):
    """(partition, key, value, headers, timestamp_ms) of the i-th test message."""
    return (i % PARTITIONS, f"key-{i}".encode(), f"value-{i}".encode() * 3,
            [("seq", str(i).encode()), ("kind", b"test")], base_ts + i)


def check_stream(records, base_ts: int, count: int = COUNT) -> None:
    """records: (partition, offset, key, value, headers, timestamp_ms) in consumption order."""
    assert len(records) == count, f"consumed {len(records)} of {count}"
    by_partition: dict[int, list] = defaultdict(list)
    for r in records:
        by_partition[r[0]].append(r)
    seen = set()
    for partition, rs in by_partition.items():
        offsets = [r[1] for r in rs]
        assert offsets == list(range(len(rs))), f"partition {partition} offsets {offsets[:10]}..."
        seqs = []
        for _p, _o, key, value, headers, ts in rs:
            i = int(key.decode().split("-")[1])
            seqs.append(i)
            exp_partition, exp_key, exp_value, exp_headers, exp_ts = message(i, base_ts)
            assert (partition, key, value) == (exp_partition, exp_key, exp_value)
            assert [(k, bytes(v)) for k, v in headers] == exp_headers, headers
            assert ts == exp_ts, (i, ts, exp_ts)
            seen.add(i)
        assert seqs == sorted(seqs), f"partition {partition} out of order"
    assert seen == set(range(count))
