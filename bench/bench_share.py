"""Share-group delivery benchmark (issue 36): ShareFetch + acknowledge throughput against plain
Fetch, memory per in-flight record, and the cost of a lock-expiry sweep.

Run with ``.venv/bin/python bench/bench_share.py [--records N]``. Not a test: it prints tables
and always exits 0.

1. Throughput, one emulator, one topic of ONE partition holding N records (100-record batches):
   a plain confluent-kafka ``Consumer`` (assign + Fetch) reads them all once; then 1, 4 and 16
   ``ShareConsumer``s (implicit acknowledgement: each poll accepts the previous one's records,
   piggy-backed on the next ShareFetch) of a fresh share group (share.auto.offset.reset=earliest)
   share the partition until every record was delivered, each consumer in its own thread. Wall
   time from the first poll to the last record, and records/s.
2. Pure state (no server): a SharePartition with 100k records acquired, in locks of 100
   records (one ShareFetch of max 100 records each, as a consumer takes them) and in one lock;
   tracemalloc's bytes per in-flight record; the time of ``expire(now)`` releasing all of them,
   and of a sweep that finds nothing due.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, Producer, ShareConsumer, TopicPartition  # noqa: E402
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry,  # noqa: E402
                                   ConfigResource, ResourceType)

from kafka_emu.coordinator.share.partition_state import (DeliveryConfig, LogBatch,  # noqa: E402
                                                         SharePartition)
from kafka_emu.testing import make_config, run_in_thread  # noqa: E402


def produce(bootstrap: str, n: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.num.messages": 100})
    for i in range(n):
        p.produce("t", value=b"x" * 100, partition=0)
        if i % 100 == 99:
            p.flush(30)
    p.flush(30)


def plain_fetch(bootstrap: str, n: int) -> float:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "plain", "enable.auto.commit": False})
    c.assign([TopicPartition("t", 0, 0)])
    got = 0
    start = time.perf_counter()
    while got < n:
        got += sum(1 for m in c.consume(500, 1.0) if m.error() is None)
    took = time.perf_counter() - start
    c.close()
    return took


def earliest(bootstrap: str, group: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest",
                    incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


def share_fetch(bootstrap: str, n: int, consumers: int) -> tuple[float, list[int]]:
    group = f"share-{consumers}"
    earliest(bootstrap, group)
    counts = [0] * consumers
    lock = threading.Lock()
    total = [0]
    first = [None]
    done = threading.Event()

    def run(i: int) -> None:
        c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
        c.subscribe(["t"])
        while not done.is_set():
            got = sum(1 for m in c.poll(0.2) if m.error() is None)
            if got:
                with lock:
                    if first[0] is None:
                        first[0] = time.perf_counter()
                    counts[i] += got
                    total[0] += got
                    if total[0] >= n:
                        first.append(time.perf_counter())
                        done.set()
        c.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(consumers)]
    for t in threads:
        t.start()
    done.wait(600)
    for t in threads:
        t.join(60)
    return first[-1] - first[0], counts


def pure_sweep(records: int = 100_000, per_lock: int = 100) -> dict:
    config = DeliveryConfig(auto_offset_reset="earliest", max_record_locks=records * 2)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    sp = SharePartition(config)
    batches = [LogBatch(b, b + per_lock - 1) for b in range(0, records, per_lock)]
    for i, b in enumerate(batches):
        sp.acquire(f"m{i % 16}", [b], log_start=0, log_limit=records, max_records=per_lock,
                   now_ms=0)
    per_record = (tracemalloc.get_traced_memory()[0] - before) / records
    tracemalloc.stop()
    start = time.perf_counter()
    assert sp.expire(1) == []  # nothing due: the sweep looks at the earliest lock only
    idle = time.perf_counter() - start
    start = time.perf_counter()
    events = sp.expire(config.record_lock_duration_ms)
    sweep = time.perf_counter() - start
    assert sum(e.last_offset - e.first_offset + 1 for e in events) == records
    return {"locks": len(batches), "bytes_per_record": per_record, "idle_s": idle,
            "sweep_s": sweep}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20_000)
    args = parser.parse_args()
    n = args.records
    print(f"share-group delivery, {n} records of 100 bytes on one partition")
    with run_in_thread(make_config(topics={"t": 1})) as emu:
        bootstrap = emu.bootstrap_servers
        produce(bootstrap, n)
        took = plain_fetch(bootstrap, n)
        print(f"{'consumers':>22} {'seconds':>8} {'records/s':>10}  per consumer")
        print(f"{'plain Fetch x1':>22} {took:8.2f} {n / took:10.0f}")
        for k in (1, 4, 16):
            took, counts = share_fetch(bootstrap, n, k)
            spread = (f"min {min(counts)} median {statistics.median(counts):.0f} "
                      f"max {max(counts)}")
            print(f"{'ShareFetch+ack x' + str(k):>22} {took:8.2f} {n / took:10.0f}  {spread}")
    print()
    print("lock-expiry sweep, pure SharePartition, 100k records in flight")
    for per_lock in (100, 100_000):
        r = pure_sweep(per_lock=per_lock)
        print(f"  {r['locks']:>6} lock(s): {r['bytes_per_record']:6.0f} B/record in flight, "
              f"nothing-due sweep {r['idle_s'] * 1e6:6.1f} us, "
              f"releasing all {r['sweep_s'] * 1e3:7.1f} ms "
              f"({r['sweep_s'] / 100_000 * 1e9:.0f} ns/record)")


if __name__ == "__main__":
    main()
