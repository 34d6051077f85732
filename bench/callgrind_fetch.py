"""The Fetch path counted in machine instructions (issue 40 item 1): the long-poll wake-up and
the many-record Fetch, kafka-emu against librdkafka's mock cluster, under valgrind's callgrind.

``bench_data_path_peers.py`` times the same shapes with real clients by server CPU, which on a
loaded two-core machine swings by a third between runs; instruction counts do not. The driver
speaks the wire itself (bench_wire's Link), Fetch v11 and Produce v7 (both servers take them):

- ``longpoll``: 4 connections each long-poll 4 of 16 partitions at their end (max_wait_ms 5000 by
  default, min_bytes 1); one producer connection sends one 100-byte record per Produce (acks=1) to the
  partitions in turn. Per record: the Produce, the Fetch it wakes, that Fetch's answer and its
  successor parking again. The driver waits ``--park-ms`` after each Fetch it sends so that it
  is parked before the next record arrives (under valgrind a request takes milliseconds).
  The mock cannot run this shape: its parked Fetch is not woken by a Produce (it answers after
  max_wait_ms with what it had when the request came; measured here), so its "long poll" costs
  one Fetch per max_wait_ms per consumer, whatever the records.
- ``pingpong``: the same record by record, with nothing parked -- a Produce of one record, then
  the owning connection's Fetch, which finds it at once. For both servers: the long poll's
  cost less the park and wake-up.
- ``fetch16`` / ``fetch1``: one connection fetches 16 partitions (or 1) from offset 0, again and
  again, each partition holding batches of BATCH 100-byte records and the fetch's
  partition_max_bytes one batch: the mock returns one batch per partition whatever the limit,
  so both servers return the same records; per record returned.

Records are stamped with the time they are produced, as a client stamps CreateTime. Stamped 0
(1970), as they once were, they are past the default retention.ms (7 days), and the server's
retention check -- 30 s after its start (log.initial.task.delay.ms), then every 5 minutes --
deletes them: under valgrind that is inside the run. Every answer is checked (a Produce's error
code; a Fetch's records, and its partitions' errors, high watermarks and log starts when the
records are not the ones expected), so a run that measures error answers stops and says so.

WARM cycles, the counters zeroed, MEASURED cycles, the counters dumped. ``--no-valgrind`` runs
the same load and prints server CPU from /proc instead (quick, noisy).

    python bench/callgrind_fetch.py [--shape longpoll,fetch16,fetch1] [--server emu,mock]
                                    [--baseline DIR] [--measured 300] [--no-valgrind]
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from bench_data_path_peers import MOCK_SERVER  # noqa: E402
from bench_wire import Link, Server, decode, pump, request  # noqa: E402
from callgrind_wire import _control, _quiet, dumped_instructions  # noqa: E402

from kafka_emu.errors import ErrorCode  # noqa: E402
from kafka_emu.log.records import Record, build_batch  # noqa: E402
from kafka_emu.protocol.messages import fetch as fetch_api  # noqa: E402
from kafka_emu.protocol.messages import produce as produce_api  # noqa: E402

FETCH_V, PRODUCE_V = 11, 7
VALUE = b"v" * 100
BATCH = 200
TOPICS = {"lp": 16, "big16": 16, "big1": 1}
MAX_WAIT_MS = [500]  # the long poll's (--max-wait-ms)


def fetch_frame(topic: str, offsets: dict[int, int], max_wait_ms: int = 500,
                limit: int = 1 << 20) -> bytes:
    parts = [fetch_api.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=limit)
             for p, o in offsets.items()]
    body = fetch_api.FetchRequest(max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=50 << 20,
                                  isolation_level=0, session_id=0, session_epoch=-1,
                                  topics=[fetch_api.FetchTopic(topic=topic, partitions=parts)],
                                  forgotten_topics_data=[], rack_id="")
    return request(fetch_api.API, FETCH_V, body)


def produce_frame(topic: str, partition: int, records: int) -> bytes:
    # stamped now: a record stamped long ago is deleted by the server's retention check
    batch = build_batch([Record(value=VALUE, timestamp_ms=int(time.time() * 1000))] * records)
    body = produce_api.ProduceRequest(acks=1, timeout_ms=30000, topic_data=[
        produce_api.TopicProduceData(name=topic, partition_data=[
            produce_api.PartitionProduceData(index=partition, records=batch)])])
    return request(produce_api.API, PRODUCE_V, body)


def records_in(frame: bytes) -> int:
    """Records in a Fetch v11 response: the sum of each stored batch's record count, found by
    walking the batches' headers (offset 57 within a batch: records count)."""
    total, pos = 0, 4 + 4 + 2 + 4  # correlation id, throttle, error, session id
    (topics,) = struct.unpack_from(">i", frame, pos)
    pos += 4
    for _ in range(topics):
        (n,) = struct.unpack_from(">h", frame, pos)
        pos += 2 + n
        (parts,) = struct.unpack_from(">i", frame, pos)
        pos += 4
        for _ in range(parts):
            pos += 4 + 2 + 8 + 8 + 8  # index, error, hwm, lso, log start
            (aborted,) = struct.unpack_from(">i", frame, pos)
            pos += 4 + max(aborted, 0) * 16 + 4  # + preferred read replica
            (size,) = struct.unpack_from(">i", frame, pos)
            pos += 4
            end = pos + max(size, 0)
            while pos + 61 <= end:
                (length,) = struct.unpack_from(">i", frame, pos + 8)
                total += struct.unpack_from(">i", frame, pos + 57)[0]
                pos += 12 + length
            pos = end
    return total


