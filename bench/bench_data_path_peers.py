"""The data path and the cluster against the peers (issue 40 item 1): server CPU per request and
per record, side by side in one run.

Run with ``make bench`` (or ``.venv/bin/python bench/bench_data_path_peers.py``). Not a test: it
prints a table and ratios, and always exits 0; a missed target is printed as "target missed".

Peers at hand. The issue measures against franz-go's kfake and librdkafka's mock cluster; kfake
cannot be built on this machine (Debian's Go 1.19 is older than kfake needs, and the Go module
proxy is unreachable), so the peer here is librdkafka's mock cluster (C, one thread serving every
mock broker, run in a process of its own through bench/_mock_cluster.py, 1 and 3 brokers). Each
server is its own process; its CPU is its threads' run time from /proc (bench/_proc_cpu.py), so
the clients' CPU in this process is not counted. Requests are counted by the clients themselves
(librdkafka's statistics: each broker's ``req`` counters), so the same counts exist for every
server.

1. ``data``: confluent-kafka producers and consumers against ``kafka-emu serve`` (defaults: the
   timeline on) and the 1-broker mock, records of VALUE_SIZE bytes:
   - produce, linger.ms=5: one partition from one connection, and 16 partitions from four
     connections (four producers), each with acks=1 and acks=all;
   - fetch from the start: one partition by one consumer, 16 partitions by four consumers;
   - long-poll: four consumers caught up on 16 empty partitions (fetch.wait.max.ms=500), while a
     producer sends one record per request (linger.ms=0), paced; each record wakes a waiting
     Fetch. CPU per record covers its Produce and the Fetches it wakes. Not like for like: the
     mock's waiting Fetch is never woken by a Produce (it answers after max_wait_ms with what
     it had when the request came -- bench/callgrind_fetch.py shows it), so against the mock
     each consumer costs one Fetch per 500 ms whatever the records, while kafka-emu, as Kafka,
     answers one Fetch per record here. callgrind_fetch.py's ``pingpong`` is the like-for-like
     figure (a Produce, then a Fetch that finds its record, on both servers).
   Printed: µs of server CPU per request and per record, and kafka-emu / mock per record.
2. ``etl``: a TestGroupETL-like consume-transform-produce loop (franz-go's kgo TestGroupETL: a
   producer fills one topic, consumer groups read it and write the next). Here: a producer writes
   RECORDS small records to an input topic of 8 partitions while a group of three
   confluent-kafka consumers (subscribe, auto commit) reads it and produces each record,
   transformed, to an output topic of 8 partitions; the run ends when every output record is
   acknowledged. Producers as franz-go's defaults: linger.ms=0, idempotent (ETL_PRODUCER). Through ``serve --brokers 3``, ``serve --brokers 1`` and the mock with 3 (and 1)
   brokers, rounds interleaved; per server the medians of wall time and server CPU, CPU per
   record and per request, and the requests per API the clients sent.
Target (issue 40): kafka-emu within 1.5x the peer's CPU, for the data path and the 3-broker loop.

Keep the cells at their size (``--records``, 20,000 by default: about 2 MB a partition). The mock
keeps at most 5 MiB or 100,000 message sets per partition and deletes the oldest beyond that
(librdkafka's rdkafka_mock.c): past it, its memory is reused where kafka-emu, as Kafka, keeps
every record and pays the kernel for each fresh page (at 400,000 records to one partition,
about 220 page faults per 800 KB Produce against the mock's 70). A consumer reading from the
start there gets what the mock kept, not what was produced.

    python bench/bench_data_path_peers.py [--only data|etl] [--records N] [--rounds R] [--quick]
                                          [--baseline DIR]  # A/B: DIR/kafka_emu as well
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _proc_cpu import cpu_ns  # noqa: E402

TARGET = 1.5
VALUE_SIZE = 100
LIMIT_S = 120.0
HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = "kafka-emu@base"
BASELINE_DIR: list[str] = []  # set by --baseline: a directory holding another kafka_emu/

MOCK_SERVER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from _mock_cluster import MockCluster
mock = MockCluster(brokers=int(sys.argv[2]), initial_rebalance_delay_ms=0)
for spec in sys.argv[3:]:
    name, _, n = spec.partition(":")
    mock.create_topic(name, int(n))
print(mock.bootstrap_servers, flush=True)
sys.stdin.read()   # until the driver closes our stdin
mock.close()
"""


