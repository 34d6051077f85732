"""Produce, counted in machine instructions: kafka-emu against librdkafka's mock cluster (issue 40,
item 1, the Produce side).

``bench_data_path_peers.py`` measures Produce by server CPU time through real producers, which on
the shared two-core machine swings by a third between runs. This counts instead the instructions
each server process executes under valgrind's callgrind, which the load does not move. The same
pre-encoded Produce v9 frames (uncompressed magic-2 batches of RECORDS records of VALUE_SIZE
bytes, no producer id, so every frame can be sent again) go one request in flight on each of
CONNECTIONS connections; WARM requests, the counters zeroed, MEASURED requests, the counters
dumped. Cells:

* ``1p acks=1``    one partition per request, one broker;
* ``16p acks=1``   16 partitions per request (one topic), one broker;
* ``1p acks=all``  ``serve --brokers 3`` / a 3-broker mock: each request to its partition's leader;
* ``16p acks=all`` the same, 16 partitions: each broker gets the partitions it leads, one request
  per broker in turn (so a "request" there carries 16/3 partitions on average).

Printed: thousands of instructions per request and per record, and kafka-emu / mock. Callgrind
counts user-space instructions only: the kernel's share (recv, send, epoll), most of the C
mock's CPU, is not in them, so the ratio to the mock overstates the CPU ratio; the figure is for
A/B between checkouts, the CPU ratio is bench_data_path_peers.py's. kafka-emu
runs with the timeline off (``emu.timeline.max.events=0``: the data path, not the recorder).

    python bench/callgrind_produce.py [--cells 1p,16p,1p-all,16p-all] [--measured 2000]
                                      [--emu-dir DIR]   # another checkout's kafka_emu (A/B)

A few minutes per cell (about 50x slower under valgrind). Not a test: prints and exits 0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_wire import Link, Server, decode, pump, request  # noqa: E402
from callgrind_wire import _control, _quiet, dumped_instructions  # noqa: E402

from kafka_emu.log.records import Record, build_batch  # noqa: E402
from kafka_emu.protocol import BY_NAME  # noqa: E402
from kafka_emu.protocol.messages.metadata import MetadataRequest, MetadataRequestTopic  # noqa: E402
from kafka_emu.protocol.messages.produce import PartitionProduceData, TopicProduceData  # noqa: E402

PRODUCE, METADATA = BY_NAME["Produce"], BY_NAME["Metadata"]
V_PRODUCE, V_METADATA = 9, 9
TOPIC, PARTITIONS = "bench", 16
RECORDS, VALUE_SIZE = 5, 100
CONNECTIONS = 4
CELLS = {"1p": (1, 1, 1), "16p": (16, 1, 1), "1p-all": (1, -1, 3), "16p-all": (16, -1, 3)}

MOCK = r"""
import sys
sys.path.insert(0, sys.argv[1])
from _mock_cluster import MockCluster
mock = MockCluster(brokers=int(sys.argv[2]), topics={sys.argv[3]: int(sys.argv[4])},
                   initial_rebalance_delay_ms=0)
