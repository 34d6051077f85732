"""The Produce and Fetch request path in process, counted in machine instructions: one request
frame through ``dispatch.handle_frame`` to its response frame, no socket and no trio scheduling
(issue 40, item 1).

``callgrind_produce.py`` and ``callgrind_fetch.py`` count a whole server over real sockets, and
what they count moves with timing: a read that finds the next request already there is cheaper
than a wait for it, and which one happens depends on how fast the client answers a server slowed
fifty times by valgrind (the same tree's 1p-all cell measured 129.8k and 149.0k per request in
two runs). This drives ``handle_frame`` itself, a request at a time, on a broker in this process:
the codec, the handler, the log and the encoding, and nothing else, so an A/B of a change to them
is exact. Each shape runs in a child under callgrind, counting only inside the measured loop
(``--toggle-collect`` on the loop's ``functools.reduce``), with PYTHONHASHSEED=0.

Shapes (Produce v9, Fetch v11, as the socket harnesses send):

* ``produce1`` / ``produce16``: 5 records of 100 B to 1 / 16 partitions, acks=1;
* ``fetch1`` / ``fetch16``: from offset 0 of 1 / 16 partitions, each holding two batches of 200
  records of 100 B, ``partition_max_bytes`` one batch.

    python bench/callgrind_handle_frame.py [--shapes produce1,fetch16] [--emu-dir DIR]
    python bench/callgrind_handle_frame.py --bytecodes produce1   # where the bytecodes go

``--bytecodes`` runs without valgrind and prints bytecodes per request by function (sys.settrace
with opcode events): a proxy, as a bytecode costs 10-70 instructions, but it names Python
functions, which callgrind cannot. Not a test: prints and exits 0.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile

from _callgrind import count_bytecodes, instructions

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = {"produce1": 1000, "produce16": 300, "fetch1": 1000, "fetch16": 300}  # -> requests
WARM = 200


def _child(shape: str, count: int, bytecodes: bool) -> None:
    """Runs in the measured process: build the broker, warm up, then ``count`` requests."""
    import trio

    sys.path.insert(0, HERE)
    from bench_wire import request

    from kafka_emu.broker import dispatch
    from kafka_emu.broker.config import BrokerConfig
    from kafka_emu.broker.context import ConnectionInfo
    from kafka_emu.broker.state import Broker
    from kafka_emu.log.records import Record, build_batch
    from kafka_emu.protocol.messages import fetch as fetch_api
    from kafka_emu.protocol.messages import produce as produce_api

    class Conn:  # what handle_frame reads of a connection
        id, peer, auth = 1, "127.0.0.1:1", None

    def produce_frame(topic: str, partitions: range, batch: bytes) -> bytes:
        return request(produce_api.API, 9, produce_api.ProduceRequest(
            transactional_id=None, acks=1, timeout_ms=30_000, topic_data=[
                produce_api.TopicProduceData(name=topic, partition_data=[
                    produce_api.PartitionProduceData(index=i, records=batch)
                    for i in partitions])]))[4:]

    def fetch_frame(topic: str, partitions: range, limit: int) -> bytes:
        return request(fetch_api.API, 11, fetch_api.FetchRequest(
            max_wait_ms=500, min_bytes=1, max_bytes=50 << 20, isolation_level=0, session_id=0,
            session_epoch=-1, topics=[fetch_api.FetchTopic(topic=topic, partitions=[
                fetch_api.FetchPartition(partition=p, fetch_offset=0, partition_max_bytes=limit)
                for p in partitions])], forgotten_topics_data=[], rack_id=""))[4:]

    async def main() -> None:
        broker = Broker(BrokerConfig.from_kafka({"emu.timeline.max.events": "0"}))
        info, conn = ConnectionInfo("127.0.0.1", 1, "127.0.0.1", 9092), Conn()

        def handle(frame: bytes):
            # handle_frame awaits nothing on these paths: one send runs it to its end
            coroutine = dispatch.handle_frame(broker, conn, info, frame)  # type: ignore[arg-type]
            try:
                coroutine.send(None)
            except StopIteration as stop:
                return stop.value
            raise RuntimeError(f"{shape}: handle_frame waited")

        partitions = range(16 if shape.endswith("16") else 1)
        broker.topics.create("bench", len(partitions))
        if shape.startswith("produce"):
            frame = produce_frame("bench", partitions, build_batch(
                [Record(value=b"v" * 100, timestamp_ms=1_700_000_000_000 + i) for i in range(5)]))
        else:
            big = build_batch([Record(value=b"v" * 100)] * 200)
            for p in partitions:
                for _ in range(2):
                    handle(produce_frame("bench", range(p, p + 1), big))
            frame = fetch_frame("bench", partitions, len(big))
        for _ in range(WARM):
            if handle(frame) is None:
                raise RuntimeError(f"{shape}: no response")
        if bytecodes:
            def run() -> None:
                for _ in range(count):
                    handle(frame)
            count_bytecodes(shape, run, count, 25,
                            ignore=(__file__.split("kafka_emu/")[-1], "run"))
        else:
            functools.reduce(lambda acc, _: (handle(frame), acc)[1], range(count), 0)

    trio.run(main)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--emu-dir", action="append", default=[],
                        help="another checkout whose kafka_emu is measured too (repeatable)")
    parser.add_argument("--bytecodes", metavar="SHAPE")
    parser.add_argument("--child", metavar="SHAPE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child or args.bytecodes:
        shape = args.child or args.bytecodes
        _child(shape, SHAPES[shape], bytecodes=bool(args.bytecodes))
        return 0
    roots = [("kafka-emu", os.path.dirname(HERE))] + [
        (os.path.basename(d.rstrip("/")), os.path.abspath(d)) for d in args.emu_dir]
    print("== instructions per request in process (handle_frame, callgrind, "
          "PYTHONHASHSEED=0)")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            figures = [(name, instructions(__file__, shape, root, tmp, SHAPES[shape]))
                       for name, root in roots]
            first = figures[0][1]
            print(f"  {shape:<10} " + "   ".join(
                f"{name} {n / 1e3:7.1f}k" + (f" ({n / first:.3f}x)" if i else "")
                for i, (name, n) in enumerate(figures)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