class Server:
    """A server process (kafka-emu serve or the mock): bootstrap list and CPU time."""

    def __init__(self, kind: str, brokers: int, topics: dict[str, int],
                 extra: tuple[str, ...] = ()) -> None:
        self.name = f"{kind} x{brokers}"
        cwd, env = None, None
        if kind == BASELINE:  # another checkout's kafka_emu, for A/B runs (--baseline DIR)
            cwd, env = BASELINE_DIR[0], {**os.environ, "PYTHONPATH": BASELINE_DIR[0]}
        if kind == "mock":
            args = [sys.executable, "-c", MOCK_SERVER, HERE, str(brokers),
                    *(f"{t}:{n}" for t, n in topics.items())]
        else:
            args = [sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                    "--log-level", "WARNING", "--brokers", str(brokers), *extra,
                    *(a for t, n in topics.items() for a in ("--topic", f"{t}:{n}"))]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, cwd=cwd, env=env)
        self.bootstrap = self.proc.stdout.readline().strip()
        if not self.bootstrap:
            raise RuntimeError(f"{self.name} did not start")

    def cpu_ns(self) -> int:
        return cpu_ns(self.proc.pid)

    def settle(self, limit_s: float = 20.0) -> None:
        """Wait until the server is idle (under 3 ms of CPU in 0.5 s): kafka-emu loads what a
        group and the data path need in the background after its listener opens, one step
        after each 20 ms of idle (broker/warm.py). A shorter window (0.1 s, as before) could
        fall on a run of steps that cost nothing and let the rest of the loading run inside
        the first cells' windows: about 1 s of steps, one every 20-30 ms."""
        deadline = time.monotonic() + limit_s
        before = self.cpu_ns()
        while time.monotonic() < deadline:
            time.sleep(0.5)
            now = self.cpu_ns()
            if now - before < 3_000_000:
                return
            before = now

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.proc.stdin.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# -- request counts from librdkafka's statistics ------------------------------------------------

class Stats:
    """The latest statistics of one client: requests sent per API, summed over its brokers."""

    def __init__(self) -> None:
        self.emitted = 0
        self.req: dict[str, int] = {}

    def __call__(self, payload: str) -> None:
        totals: dict[str, int] = {}
        for broker in json.loads(payload).get("brokers", {}).values():
            for api, n in broker.get("req", {}).items():
                if n:
                    totals[api] = totals.get(api, 0) + n
        self.req = totals
        self.emitted += 1


def _conf(bootstrap: str, stats: Stats, interval_ms: int = 100, **extra) -> dict:
    return {"bootstrap.servers": bootstrap, "log_level": 3, "stats_cb": stats,
            "statistics.interval.ms": interval_ms, **extra}


def fresh_counts(clients: list[tuple[object, Stats]]) -> dict[str, int]:
    """Requests sent so far by all these clients, from statistics emitted after this call."""
    marks = [s.emitted for _, s in clients]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if all(s.emitted >= m + 2 for (_, s), m in zip(clients, marks)):
            break
        for client, _ in clients:
            if isinstance(client, Consumer):
                client.consume(num_messages=1, timeout=0.01)  # caught up: nothing to deliver
            else:
                client.poll(0.01)
    totals: dict[str, int] = {}
    for _, s in clients:
        for api, n in s.req.items():
            totals[api] = totals.get(api, 0) + n
    return totals


