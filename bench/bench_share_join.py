"""Which group.share.heartbeat.interval.ms should kafka-emu default to? Measured.

A share group member learns of a new target assignment only from the answer to its next
heartbeat, so when a second share consumer joins, the first one gives up its share only at its
next periodic heartbeat: at Kafka's 5000 ms that is seconds. This bench times, per candidate
interval (group.share.min.heartbeat.interval.ms at 50), a late joiner: one confluent-kafka ShareConsumer
is settled on a 2-partition topic, a second one subscribes, and the time runs until both hold
partitions at one member epoch (read from the coordinator in the emulator's thread). The median
of N runs per interval.

    python bench/bench_share_join.py [--runs 5] [--intervals 5000,1000,250]

Measured for the default (confluent-kafka 2.16.1 / librdkafka 2.16.0, 2 shared cores, 3 runs):

    interval   late joiner settled
    5000       4.52 s
    250        0.25 s
"""

from __future__ import annotations

import argparse
import statistics
import time

from confluent_kafka import ShareConsumer

from kafka_emu.testing.config import make_config
from kafka_emu.testing.thread_runner import run_in_thread


def one_interval(interval_ms: int, runs: int) -> list[float]:
    settings = {"group.share.min.heartbeat.interval.ms": str(min(interval_ms, 50)),
                "group.share.heartbeat.interval.ms": str(interval_ms)}
    out = []
    with run_in_thread(make_config(settings, topics={"t": 2})) as emu:
        def settled(group_id: str, n: int) -> bool:
            def read():
                g = emu.broker.coordinator._core.share_groups.get(group_id)
                return (g is not None and len(g.members) == n
                        and len({m.member_epoch for m in g.members.values()}) == 1
                        and all(m.assigned for m in g.members.values()))
            return bool(emu._run(read))

        for run in range(runs):
            group_id = f"sg-{interval_ms}-{run}"
            conf = {"bootstrap.servers": emu.bootstrap_servers, "group.id": group_id}
            first = ShareConsumer(conf)
            first.subscribe(["t"])
            while not settled(group_id, 1):
                first.poll(0.02)
            time.sleep(0.5)
            start = time.monotonic()
            second = ShareConsumer(conf)
            second.subscribe(["t"])
            while not settled(group_id, 2):
                first.poll(0.02)
                second.poll(0.02)
            out.append(time.monotonic() - start)
            first.close()
            second.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--intervals", default="5000,1000,250")
    args = parser.parse_args()
    print("interval   late joiner settled (median)")
    for interval in (int(x) for x in args.intervals.split(",")):
        times = one_interval(interval, args.runs)
        print(f"{interval:<10} {statistics.median(times):.2f} s   "
              f"({', '.join(f'{t:.2f}' for t in times)})")


if __name__ == "__main__":
    main()
