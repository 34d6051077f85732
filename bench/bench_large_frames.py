"""Large Produce frames: server CPU per request, A/B between two checkouts (issue 40, item 1).

A producer with linger.ms=5 sends ~4500-record requests (~500 KB frames). This sends such a
pre-encoded Produce v9 frame (RECORDS records of VALUE_SIZE bytes, one partition, acks=1, no
producer id, so the same frame can go again) one request in flight on one connection, and reads
each server's CPU time (/proc) around every round: rounds of the checkouts interleaved, medians
printed, with the ratio of each checkout to the first. Also a real confluent-kafka producer
(linger.ms=5) in the same interleaving with ``--producer``.

    python bench/bench_large_frames.py --emu-dir A --emu-dir B [--rounds 9] [--per-round 20]
                                       [--records 4500] [--producer]

Not a test: prints and exits 0.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_wire import Server, request  # noqa: E402

from kafka_emu.log.records import Record, build_batch  # noqa: E402
from kafka_emu.protocol import BY_NAME  # noqa: E402
from kafka_emu.protocol.messages.produce import PartitionProduceData, TopicProduceData  # noqa: E402

PRODUCE = BY_NAME["Produce"]
TOPIC, VALUE_SIZE = "big", 100


def _server(root: str) -> Server:
    env_root = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = root + (os.pathsep + env_root if env_root else "")
    cwd = os.getcwd()
    os.chdir(root)  # ``-m`` puts the working directory first on sys.path
    try:
        return Server(f"emu@{root}", [sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                                      "--log-level", "ERROR", "--topic", f"{TOPIC}:1",
                                      "-c", "emu.timeline.max.events=0",
                                      "-c", "log.retention.bytes=50000000",
                                      "-c", "connections.max.idle.ms=3600000"])
    finally:
        os.chdir(cwd)
        if env_root is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = env_root


def _frame(records: int) -> bytes:
    batch = build_batch([Record(key=None, value=b"v" * VALUE_SIZE,
                                timestamp_ms=1_700_000_000_000 + i) for i in range(records)])
    return request(PRODUCE, 9, PRODUCE.request(
        transactional_id=None, acks=1, timeout_ms=30_000, topic_data=[TopicProduceData(
            name=TOPIC, partition_data=[PartitionProduceData(index=0, records=batch)])]))


def _recv_frame(sock: socket.socket) -> bytes:
    def exact(n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            got = sock.recv(n - len(buf))
            if not got:
                raise ConnectionError("server closed the connection")
            buf += got
        return bytes(buf)
    (size,) = struct.unpack(">i", exact(4))
    return exact(size)


def _raw_round(server: Server, sock: socket.socket, frame: bytes, n: int) -> float:
    """µs of server CPU per request over ``n`` requests, one in flight."""
    before = server.cpu_ns()
    for _ in range(n):
        sock.sendall(frame)
        _recv_frame(sock)
    server.settle(2.0)
    return (server.cpu_ns() - before) / n / 1000


def _producer_round(server: Server, n_messages: int) -> float:
    """µs of server CPU per 1000 records produced by confluent-kafka (linger.ms=5)."""
    from confluent_kafka import Producer
    host, port = server.address
    producer = Producer({"bootstrap.servers": f"{host}:{port}", "linger.ms": 5, "acks": 1,
                         "compression.type": "none", "enable.idempotence": False})
    producer.produce(TOPIC, b"w")
    producer.flush(30)
    server.settle(2.0)
    before = server.cpu_ns()
    value = b"v" * VALUE_SIZE
    for _ in range(n_messages):
        while True:
            try:
                producer.produce(TOPIC, value, partition=0)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(60)
    server.settle(2.0)
    return (server.cpu_ns() - before) / n_messages * 1000 / 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--emu-dir", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--per-round", type=int, default=20)
    parser.add_argument("--records", type=int, default=4500)
    parser.add_argument("--producer", action="store_true")
    parser.add_argument("--messages", type=int, default=100_000)
    args = parser.parse_args()
    roots = [os.path.abspath(d) for d in args.emu_dir] or [os.path.dirname(HERE)]
    frame = _frame(args.records)
    servers = [_server(root) for root in roots]
    try:
        socks = []
        for server in servers:
            sock = socket.create_connection(server.address, timeout=30)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(frame)  # warm
            _recv_frame(sock)
            socks.append(sock)
        raw: list[list[float]] = [[] for _ in servers]
        prod: list[list[float]] = [[] for _ in servers]
        for r in range(args.rounds):
            order = list(range(len(servers)))
            if r % 2:
                order.reverse()
            for i in order:
                raw[i].append(_raw_round(servers[i], socks[i], frame, args.per_round))
                if args.producer:
                    prod[i].append(_producer_round(servers[i], args.messages))
        print(f"Produce frame of {len(frame)} bytes ({args.records} records), one in flight; "
              f"{args.rounds} rounds x {args.per_round} requests, medians")
        base = statistics.median(raw[0])
        for server, xs in zip(servers, raw):
            med = statistics.median(xs)
            print(f"  {server.name:40s} raw frame: {med:8.1f} µs CPU/request  "
                  f"(x{med / base:.2f})  rounds {[round(x) for x in xs]}")
        if args.producer:
            base = statistics.median(prod[0])
            for server, xs in zip(servers, prod):
                med = statistics.median(xs)
                print(f"  {server.name:40s} producer linger.ms=5: {med:8.1f} µs CPU/1000 records "
                      f"(x{med / base:.2f})  rounds {[round(x) for x in xs]}")
        for sock in socks:
            sock.close()
    finally:
        for server in servers:
            server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