def _diff(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {api: n - before.get(api, 0) for api, n in after.items() if n - before.get(api, 0)}


# -- data cells ---------------------------------------------------------------------------------

def produce_cell(server: Server, topic: str, partitions: int, conns: int, acks: str,
                 records: int) -> tuple[float, int]:
    """(server CPU ns, Produce requests) to produce ``records`` records, linger.ms=5."""
    clients = []
    for _ in range(conns):
        stats = Stats()
        clients.append((Producer(_conf(server.bootstrap, stats, acks=acks, **{"linger.ms": 5})),
                        stats))
    producers = [c for c, _ in clients]
    for p in producers:  # warm-up: connections, metadata
        for i in range(partitions):
            p.produce(topic, b"w", partition=i)
    for p in producers:
        p.flush(LIMIT_S)
    before = fresh_counts(clients)
    cpu0 = server.cpu_ns()
    value = b"v" * VALUE_SIZE
    for i in range(records):
        p = producers[i % conns]
        while True:
            try:
                p.produce(topic, value, partition=(i // conns) % partitions)
                break
            except BufferError:
                p.poll(0.001)
    for p in producers:
        if p.flush(LIMIT_S):
            raise RuntimeError("produce: records left undelivered")
    cpu = server.cpu_ns() - cpu0
    return cpu, _diff(fresh_counts(clients), before).get("Produce", 0)


def _consumers(server: Server, conns: int, **extra) -> list[tuple[Consumer, Stats]]:
    clients = []
    for _ in range(conns):
        stats = Stats()
        clients.append((Consumer(_conf(server.bootstrap, stats, **{
            "group.id": f"bench-{uuid.uuid4().hex}", "enable.auto.commit": False, **extra})),
            stats))
    return clients


def _drain(clients, wanted: int) -> None:
    got, t0 = 0, time.monotonic()
    while got < wanted:
        if time.monotonic() - t0 > LIMIT_S:
            raise RuntimeError(f"fetched {got}/{wanted}")
        for c, _ in clients:
            for msg in c.consume(num_messages=10000, timeout=0.02):
                if msg.error() is None:
                    got += 1


def fetch_cell(server: Server, topic: str, partitions: int, conns: int,
               stored: int) -> tuple[float, int]:
    """(server CPU ns, Fetch requests) to read the ``stored`` records of ``topic`` from the start."""
    clients = _consumers(server, conns)
    try:
        for c, _ in clients:
            c.list_topics(topic, timeout=10)
        before = fresh_counts(clients)
        cpu0 = server.cpu_ns()
        for k, (c, _) in enumerate(clients):
            c.assign([TopicPartition(topic, i, OFFSET_BEGINNING)
                      for i in range(k, partitions, conns)])
        _drain(clients, stored)
        cpu = server.cpu_ns() - cpu0
        return cpu, _diff(fresh_counts(clients), before).get("Fetch", 0)
    finally:
        for c, _ in clients:
            c.close()


def longpoll_cell(server: Server, topic: str, partitions: int, conns: int,
                  records: int) -> tuple[float, int, int]:
    """(server CPU ns, Produce requests, Fetch requests): one record per Produce, paced, into
    partitions that ``conns`` caught-up consumers long-poll."""
    clients = _consumers(server, conns)
    pstats = Stats()
    producer = Producer(_conf(server.bootstrap, pstats, acks="1", **{"linger.ms": 0}))
    try:
        for i in range(partitions):
            producer.produce(topic, b"w", partition=i)
        producer.flush(LIMIT_S)
        for k, (c, _) in enumerate(clients):
            c.assign([TopicPartition(topic, i, OFFSET_BEGINNING)
                      for i in range(k, partitions, conns)])
        _drain(clients, partitions)
        everyone = [*clients, (producer, pstats)]
        before = fresh_counts(everyone)
        cpu0 = server.cpu_ns()
        value = b"v" * VALUE_SIZE
        for i in range(records):
            producer.produce(topic, value, partition=i % partitions)
            producer.poll(0)
            time.sleep(0.002)  # paced: each record finds the Fetches waiting
        producer.flush(LIMIT_S)
        _drain(clients, records)
        cpu = server.cpu_ns() - cpu0
        counts = _diff(fresh_counts(everyone), before)
        return cpu, counts.get("Produce", 0), counts.get("Fetch", 0)
    finally:
        for c, _ in clients:
            c.close()


def data_round(kind: str, records: int) -> dict[str, tuple[float, float]]:
    """One round of every data cell on a fresh server: cell -> (µs/request, µs/record)."""
    topics = {"p1a": 1, "p1b": 1, "p16a": 16, "p16b": 16, "lp": 16}
    out: dict[str, tuple[float, float]] = {}
    with Server(kind, 1, topics) as server:
        server.settle()
        for acks, (one, many) in (("1", ("p1a", "p16a")), ("all", ("p1b", "p16b"))):
            cpu, n = produce_cell(server, one, 1, 1, acks, records)
            out[f"produce 1 partition, 1 connection, acks={acks}"] = (cpu / 1e3 / max(n, 1),
                                                                      cpu / 1e3 / records)
            cpu, n = produce_cell(server, many, 16, 4, acks, records)
            out[f"produce 16 partitions, 4 connections, acks={acks}"] = (
                cpu / 1e3 / max(n, 1), cpu / 1e3 / records)
        stored = records + 1
        cpu, n = fetch_cell(server, "p1a", 1, 1, stored)
        out["fetch 1 partition, 1 connection"] = (cpu / 1e3 / max(n, 1), cpu / 1e3 / stored)
        stored = records + 16 * 4
        cpu, n = fetch_cell(server, "p16a", 16, 4, stored)
        out["fetch 16 partitions, 4 connections"] = (cpu / 1e3 / max(n, 1), cpu / 1e3 / stored)
        few = max(records // 25, 200)
        cpu, np_, nf = longpoll_cell(server, "lp", 16, 4, few)
        out["long-poll: 4 waiting, 1 record per Produce"] = (cpu / 1e3 / max(np_ + nf, 1),
                                                              cpu / 1e3 / few)
    return out


def print_data(records: int, rounds: int) -> None:
    print(f"== data path: server CPU per request and per record, records of {VALUE_SIZE} B, "
          f"{records:,} per cell, confluent-kafka clients, each server in its own process; "
          f"{rounds} rounds interleaved, medians")
    print("   peer: librdkafka's mock cluster (franz-go's kfake cannot be built here: Go 1.19, "
          "no module proxy)")
    kinds = ("kafka-emu", "mock", *((BASELINE,) if BASELINE_DIR else ()))
    results: dict[str, dict[str, list[tuple[float, float]]]] = {k: {} for k in kinds}
    for _ in range(rounds):
        for kind in kinds:
            try:
                for cell, figures in data_round(kind, records).items():
                    results[kind].setdefault(cell, []).append(figures)
            except RuntimeError as exc:
                print(f"  ({kind}: {exc})")
    print(f"  {'cell':<48} {'kafka-emu µs/req':>16} {'/record':>8} {'mock µs/req':>12} "
          f"{'/record':>8} {'emu/mock':>9}")
    for cell in results["kafka-emu"]:
        ours, peer = results["kafka-emu"][cell], results["mock"].get(cell, [])
        if not ours or not peer:
            continue
        oq, orec = (statistics.median(f[i] for f in ours) for i in (0, 1))
        pq, prec = (statistics.median(f[i] for f in peer) for i in (0, 1))
        ratio = orec / prec
        verdict = "ok" if ratio <= TARGET else "target missed"
        print(f"  {cell:<48} {oq:16.1f} {orec:8.2f} {pq:12.1f} {prec:8.2f} {ratio:8.2f}x "
              f"{verdict}")
    if BASELINE_DIR:
        print(f"  A/B, per record, this checkout / {BASELINE_DIR[0]}: " + ", ".join(
            f"{cell.split(',')[0]}{'' if ',' not in cell else ' ' + cell.split(',', 1)[1].strip()}"
            f" {statistics.median(f[1] for f in results['kafka-emu'][cell]) / statistics.median(f[1] for f in results[BASELINE][cell]):.2f}"
            for cell in results["kafka-emu"] if results[BASELINE].get(cell)))
    print(f"  (long-poll µs/req: per Produce or Fetch request; target: kafka-emu <= {TARGET:g}x "
          "the peer per record)")
    print()


# -- the consume-transform-produce loop ---------------------------------------------------------

ETL_PARTITIONS = 8
ETL_MEMBERS = 3
# franz-go's producer defaults (TestGroupETL's client): no linger, idempotent -- so at most five
# requests in flight per broker, and the records produced meanwhile batch up behind them
# (librdkafka's own default, a million in flight, would make the request count follow the
# server's speed: a faster server, smaller batches, more requests)
ETL_PRODUCER = {"linger.ms": 0, "enable.idempotence": True}


def etl_round(server: Server, records: int) -> tuple[float, float, dict[str, int]]:
    """(wall s, server CPU s, requests per API) of one consume-transform-produce run."""
    body = uuid.uuid4().hex.encode()  # small records, as TestGroupETL's sha bodies
    group = f"etl-{uuid.uuid4().hex[:8]}"
    done = threading.Event()
    failed: list[str] = []
    delivered = [0]
    lock = threading.Lock()
    everyone: list[tuple[object, Stats]] = []

    def on_output(err, msg):
        if err is not None:
            failed.append(str(err))
            return
        with lock:
            delivered[0] += 1
            if delivered[0] >= records:
                done.set()

    def member(index: int) -> None:
        cs, ps = Stats(), Stats()
        consumer = Consumer(_conf(server.bootstrap, cs, 200, **{
            "group.id": group, "auto.offset.reset": "earliest",
            "client.id": f"etl-member-{index}"}))
        producer = Producer(_conf(server.bootstrap, ps, 200, **ETL_PRODUCER))
        with lock:
            everyone.extend([(consumer, cs), (producer, ps)])
        consumer.subscribe(["etl-in"])
        try:
            while not done.is_set() and not failed:
                for msg in consumer.consume(num_messages=1000, timeout=0.1):
                    if msg.error() is not None:
                        continue
                    value = msg.value()
                    while True:
                        try:
                            producer.produce("etl-out", value[::-1], key=msg.key(),
                                             on_delivery=on_output)
                            break
                        except BufferError:
                            producer.poll(0.005)
                producer.poll(0)
            producer.flush(10)
        finally:
            consumer.close()

    ins = Stats()
    feeder = Producer(_conf(server.bootstrap, ins, 200, **ETL_PRODUCER))
    everyone.append((feeder, ins))
    threads = [threading.Thread(target=member, args=(i,), daemon=True)
               for i in range(ETL_MEMBERS)]
    cpu0, t0 = server.cpu_ns(), time.perf_counter()
    for t in threads:
        t.start()
    for i in range(records):
        while True:
            try:
                feeder.produce("etl-in", body, key=str(i).encode())
                break
            except BufferError:
                feeder.poll(0.005)
    feeder.flush(LIMIT_S)
    finished = done.wait(LIMIT_S * 3)
    wall, cpu = time.perf_counter() - t0, (server.cpu_ns() - cpu0) / 1e9
    # final statistics (each client emits every 500 ms; the feeder's is polled here)
    deadline = time.monotonic() + 1.2
    while time.monotonic() < deadline:
        feeder.poll(0.05)
    done.set()
    for t in threads:
        t.join(30)
    if not finished or failed:
        raise RuntimeError(f"etl: {delivered[0]}/{records} delivered, failures {failed[:1]}")
    totals: dict[str, int] = {}
    for _, s in everyone:
        for api, n in s.req.items():
            totals[api] = totals.get(api, 0) + n
    return wall, cpu, totals


ETL_SERVERS = (("kafka-emu", 3), ("kafka-emu", 1), ("mock", 3), ("mock", 1))


def print_etl(records: int, rounds: int) -> None:
    print(f"== consume-transform-produce (TestGroupETL-like): {records:,} records of 32 B into "
          f"'etl-in' ({ETL_PARTITIONS} partitions), a group of {ETL_MEMBERS} confluent-kafka "
          f"consumers writing each to 'etl-out' ({ETL_PARTITIONS} partitions); {rounds} rounds "
          "interleaved, medians")
    print("   peer: librdkafka's mock cluster (franz-go's kfake cannot be built here: Go 1.19, "
          "no module proxy)")
    topics = {"etl-in": ETL_PARTITIONS, "etl-out": ETL_PARTITIONS}
    runs: dict[str, list[tuple[float, float, dict[str, int]]]] = {}
    servers = ETL_SERVERS + (((BASELINE, 3), (BASELINE, 1)) if BASELINE_DIR else ())
    for _ in range(rounds):
        for kind, brokers in servers:
            with Server(kind, brokers, topics) as server:
                server.settle()
                try:
                    runs.setdefault(server.name, []).append(etl_round(server, records))
                except RuntimeError as exc:
                    print(f"  ({server.name}: {exc})")
    apis = ("Produce", "Fetch", "OffsetCommit", "Heartbeat", "Metadata")
    print(f"  {'server':<18} {'wall s':>7} {'CPU s':>7} {'µs/record':>10} {'µs/request':>11} "
          + " ".join(f"{a:>12}" for a in apis) + "  other")
    medians: dict[str, float] = {}
    for name, figures in runs.items():
        wall = statistics.median(f[0] for f in figures)
        cpu = statistics.median(f[1] for f in figures)
        medians[name] = cpu
        counts = {a: statistics.median(f[2].get(a, 0) for f in figures)
                  for a in {a for f in figures for a in f[2]}}
        other = sum(n for a, n in counts.items() if a not in apis)
        requests = sum(counts.values())
        print(f"  {name:<18} {wall:7.1f} {cpu:7.2f} {cpu * 1e6 / records:10.1f} "
              f"{cpu * 1e6 / max(requests, 1):11.1f} "
              + " ".join(f"{counts.get(a, 0):12,.0f}" for a in apis) + f"  {other:,.0f}")
    for ours, peer in (("kafka-emu x3", "mock x3"), ("kafka-emu x1", "mock x1"),
                       ("kafka-emu x3", "kafka-emu x1"), ("kafka-emu x3", f"{BASELINE} x3"),
                       ("kafka-emu x1", f"{BASELINE} x1")):
        if ours in medians and peer in medians:
            ratio = medians[ours] / medians[peer]
            verdict = ("" if peer.startswith("kafka-emu") or ours.startswith("kafka-emu@")
                       else " ok" if ratio <= TARGET else " target missed")
            print(f"  server CPU {ours} / {peer}: {ratio:.2f}x{verdict}")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("data", "etl"))
    parser.add_argument("--records", type=int, default=20_000, help="records per data cell")
    parser.add_argument("--etl-records", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a fifth of the records, 1 round")
    parser.add_argument("--baseline", metavar="DIR",
                        help="also run the kafka_emu package found in DIR (A/B, interleaved)")
    args = parser.parse_args()
    if args.baseline:
        BASELINE_DIR.append(os.path.abspath(args.baseline))
    if args.quick:
        args.records, args.etl_records, args.rounds = (args.records // 5, args.etl_records // 5,
                                                       1)
    if args.only in (None, "data"):
        print_data(args.records, args.rounds)
    if args.only in (None, "etl"):
        print_etl(args.etl_records, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