print(mock.bootstrap_servers, flush=True)
sys.stdin.read()   # until the driver closes our stdin
mock.close()
"""


class Cluster(Server):
    """A server process printing a bootstrap list first; ``address`` is its first broker."""

    def __init__(self, name: str, args: list[str]) -> None:
        self.name = name
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline().strip()
        if not line:
            raise RuntimeError(f"{name} did not start")
        first = line.split(",")[0]
        host, _, port = first.rpartition(":")
        self.address = (host, int(port))


def _batch() -> bytes:
    # stamped now, as a producer stamps CreateTime: records stamped in 2023, as they were, are
    # past the default retention.ms (7 days), so the server's retention check -- 30 s after
    # its start, then every 5 minutes, inside a cell's run under valgrind -- deleted every batch
    # appended so far, about 2.8k instructions a batch, counted among the requests' if it fell
    # inside the measured window (at 16 partitions, tens of thousands of instructions a request)
    now_ms = int(time.time() * 1000)
    return build_batch([Record(key=None, value=b"v" * VALUE_SIZE, timestamp_ms=now_ms + i)
                        for i in range(RECORDS)])


def _leaders(server: Server) -> dict[int, tuple[tuple[str, int], list[int]]]:
    """node id -> (address, partitions of TOPIC it leads), from Metadata."""
    link, got = Link(server.address), []
    link.send(request(METADATA, V_METADATA, MetadataRequest(
        topics=[MetadataRequestTopic(name=TOPIC)], allow_auto_topic_creation=False)))
    pump([link], lambda _, f: got.append(f), lambda: bool(got), 600)  # slow under valgrind
    link.close()
    answer = decode(METADATA, V_METADATA, got[0])
    brokers = {b.node_id: (b.host, b.port) for b in answer.brokers}
    out: dict[int, tuple[tuple[str, int], list[int]]] = {}
    for topic in answer.topics:
        for p in topic.partitions:
            out.setdefault(p.leader_id, (brokers[p.leader_id], []))[1].append(p.partition_index)
    return out


def _frame(partitions: list[int], acks: int, batch: bytes, correlation_id: int) -> bytes:
    return request(PRODUCE, V_PRODUCE, PRODUCE.request(
        transactional_id=None, acks=acks, timeout_ms=30_000, topic_data=[TopicProduceData(
            name=TOPIC, partition_data=[PartitionProduceData(index=i, records=batch)
                                        for i in partitions])]), correlation_id)


def _check(frame: bytes) -> None:
    answer = decode(PRODUCE, V_PRODUCE, frame)
    errors = {p.error_code for t in answer.responses for p in t.partition_responses}
    if errors - {0}:
        raise RuntimeError(f"Produce answered with errors {errors}")


class Target:
    """What one Link per broker sends: ``frames[node]`` and a server-wide rotation."""

    def __init__(self, server: Server, partitions: int, acks: int) -> None:
        batch = _batch()
        self.plan: list[tuple[tuple[str, int], bytes]] = []
        for _node, (address, led) in sorted(_leaders(server).items()):
            chosen = [p for p in led if p < partitions] if partitions > 1 else led[:1]
            if partitions == 1 and self.plan:
                continue  # one partition: its leader only
            if chosen:
                self.plan.append((address, _frame(chosen, acks, batch, 7)))
        for address, frame in self.plan:  # each frame answers without errors
            got: list[bytes] = []
            link = Link(address)
            link.send(frame)
            pump([link], lambda _, f: got.append(f), lambda: bool(got), 600)
            link.close()
            _check(got[0])

    def run(self, count: int) -> None:
        """``count`` requests, CONNECTIONS links per broker in the plan, one in flight each."""
        links = [(Link(address), frame) for address, frame in self.plan
                 for _ in range(CONNECTIONS)]
        by_link = {id(link): frame for link, frame in links}
        state = {"sent": 0, "answered": 0}

        def send(link: Link) -> None:
            if state["sent"] < count:
                link.send(by_link[id(link)])
                state["sent"] += 1

        def on_frame(link: Link, frame: bytes) -> None:
            state["answered"] += 1
            send(link)

        for link, _ in links:
            send(link)
        try:
            pump([link for link, _ in links], on_frame, lambda: state["answered"] >= count,
                 limit_s=3600)
        finally:
            for link, _ in links:
                link.close()

    @property
    def records_per_request(self) -> float:
        partitions = sum(len(decode_request_partitions(f)) for _, f in self.plan)
        return RECORDS * partitions / len(self.plan)


def decode_request_partitions(frame: bytes) -> list[int]:
    from kafka_emu.protocol.headers import decode_request
    _, body, _ = decode_request(PRODUCE, V_PRODUCE, frame[4:])
    return [p.index for t in body.topic_data for p in t.partition_data]


def measure(server: Server, out_dir: str, partitions: int, acks: int, warm: int,
            measured: int) -> tuple[float, float]:
    _quiet(server)
    target = Target(server, partitions, acks)
    target.run(warm)
    per_request = _counted(server, out_dir, target, measured)
    return per_request, per_request / target.records_per_request


def _counted(server: Server, out_dir: str, target: Target, measured: int) -> float:
    time.sleep(0.5)
    _control("--zero", server.proc.pid)
    target.run(measured)
    return dumped_instructions(out_dir, server.name, server.proc.pid) / measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", default=",".join(CELLS))
    parser.add_argument("--warm", type=int, default=500)
    parser.add_argument("--measured", type=int, default=2000)
    parser.add_argument("--emu-dir", action="append", default=[],
                        help="a checkout whose kafka_emu is measured too (repeatable)")
    parser.add_argument("--no-mock", action="store_true")
    parser.add_argument("--keep", metavar="DIR")
    args = parser.parse_args()
    cells = args.cells.split(",")
    emus = [("kafka-emu", os.path.dirname(HERE))] + [
        (f"emu@{os.path.basename(d.rstrip('/'))}", d) for d in args.emu_dir]
    results: dict[str, dict[str, tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = args.keep or tmp
        os.makedirs(out_dir, exist_ok=True)
        for cell in cells:
            partitions, acks, brokers = CELLS[cell]
            row = results.setdefault(cell, {})
            for name, root in emus:
                env_root = os.environ.get("PYTHONPATH")
                os.environ["PYTHONPATH"] = root + (os.pathsep + env_root if env_root else "")
                try:
                    command = [sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                               "--brokers", str(brokers), "--log-level", "ERROR",
                               "--topic", f"{TOPIC}:{PARTITIONS}",
                               "-c", "connections.max.idle.ms=3600000",
                               "-c", "emu.timeline.max.events=0"]
                    here = os.getcwd()
                    os.chdir(root)  # python -m puts the working directory first on the path
                    try:
                        server = _callgrind(out_dir, name.replace("@", "-"), command)
                    finally:
                        os.chdir(here)
                    with server as s:
                        row[name] = measure(s, out_dir, partitions, acks, args.warm,
                                            args.measured)
                finally:
                    if env_root is None:
                        os.environ.pop("PYTHONPATH", None)
                    else:
                        os.environ["PYTHONPATH"] = env_root
            if not args.no_mock:
                command = [sys.executable, "-c", MOCK, HERE, str(brokers), TOPIC, str(PARTITIONS)]
                with _callgrind(out_dir, "mock", command) as s:
                    row["mock"] = measure(s, out_dir, partitions, acks, args.warm, args.measured)
            _print_row(cell, row)
    print(f"== Produce v{V_PRODUCE}, thousands of instructions per request / per record "
          f"(callgrind, {args.measured} after {args.warm}; {CONNECTIONS} connections per broker, "
          f"one in flight; {RECORDS} records of {VALUE_SIZE} B per partition)")
    for cell in cells:
        _print_row(cell, results[cell])
    return 0


def _print_row(cell: str, row: dict[str, tuple[float, float]]) -> None:
    parts = [f"{name} {req / 1e3:7.1f}k/req {rec / 1e3:6.2f}k/rec" for name, (req, rec) in
             row.items()]
    mock = row.get("mock")
    ratios = [f"{name}/mock {rec / mock[1]:.2f}x" for name, (_, rec) in row.items()
              if mock and name != "mock"]
    print(f"  {cell:<8} " + "   ".join(parts + ratios), flush=True)


def _callgrind(out_dir: str, name: str, command: list[str]) -> Cluster:
    # a fixed hash seed: string hashes steer dict probing, and so the counts, by a few per cent
    os.environ["PYTHONHASHSEED"] = os.environ.get("PYTHONHASHSEED", "0")
    return Cluster(name, ["valgrind", "--tool=callgrind", "--quiet",
                          f"--callgrind-out-file={out_dir}/{name}.%p", *command])


if __name__ == "__main__":
    raise SystemExit(main())
