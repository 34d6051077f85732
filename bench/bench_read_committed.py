"""Fetch read_committed against read_uncommitted (issue 35) over a log with 10% aborted batches.

Not a test: it prints a table and ratios measured in one run, and always exits 0.

The log: one partition filled in place (no producer in the measurement) with transactional
batches of RECORDS records from 8 producers at a time -- each round, every producer appends one
batch, then each transaction ends with its COMMIT or ABORT marker (``PartitionLog.append_marker``),
one transaction in ten aborted (a fixed pseudo-random choice) -- so aborted transactions overlap
committed ones and read_committed Fetch responses carry aborted-transaction lists. Every
transaction is closed, so the LSO is the high watermark and both levels return the same batches.

Two figures, each as read_committed / read_uncommitted (1.0 = no cost for isolation):

* own work: the broker's Fetch path for one partition without sockets -- ``read_committed``
  (LSO bound, aborted-transactions lookup, the response's list built) against ``read_sized`` --
  reading the whole log front to back in 1 MiB fetches, process CPU, best of many rounds;
* end to end: a confluent-kafka consumer (isolation.level each way) reading every record from the
  beginning against kafka-emu in a thread of this process (the pytest fixture's mode), wall
  time from assign() to the last expected record (read_committed expects 90%: librdkafka drops
  the aborted ones from the lists it gets), median of interleaved rounds.

    python bench/bench_read_committed.py [--batches N] [--rounds R]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from kafka_emu.log import PartitionLog, Record, build_batch
from kafka_emu.protocol.messages.fetch import AbortedTransaction
from kafka_emu.testing import make_config, run_in_thread

PRODUCERS = 8
RECORDS = 10  # per batch
VALUE = b"v" * 100
ABORT_RATIO = 0.1
MAX_BYTES = 1 << 20
LIMIT_S = 120.0
TOPIC = "bench-rc"


def fill(log: PartitionLog, batches: int, now_ms: int = 0) -> tuple[int, int]:
    """Fill ``log``; return (records written, records of committed transactions)."""
    choose = random.Random(35)
    seqs = [0] * PRODUCERS
    written = committed = 0
    for _ in range(batches // PRODUCERS):
        for pid in range(PRODUCERS):
            log.append(build_batch([Record(value=VALUE, timestamp_ms=now_ms)] * RECORDS,
                                   producer_id=pid, producer_epoch=0, base_sequence=seqs[pid],
                                   transactional=True), now_ms)
            seqs[pid] += RECORDS
            written += RECORDS
        for pid in range(PRODUCERS):
            commit = choose.random() >= ABORT_RATIO
            log.append_marker(producer_id=pid, producer_epoch=0, coordinator_epoch=0,
                              commit=commit, now_ms=now_ms, transaction_version=1)
            committed += RECORDS if commit else 0
    return written, committed


def own_work(log: PartitionLog, rounds: int) -> tuple[float, float, int]:
    """(µs per fetch read_committed, read_uncommitted, fetches per pass), best of ``rounds``."""
    def walk(committed: bool) -> int:
        offset, fetches, end = 0, 0, log.high_watermark
        while offset < end:
            if committed:
                batches, size, _, found = log.read_committed(offset, MAX_BYTES)
                [AbortedTransaction(producer_id=a.producer_id, first_offset=a.first_offset)
                 for a in found]
            else:
                batches, size, _ = log.read_sized(offset, MAX_BYTES)
            offset = _next(batches)
            fetches += 1
        return fetches

    best = {True: float("inf"), False: float("inf")}
    fetches = 0
    for _ in range(rounds):
        for committed in (True, False):
            t0 = time.process_time_ns()
            fetches = walk(committed)
            best[committed] = min(best[committed], (time.process_time_ns() - t0) / 1e3 / fetches)
    return best[True], best[False], fetches


def _next(batches: list[bytes]) -> int:
    """The offset after the last batch (base offset + lastOffsetDelta + 1, from its header)."""
    last = batches[-1]
    base = int.from_bytes(last[0:8], "big")
    return base + int.from_bytes(last[23:27], "big") + 1


def consume(bootstrap: str, isolation: str, want: int) -> float:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex}",
                  "enable.auto.commit": False, "isolation.level": isolation, "log_level": 3})
    try:
        c.list_topics(TOPIC, timeout=10)
        t0 = time.perf_counter()
        c.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])
        got = 0
        while got < want:
            if time.perf_counter() - t0 > LIMIT_S:
                raise RuntimeError(f"{isolation}: {got}/{want} records in {LIMIT_S:.0f} s")
            # never ask for more than is left: consume() waits out its timeout otherwise
            for m in c.consume(num_messages=min(5000, want - got), timeout=0.5):
                if m.error() is None:
                    got += 1
        return time.perf_counter() - t0
    finally:
        c.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    log = PartitionLog()
    written, committed = fill(log, args.batches)
    print(f"log: {log.batch_count} batches ({written} records, {committed} committed, "
          f"{len(log.txns.aborted)} aborted transactions), {log.size_bytes / 1e6:.1f} MB")
    rc, ru, fetches = own_work(log, max(args.rounds * 5, 10))
    print(f"own work, {fetches} fetches of {MAX_BYTES >> 20} MiB per pass (best of rounds):")
    print(f"  read_committed   {rc:9.1f} µs/fetch")
    print(f"  read_uncommitted {ru:9.1f} µs/fetch")
    print(f"  ratio read_committed / read_uncommitted: {rc / ru:.2f}x")

    with run_in_thread(make_config(topics={TOPIC: 1})) as emu:
        def load():
            target = emu.broker.topics.partition(TOPIC, 0)
            fill(target, args.batches)
        emu._run(load)
        times: dict[str, list[float]] = {"read_committed": [], "read_uncommitted": []}
        try:
            for _ in range(args.rounds):
                times["read_committed"].append(consume(emu.bootstrap_servers, "read_committed",
                                                       committed))
                times["read_uncommitted"].append(consume(emu.bootstrap_servers,
                                                         "read_uncommitted", written))
        except RuntimeError as exc:
            print(f"end to end: not measured ({exc})")
            return 0
    rc_s, ru_s = (statistics.median(times[k]) for k in ("read_committed", "read_uncommitted"))
    print(f"end to end, confluent-kafka consumer, median of {args.rounds} (kafka-emu in thread):")
    print(f"  read_committed   {rc_s:7.3f} s  ({committed / rc_s:9.0f} records/s delivered)")
    print(f"  read_uncommitted {ru_s:7.3f} s  ({written / ru_s:9.0f} records/s delivered)")
    print(f"  ratio read_committed / read_uncommitted (time): {rc_s / ru_s:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
