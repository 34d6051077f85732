"""Data-path benchmark (issue 5): produce and fetch throughput, and memory per stored message.

Run with ``make bench`` (or ``.venv/bin/python bench/bench_data_path.py``). Not a test: it prints
a table and ratios, and always exits 0; a missed target is printed as "target missed".

Throughput: a confluent-kafka Producer (linger.ms=5, acks=all) sends N 1 KB messages round-robin
to 16 partitions and flushes; a Consumer assigned to all of them from the beginning reads them
all. (16 partitions because librdkafka's mock keeps only the newest ~5 MiB of a partition.)
Connections and metadata are warmed with one message per partition first; the clock covers produce() of the
first timed message to the end of flush(), and assign() to the last message received. Brokers:
* kafka-emu in a thread of this process (``run_in_thread``: what the pytest fixture does, so the
  broker shares the GIL with the benchmark's client loop),
* kafka-emu as a ``kafka-emu serve`` subprocess (its own interpreter, its own GIL),
* the peer: librdkafka's mock cluster (C threads in this process; see _mock_cluster.py).
Target: kafka-emu >= 0.5x the mock for produce and for fetch (both kafka-emu modes printed; the
verdict is on the subprocess, the in-thread figure is for users of the fixture).

Memory: N messages are produced through the broker into an in-process emulator while tracemalloc
traces every allocation; afterwards the traces that are still alive and were allocated with a
``kafka_emu/log/`` frame on the stack are the bytes the partition logs hold. Overhead per message
= (those bytes - stored batch bytes) / N; target < 100 B. Two producer shapes: normal batching
(linger.ms=5) and the worst case of one record per batch (batch.num.messages=1).
bench/bench_log_memory.py measures the bare PartitionLog; this one goes through the broker.

Server CPU per fetched message (issue 14): kafka-emu serve and the mock each in a process of
their own; the same N messages are produced into each, then read back by a confluent-kafka
consumer in this process, and only the server's CPU time during the read is counted (its
threads' run time from /proc, so other load on the machine moves it little). Printed per round
with the median ratio kafka-emu / mock; target <= 2x. Two shapes of stored batches: the
producer's normal batching, and one record per batch (the most per-batch work per message).

    python bench/bench_data_path.py [--only throughput|fetch-cpu|memory] [--messages N]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
import uuid
from contextlib import contextmanager

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from kafka_emu.testing import make_config, run_in_thread

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _mock_cluster import MockCluster  # noqa: E402

TARGET_RATIO = 0.5
TARGET_CPU_RATIO = 2.0  # kafka-emu's server CPU per fetched message <= 2x the mock's
TARGET_OVERHEAD_B = 100
VALUE_SIZE = 1000
LIMIT_S = 60.0  # bound on any one produce or fetch phase
# librdkafka's mock keeps only the newest ~5 MiB of each partition (older message sets are
# dropped), so the messages are spread round-robin over enough partitions to stay below that.
PARTITIONS = 16


class Missed(Exception):
    pass


def _verdict(ok: bool) -> str:
    return "ok" if ok else "target missed"


# -- throughput ---------------------------------------------------------------------------------

def produce(bootstrap: str, topic: str, messages: int, extra: dict | None = None) -> float:
    """Seconds to produce and flush ``messages`` values of VALUE_SIZE bytes (after one warm-up)."""
    failures = []

    def delivered(err, msg):
        if err is not None:
            failures.append(err)

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all",
                         "log_level": 3, **(extra or {})})
    for partition in range(PARTITIONS):  # warm-up: connection, metadata, producer id
        producer.produce(topic, b"w" * VALUE_SIZE, partition=partition, on_delivery=delivered)
    if producer.flush(LIMIT_S) != 0:
        raise Missed("warm-up messages not delivered")
    value = b"v" * VALUE_SIZE
    t0 = time.perf_counter()
    for i in range(messages - PARTITIONS):
        while True:
            try:
                producer.produce(topic, value, partition=i % PARTITIONS, on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.001)
        if time.perf_counter() - t0 > LIMIT_S:
            raise Missed(f"produce took more than {LIMIT_S:.0f} s")
    left = producer.flush(LIMIT_S)
    elapsed = time.perf_counter() - t0
    if left or failures:
        raise Missed(f"{left} undelivered, {len(failures)} failed ({failures[:1]})")
    return elapsed


def fetch(bootstrap: str, topic: str, messages: int) -> float:
    """Seconds for a consumer to read ``messages`` messages of every partition from the start."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "log_level": 3})
    try:
        consumer.list_topics(topic, timeout=10)  # connect and learn metadata before the clock
        t0 = time.perf_counter()
        consumer.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(PARTITIONS)])
        got = 0
        while got < messages:
            if time.perf_counter() - t0 > LIMIT_S:
                raise Missed(f"fetched {got}/{messages} in {LIMIT_S:.0f} s")
            for msg in consumer.consume(num_messages=5000, timeout=0.5):
                if msg.error() is not None:
                    raise Missed(f"fetch error {msg.error()}")
                got += 1
        return time.perf_counter() - t0
    finally:
        consumer.close()