def produce_failures(frame: bytes) -> list[str]:
    """The failed partitions of a Produce v7 response, as text (none: all appended)."""
    answer = decode(produce_api.API, PRODUCE_V, frame)
    return [f"{t.name}-{p.index}: {ErrorCode(p.error_code).name}"
            for t in answer.responses for p in t.partition_responses if p.error_code]


def fetch_report(frame: bytes) -> tuple[bool, str]:
    """Whether a Fetch v11 response has an error, its own or a partition's, and what it says of
    each partition: what to print when its records are not the ones expected."""
    answer = decode(fetch_api.API, FETCH_V, frame)
    parts = [p for t in answer.responses for p in t.partitions]
    return bool(answer.error_code) or any(p.error_code for p in parts), (
        f"error {ErrorCode(answer.error_code).name}; " + "; ".join(
            f"{t.topic}-{p.partition_index}: {ErrorCode(p.error_code).name}, high watermark "
            f"{p.high_watermark}, log start {p.log_start_offset}, "
            f"{len(p.records or b'')} bytes of records"
            for t in answer.responses for p in t.partitions))


def one_call(link: Link, frame: bytes) -> bytes:
    got: list[bytes] = []
    link.send(frame)
    pump([link], lambda _, f: got.append(f), lambda: bool(got), 600)
    return got[0]


class LongPoll:
    def __init__(self, server: Server, park_s: float) -> None:
        self.park_s = park_s
        self.links = [Link(server.address) for _ in range(4)]
        self.producer = Link(server.address)
        self.offsets = [{p: 0 for p in range(k, 16, 4)} for k in range(4)]
        self.sent = 0
        self.timeouts = 0
        for k, link in enumerate(self.links):
            link.tag = k
            link.send(fetch_frame("lp", self.offsets[k], MAX_WAIT_MS[0]))
        pump(self.links, lambda *_: None, lambda: all(not ln.outbuf for ln in self.links), 60)
        time.sleep(park_s * 4)

    def run(self, records: int) -> None:
        for _ in range(records):
            p = self.sent % 16
            self.sent += 1
            owner = self.links[p % 4]
            state = {"produced": False, "fetched": False}

            def on_frame(link: Link, frame: bytes) -> None:
                if link is self.producer:
                    state["produced"] = True
                    return
                got = records_in(frame)
                k = link.tag
                if got == 0:
                    failed, said = fetch_report(frame)
                    if failed:  # not a long poll's timeout
                        raise RuntimeError(f"longpoll: a Fetch failed: {said}")
                    self.timeouts += 1
                else:
                    self.offsets[k][p] += got
                    if link is owner:
                        state["fetched"] = True
                link.send(fetch_frame("lp", self.offsets[k], MAX_WAIT_MS[0]))

            self.producer.send(produce_frame("lp", p, 1))
            pump([*self.links, self.producer], on_frame,
                 lambda: state["produced"] and state["fetched"], 600)
            for link in self.links:
                link.flush()
            time.sleep(self.park_s)  # the new Fetch parks before the next record

    def close(self) -> None:
        for link in (*self.links, self.producer):
            link.close()


class PingPong(LongPoll):
    def __init__(self, server: Server, park_s: float) -> None:
        self.links = [Link(server.address) for _ in range(4)]
        self.producer = Link(server.address)
        self.offsets = [{p: 0 for p in range(k, 16, 4)} for k in range(4)]
        self.sent = 0
        self.timeouts = 0

    def run(self, records: int) -> None:
        for _ in range(records):
            p = self.sent % 16
            self.sent += 1
            k = p % 4
            failures = produce_failures(one_call(self.producer, produce_frame("lp", p, 1)))
            if failures:
                raise RuntimeError(f"pingpong: cycle {self.sent}: the Produce failed: "
                                   f"{failures}")
            answer = one_call(self.links[k], fetch_frame("lp", self.offsets[k]))
            got = records_in(answer)
            if got != 1:
                raise RuntimeError(f"pingpong: cycle {self.sent}: fetched {got} records, not 1, "
                                   f"from lp-{p} at offset {self.offsets[k][p]}; the Fetch "
                                   f"said {fetch_report(answer)[1]}")
            self.offsets[k][p] += 1


