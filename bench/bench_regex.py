"""SubscribedTopicRegex benchmark (issue #33): other clients' latency while a client keeps
heartbeating with the worst regex we could find, against the same latency with no such client.

Run with ``make bench`` (or ``.venv/bin/python bench/bench_regex.py``). Not a test: it prints
figures and ratios measured in this run and always exits 0; a missed target is printed as
"target missed". The server is ``kafka-emu serve`` in a subprocess.

Before the fix a regex was matched with Python's backtracking ``re``: ``(a*)*b`` against a topic
``'a'*24 + '-'`` held every client for 10 s, and each two more characters multiplied that by
about 4 (the topic here has 30: the old broker would not answer for minutes). Now RE2 matches in
time linear in the topic name; what is left is RE2's constant: a pattern whose DFA outgrows
its memory budget (``MAX_MEM``) falls back to the NFA, which steps through up to the whole
program per character. The worst we found, ``(?:[ab]*a[ab]{40}){24}`` (nesting 960 <= 1000),
costs about 1 ms per 249-character topic name made of ``a`` and ``b``.

Setup: ``--topics`` topics with 249-character names of random ``a``/``b`` (the longest Kafka
allows, the alphabet the pattern is worst on), plus ``'a'*30 + '-'``. A member of a Stable classic
group heartbeats (Heartbeat v4, one request in flight) on its own connection: that is the
"other client". An attacker on another connection sends ConsumerGroupHeartbeat v1 back to back:

A. the same worst regex on every heartbeat (a client that keeps its subscription: compiled
   once, each topic's verdict remembered, so each heartbeat costs a look-up per topic);
B. a different worst regex on every heartbeat (``...|x<n>``, defeating both caches: each one is
   compiled and matched against every topic).

The attacker runs in blocks of ``--block`` beats alternating with blocks where it is paused, so
both see the same machine load. Reported: p50/p99 of the other client with and without the
attacker, their ratio, and the attacker's heartbeat rate. Targets: A's p99 ratio <= 3 (a
remembered regex costs little); B is reported, not judged: its p99 is about one pattern's match
over all topics (topics x ~1 ms), the bound this design gives.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_hardening import (Client, heartbeat_ms, p, stable_member,  # noqa: E402
                             start_server, stop_server)

from kafka_emu.protocol import BY_NAME  # noqa: E402
from kafka_emu.protocol.messages import consumer_group_heartbeat as cgh  # noqa: E402
from kafka_emu.protocol.messages import create_topics as ct  # noqa: E402

CGH, CREATE_TOPICS = BY_NAME["ConsumerGroupHeartbeat"], BY_NAME["CreateTopics"]
WORST = r"(?:[ab]*a[ab]{40}){24}"
TARGET_SAME_RATIO = 3.0


def create_topics(client: Client, count: int) -> None:
    rng = random.Random(33)
    names = ["a" * 30 + "-"] + ["".join(rng.choice("ab") for _ in range(249)) for _ in range(count)]
    for start in range(0, len(names), 100):
        r = client.request(CREATE_TOPICS, 5, ct.CreateTopicsRequest(topics=[
            ct.CreatableTopic(name=n, num_partitions=1, replication_factor=1, assignments=[],
                              configs=[]) for n in names[start:start + 100]]))
        assert all(t.error_code == 0 for t in r.topics), r


class Attacker(threading.Thread):
    """ConsumerGroupHeartbeat v1 back to back while ``running`` is set; ``idle`` is set while it
    waits (no request in flight)."""

    def __init__(self, host: str, port: int, vary: bool) -> None:
        super().__init__(daemon=True)
        self.client = Client(host, port)
        self.vary = vary
        self.running, self.idle = threading.Event(), threading.Event()
        self.done = False
        self.beats = 0
        self.busy_s = 0.0

    def pause(self) -> None:
        self.running.clear()
        self.idle.wait()

    def run(self) -> None:
        member, epoch, n = str(uuid.uuid4()), 0, 0
        while not self.done:
            if not self.running.is_set():
                self.idle.set()
                self.running.wait(0.05)
                continue
            self.idle.clear()
            n += 1
            regex = f"{WORST}|x{n}" if self.vary else WORST
            t0 = time.perf_counter()
            r = self.client.request(CGH, 1, cgh.ConsumerGroupHeartbeatRequest(
                group_id="regex-bench", member_id=member, member_epoch=epoch,
                rebalance_timeout_ms=30_000 if epoch == 0 else -1,
                subscribed_topic_regex=regex, topic_partitions=[] if epoch == 0 else None))
            self.busy_s += time.perf_counter() - t0
            self.beats += 1
            if r.error_code == 0:
                epoch = r.member_epoch
            else:  # fenced or the like: join again under a new id
                member, epoch = str(uuid.uuid4()), 0
        self.client.close()


def scenario(host: str, port: int, member, vary: bool, beats: int, block: int) -> None:
    victim = Client(host, port)
    attacker = Attacker(host, port, vary)
    attacker.start()
    attacker.pause()
    quiet, loud = [], []
    try:
        heartbeat_ms(victim, *member, 100)  # warm
        for _ in range(max(1, beats // block)):
            quiet += heartbeat_ms(victim, *member, block)
            attacker.running.set()
            time.sleep(0.01)  # let its first request in
            loud += heartbeat_ms(victim, *member, block)
            attacker.pause()
    finally:
        attacker.done = True
        attacker.running.set()
        attacker.join(30)
        victim.close()
    name = "B: a new worst regex per heartbeat" if vary else "A: the same worst regex"
    ratio = p(loud, 99) / p(quiet, 99)
    rate = attacker.beats / attacker.busy_s if attacker.busy_s else 0.0
    print(f"== {name} ({attacker.beats} attacker heartbeats, {rate:.0f}/s while running, "
          f"{attacker.busy_s / max(attacker.beats, 1) * 1000:.1f} ms each)")
    for label, values in (("no attacker", quiet), ("attacker", loud)):
        print(f"  {label:>12}: p50 {p(values, 50):7.3f} ms   p99 {p(values, 99):8.3f} ms   "
              f"max {max(values):8.3f} ms")
    verdict = ""
    if not vary:
        ok = ratio <= TARGET_SAME_RATIO
        verdict = f"  (target <= {TARGET_SAME_RATIO:.0f}: {'ok' if ok else 'target missed'})"
    print(f"  p99 ratio attacker / none: {ratio:.2f}{verdict}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=200, help="249-character topics")
    parser.add_argument("--beats", type=int, default=1000, help="other-client heartbeats per side")
    parser.add_argument("--block", type=int, default=100)
    args = parser.parse_args()
    proc, host, port = start_server()
    try:
        admin = Client(host, port)
        create_topics(admin, args.topics)
        member = stable_member(admin)
        print(f"({args.topics} topics of 249 characters + {'a' * 30}-; worst regex {WORST})")
        scenario(host, port, member, vary=False, beats=args.beats, block=args.block)
        scenario(host, port, member, vary=True, beats=args.beats, block=args.block)
        admin.close()
    finally:
        stop_server(proc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