@contextmanager
def cli_emulator(topics: list[str]):
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                             "--log-level", "WARNING",
                             *(arg for t in topics for arg in ("--topic", f"{t}:{PARTITIONS}"))],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline().strip()
        if not line:
            raise RuntimeError("kafka-emu serve exited before printing its address")
        yield line
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def throughput(bootstrap: str, topics: list[str], messages: int) -> tuple[float | str, float | str]:
    """Median produce and fetch seconds over one fresh topic per round."""
    produced, fetched = [], []
    for topic in topics:
        try:
            produced.append(produce(bootstrap, topic, messages))
        except Missed as exc:
            return f"failed: {exc}", "not run"
        try:
            fetched.append(fetch(bootstrap, topic, messages))
        except Missed as exc:
            return statistics.median(produced), f"failed: {exc}"
    return statistics.median(produced), statistics.median(fetched)


# -- server CPU per fetched message ---------------------------------------------------------------

MOCK_SERVER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from _mock_cluster import MockCluster
mock = MockCluster(brokers=1, topics={t: int(sys.argv[2]) for t in sys.argv[3:]})
print(mock.bootstrap_servers.split(",")[0], flush=True)
sys.stdin.read()   # until the driver closes our stdin
mock.close()
"""


def fetch_cpu(messages: int, rounds: int, extra: dict | None = None) -> dict[str, list[float]]:
    """Server CPU µs per fetched message, one figure per round.

    Each server runs in its own process (kafka-emu serve, timeline off; the mock through
    _mock_cluster.py) with one fresh topic per round plus a warm-up topic. A round produces the
    same messages into its topic, then a consumer in this process reads them back, and only the
    read is counted: the server's threads' run time (/proc schedstat) from assign() to the last
    message. The warm-up round is not counted (kafka-emu compiles each API version's codec on
    first use). ``extra``: producer settings (the shape of the stored batches)."""
    from bench_wire import Server
    here = os.path.dirname(os.path.abspath(__file__))
    topics = [f"bench-cpu-{i}" for i in range(rounds + 1)]
    launch = {
        "kafka-emu serve": [sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                            "--log-level", "WARNING", "-c", "emu.timeline.max.events=0",
                            *(a for t in topics for a in ("--topic", f"{t}:{PARTITIONS}"))],
        "librdkafka mock": [sys.executable, "-c", MOCK_SERVER, here, str(PARTITIONS), *topics],
    }
    results: dict[str, list[float]] = {name: [] for name in launch}
    for name, args in launch.items():
        with Server(name, args) as server:
            bootstrap = f"{server.address[0]}:{server.address[1]}"
            for i, topic in enumerate(topics):
                try:
                    produce(bootstrap, topic, messages if i else 1000, extra)
                    cpu0 = server.cpu_ns()
                    fetch(bootstrap, topic, messages if i else 1000)
                    if i:
                        results[name].append((server.cpu_ns() - cpu0) / 1000 / messages)
                except Missed as exc:
                    print(f"  ({name}, {topic}: {exc})")
    return results


# -- memory -------------------------------------------------------------------------------------

def _log_partitions(emu, topic: str):
    return emu._call(lambda: list(emu.broker.topics.catalogue.topic(topic).partitions))


def memory_overhead(messages: int, extra: dict) -> tuple[float, int, int]:
    """(overhead bytes/message, batches stored, stored bytes) for ``messages`` produced."""
    topic = "bench-mem"
    with run_in_thread(make_config(topics={topic: 1})) as emu:
        gc.collect()
        tracemalloc.start(32)
        try:
            producer = Producer({"bootstrap.servers": emu.bootstrap_servers, "linger.ms": 5,
                                 "log_level": 3, **extra})
            value = b"v" * VALUE_SIZE
            for _ in range(messages):
                while True:
                    try:
                        producer.produce(topic, value, partition=0)
                        break
                    except BufferError:
                        producer.poll(0.001)
            if producer.flush(LIMIT_S):
                raise Missed("memory run: messages left undelivered")
            del producer
            gc.collect()
            snapshot = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        logs = _log_partitions(emu, topic)
        stored = sum(log.size_bytes for log in logs)
        batches = sum(log.batch_count for log in logs)
        hwm = sum(log.high_watermark for log in logs)
        if hwm != messages:
            raise Missed(f"memory run stored {hwm}/{messages} messages")
    in_log = snapshot.filter_traces([tracemalloc.Filter(True, "*/kafka_emu/log/*",
                                                        all_frames=True)])
    held = sum(stat.size for stat in in_log.statistics("filename"))
    return (held - stored) / messages, batches, stored


# -- report -------------------------------------------------------------------------------------

def _rates(seconds: float | str, messages: int) -> str:
    if isinstance(seconds, str):
        return f"{seconds}"
    return (f"{messages / seconds:10,.0f} msg/s {messages * VALUE_SIZE / seconds / 1e6:7.1f} MB/s"
            f" ({seconds:6.2f} s)")


def print_fetch_cpu(n: int, rounds: int) -> None:
    print(f"== server CPU per fetched message: messages of {VALUE_SIZE} B produced first, then "
          f"read by a confluent-kafka consumer; each server in its own process; {rounds} rounds")
    shapes = (("linger.ms=5 (normal batching)", n, {}),
              ("batch.num.messages=1 (worst)", min(n, 10_000), {"batch.num.messages": 1}))
    for label, messages, extra in shapes:
        results = fetch_cpu(messages, rounds, extra)
        print(f"  {label}, {messages:,} messages:")
        for name, figures in results.items():
            cells = " ".join(f"{f:5.2f}" for f in figures)
            median = f"{statistics.median(figures):5.2f}" if figures else "  n/a"
            print(f"    {name:<18} µs/message: median {median}   rounds: {cells}")
        ours, peer = results["kafka-emu serve"], results["librdkafka mock"]
        if ours and peer:
            ratio = statistics.median(ours) / statistics.median(peer)
            verdict = _verdict(ratio <= TARGET_CPU_RATIO) if not extra else "(info)"
            print(f"    kafka-emu / mock (lower is better; target <= {TARGET_CPU_RATIO:g}x): "
                  f"{ratio:.2f}x {verdict}")
        else:
            print("    kafka-emu / mock: n/a" + ("" if extra else "  target missed"))
    print()


def print_throughput(n: int, rounds: int) -> None:
    topics = [f"bench-data-{i}" for i in range(rounds)]
    per_topic = {t: PARTITIONS for t in topics}
    results = {}
    with MockCluster(brokers=1, topics=per_topic) as mock:
        results["librdkafka mock (peer)"] = throughput(mock.bootstrap_servers, topics, n)
        version = mock.version
    with cli_emulator(topics) as bootstrap:
        results["kafka-emu serve (subprocess)"] = throughput(bootstrap, topics, n)
    with run_in_thread(make_config(topics=per_topic)) as emu:
        results["kafka-emu run_in_thread"] = throughput(emu.bootstrap_servers, topics, n)

    print(f"== throughput: {n:,} messages of {VALUE_SIZE} B, confluent-kafka "
          f"(librdkafka {version}), linger.ms=5, acks=all, {PARTITIONS} partitions round-robin, median of {rounds} rounds")
    print(f"{'broker':<30} {'produce':<44} fetch")
    for name, (p, f) in results.items():
        print(f"{name:<30} {_rates(p, n):<44} {_rates(f, n)}")
    mock_p, mock_f = results["librdkafka mock (peer)"]
    print(f"ratios (kafka-emu / mock, higher is better; target >= {TARGET_RATIO:g}x):")
    for name in ("kafka-emu serve (subprocess)", "kafka-emu run_in_thread"):
        p, f = results[name]
        cells = []
        for label, ours, peer in (("produce", p, mock_p), ("fetch", f, mock_f)):
            if isinstance(ours, str) or isinstance(peer, str):
                cells.append(f"{label}    n/a   {'target missed' if isinstance(ours, str) else ''}")
                continue
            ratio = peer / ours
            verdict = _verdict(ratio >= TARGET_RATIO) if "subprocess" in name else "(info)"
            cells.append(f"{label} {ratio:5.2f}x {verdict:<13}")
        print(f"  {name:<30} " + "   ".join(cells))
    print()


def print_memory(m: int) -> None:
    print(f"== memory held by partition logs through the broker: {m:,} messages of {VALUE_SIZE} B"
          f" (target < {TARGET_OVERHEAD_B} B/msg overhead)")
    print(f"{'producer shape':<34} {'batches':>8} {'stored MB':>10} {'overhead B/msg':>15}")
    for label, extra in (("linger.ms=5 (normal batching)", {}),
                         ("batch.num.messages=1 (worst)", {"batch.num.messages": 1})):
        try:
            overhead, batches, stored = memory_overhead(m, extra)
        except Missed as exc:
            print(f"{label:<34} failed: {exc}  target missed")
            continue
        print(f"{label:<34} {batches:8d} {stored / 1e6:10.2f} {overhead:15.1f}  "
              f"{_verdict(overhead < TARGET_OVERHEAD_B)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3, help="throughput rounds (median)")
    parser.add_argument("--memory-messages", type=int, default=10_000)
    parser.add_argument("--only", choices=("throughput", "fetch-cpu", "memory"))
    args = parser.parse_args()
    n = args.messages
    if args.only in (None, "throughput"):
        print_throughput(n, args.rounds)
    if args.only in (None, "fetch-cpu"):
        print_fetch_cpu(n, args.rounds)
    if args.only in (None, "memory"):
        print_memory(args.memory_messages)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