class ManyRecords:
    def __init__(self, server: Server, topic: str) -> None:
        self.link = Link(server.address)
        partitions = TOPICS[topic]
        limit = len(build_batch([Record(value=VALUE)] * BATCH))
        for p in range(partitions):
            for _ in range(2):
                failures = produce_failures(one_call(self.link, produce_frame(topic, p, BATCH)))
                if failures:
                    raise RuntimeError(f"{topic}: a Produce failed: {failures}")
        self.frame = fetch_frame(topic, {p: 0 for p in range(partitions)}, limit=limit)
        self.records = records_in(one_call(self.link, self.frame))
        self.timeouts = 0
        if not self.records:
            raise RuntimeError(f"{topic}: fetched nothing")

    def run(self, fetches: int) -> None:
        for _ in range(fetches):
            answer = one_call(self.link, self.frame)
            got = records_in(answer)
            if got != self.records:  # (a cost of the client's, not the server's)
                raise RuntimeError(f"fetched {got} records, not {self.records}; the Fetch said "
                                   f"{fetch_report(answer)[1]}")

    def close(self) -> None:
        self.link.close()


def _server(kind: str, out_dir: str | None, baseline: str | None) -> Server:
    if kind == "mock":
        args = [sys.executable, "-c", MOCK_SERVER, HERE, *(f"{t}:{n}" for t, n in TOPICS.items())]
        args.insert(4, "1")  # brokers
    else:
        args = [sys.executable, "-m", "kafka_emu", "serve", "--port", "0", "--log-level", "ERROR",
                "-c", "connections.max.idle.ms=3600000", "-c", "emu.timeline.max.events=0",
                *(a for t, n in TOPICS.items() for a in ("--topic", f"{t}:{n}"))]
    if out_dir is not None:
        os.environ["PYTHONHASHSEED"] = os.environ.get("PYTHONHASHSEED", "0")
        args = ["valgrind", "--tool=callgrind", "--quiet",
                f"--callgrind-out-file={out_dir}/{kind}.%p", *args]
    old = os.getcwd(), os.environ.get("PYTHONPATH")
    if kind == "base":
        os.chdir(baseline)
        os.environ["PYTHONPATH"] = baseline
    try:
        return Server(kind, args)
    finally:
        os.chdir(old[0])
        if old[1] is None:
            os.environ.pop("PYTHONPATH", None)
        elif kind == "base":
            os.environ["PYTHONPATH"] = old[1]


def measure(kind: str, shape: str, args, out_dir: str | None) -> tuple[float, str]:
    """(instructions or server CPU ns per record, a note)."""
    with _server(kind, out_dir, args.baseline) as server:
        if out_dir is not None:
            _quiet(server)
        else:
            server.settle()
        if shape in ("longpoll", "pingpong"):
            load = (LongPoll if shape == "longpoll" else PingPong)(server, args.park_ms / 1000)
            unit = 1
        else:
            load = ManyRecords(server, "big16" if shape == "fetch16" else "big1")
            unit = load.records
        try:
            load.run(args.warm)
            if out_dir is not None:
                # the server's idle loading (broker/warm.py: one step after each 20 ms of idle)
                # must be over before the counters start, or a step lands among the cycles
                _quiet(server)
                _control("--zero", server.proc.pid)
            else:
                server.settle()
            cpu0 = server.cpu_ns()
            load.run(args.measured)
            note = (f"timeouts {load.timeouts}" if shape == "longpoll" else
                    f"{load.records} records per fetch" if shape.startswith("fetch") else "")
            if out_dir is None:
                return (server.cpu_ns() - cpu0) / (args.measured * unit), note
            total = dumped_instructions(out_dir, kind, server.proc.pid)
            return total / (args.measured * unit), note
        finally:
            load.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shape", default="longpoll,pingpong,fetch16,fetch1")
    parser.add_argument("--server", default="emu,mock")
    parser.add_argument("--baseline", metavar="DIR", help="another checkout, as server 'base'")
    parser.add_argument("--warm", type=int, default=60)
    parser.add_argument("--measured", type=int, default=200)
    parser.add_argument("--park-ms", type=float, default=40.0)
    parser.add_argument("--max-wait-ms", type=int, default=5000,
                        help="the long poll's: long enough that no Fetch times out under "
                             "valgrind (a timeout is a full read and an extra answer)")
    parser.add_argument("--no-valgrind", action="store_true")
    parser.add_argument("--keep", metavar="DIR")
    args = parser.parse_args()
    MAX_WAIT_MS[0] = args.max_wait_ms
    kinds = args.server.split(",") + (["base"] if args.baseline else [])
    unit = "ns CPU" if args.no_valgrind else "instructions"
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = None if args.no_valgrind else (args.keep or tmp)
        if out_dir:
            os.makedirs(out_dir, exist_ok=True)
        print(f"== Fetch, {unit} per record ({args.measured} cycles after {args.warm})")
        for shape in args.shape.split(","):
            figures = {}
            for kind in kinds:
                if kind == "mock" and shape == "longpoll":
                    continue  # (see the module doc: the mock's parked Fetch never wakes early)
                figures[kind], note = measure(kind, shape, args, out_dir)
                print(f"  {shape:<9} {kind:<5} {figures[kind]:12.0f}  {note}", flush=True)
            if "mock" in figures and "emu" in figures:
                print(f"  {shape:<9} emu/mock {figures['emu'] / figures['mock']:.2f}x"
                      + (f"  emu/base {figures['emu'] / figures['base']:.3f}"
                         if "base" in figures else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
