"""Cluster benchmark (issue 13): what several brokers cost at start-up, and how fast a group
recovers from a coordinator move.

1. Start-up of a 3-broker emulator against a 1-broker one, measured alternately in the same run:
   in-process (``run_in_thread(make_config(brokers=N))`` until it accepts connections) and from
   the CLI (``kafka-emu serve --port 0 --brokers N`` until it prints the bootstrap line). Printed
   as medians and the 3-broker / 1-broker ratio.
2. For each client -- confluent-kafka (librdkafka), kafka-python and aiokafka -- a 3-member group
   (heartbeat interval 500 ms) whose coordinator is moved ``BENCH_CLUSTER_MOVES`` times (default
   5, each at a random point of the heartbeat cycle) with a load time of 200 ms: wall time from
   the move until every member has had a Heartbeat answered without error by the new coordinator
   (a heartbeat during the load is answered blind, as Kafka does), and until every member's
   heartbeat is served by the loaded group. Target: under one heartbeat interval plus the load
   time (0.7 s); one row per client with the median of the moves (and the worst). Then where
   the time went, per member (medians over members and moves), from the requests the emulator
   saw: the move until the member's next Heartbeat (answered NOT_COORDINATOR), then until its
   FindCoordinator, then until its first Heartbeat answered by the new coordinator -- against
   the time kafka-emu itself spent answering the members' requests meanwhile (a new
   connection's included). Kafka neither closes the connection nor tells a client sooner, so
   every client learns of a move from its next heartbeat; what follows is its own schedule:
   - librdkafka sends FindCoordinator at once, to a broker whose connection usually has a Fetch
     long-polling (fetch.wait.max.ms, 500 ms, on this idle topic): kafka-emu, like Kafka, reads
     a connection's next request only once it has answered the last, so the answer comes when
     that Fetch returns (counted as "queued"); librdkafka heartbeats the new coordinator one
     interval after the refused heartbeat;
   - kafka-python sends FindCoordinator at once (to its least loaded node), but finding the
     coordinator resets its heartbeat timer (``reset_timeouts``), so it heartbeats one full
     interval later;
   - aiokafka sends FindCoordinator at once (sometimes queued behind a Fetch too) and heartbeats
     ``retry_backoff_ms`` (100 ms) after the refused heartbeat, a heartbeat that falls in the
     load being answered blind.

Not a test: it prints and always exits 0; a missed target is printed as "target missed".
"""

from __future__ import annotations

import logging
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import uuid
from typing import NamedTuple

from kafka_emu.testing import ControlError, make_config, run_in_thread

ROUNDS = int(os.environ.get("BENCH_CLUSTER_ROUNDS", "9"))
HEARTBEAT_MS = 500
SESSION_MS = 10000
LOAD_MS = 200
MEMBERS = 3
MOVES = int(os.environ.get("BENCH_CLUSTER_MOVES", "5"))
# requests that wait by design (a Fetch long-polls, a JoinGroup or SyncGroup waits for the
# group): their latency is not kafka-emu's answering time
PARKING = frozenset({"Fetch", "JoinGroup", "SyncGroup"})


def start_in_process(brokers: int) -> float:
    t0 = time.perf_counter()
    with run_in_thread(make_config(brokers=brokers)):
        return time.perf_counter() - t0


def start_cli(brokers: int) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                             "--brokers", str(brokers), "--log-level", "WARNING"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        proc.stdout.readline()
        return time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def startup() -> None:
    for name, fn in (("in-process", start_in_process), ("CLI", start_cli)):
        times: dict[int, list[float]] = {1: [], 3: []}
        fn(1)  # warm imports and caches
        for _ in range(ROUNDS):
            for brokers in (1, 3):
                times[brokers].append(fn(brokers))
        one, three = statistics.median(times[1]), statistics.median(times[3])
        print(f"start-up {name}: 1 broker {one * 1000:.1f} ms, 3 brokers {three * 1000:.1f} ms "
              f"(median of {ROUNDS}), ratio {three / one:.2f}")


# -- the group members, one class per client: 3 members, each with its own client id --------

class ConfluentMembers:
    name = "confluent-kafka"

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        from confluent_kafka import Consumer
        self.consumers = []
        for i in range(MEMBERS):
            c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                          "client.id": f"member-{i}", "heartbeat.interval.ms": HEARTBEAT_MS,
                          "session.timeout.ms": SESSION_MS})
            c.subscribe([topic])
            self.consumers.append(c)

    def poll(self) -> None:
        for c in self.consumers:
            c.poll(0.02)

    def close(self) -> None:
        for c in self.consumers:
            c.close()


class KafkaPythonMembers:
    name = "kafka-python"

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        from kafka import KafkaConsumer
        self.consumers = []
        for i in range(MEMBERS):
            c = KafkaConsumer(bootstrap_servers=bootstrap.split(","), group_id=group,
                              client_id=f"member-{i}", heartbeat_interval_ms=HEARTBEAT_MS,
                              session_timeout_ms=SESSION_MS)
            c.subscribe([topic])
            self.consumers.append(c)

    def poll(self) -> None:
        for c in self.consumers:
            c.poll(timeout_ms=20)

    def close(self) -> None:
        for c in self.consumers:
            c.close()


class AioKafkaMembers:
    """aiokafka's members live on an event loop in a thread of their own; its heartbeat and
    coordination tasks run there by themselves, and a task per member keeps fetching."""

    name = "aiokafka"

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        import asyncio

        from aiokafka import AIOKafkaConsumer
        self.asyncio = asyncio
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

        async def start() -> list:
            consumers = [AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                          client_id=f"member-{i}",
                                          heartbeat_interval_ms=HEARTBEAT_MS,
                                          session_timeout_ms=SESSION_MS)
                         for i in range(MEMBERS)]
            for c in consumers:
                await c.start()
            return consumers
        self.consumers = self._run(start())
        self.fetching = [asyncio.run_coroutine_threadsafe(self._fetch(c), self.loop)
                         for c in self.consumers]

    def _run(self, coro):
        return self.asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    async def _fetch(self, consumer) -> None:
        while True:
            await consumer.getmany(timeout_ms=100)

    def poll(self) -> None:
        time.sleep(0.05)  # the fetch tasks poll on the loop

    def close(self) -> None:
        for f in self.fetching:
            f.cancel()
        for c in self.consumers:
            self._run(c.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)


CLIENTS = (ConfluentMembers, KafkaPythonMembers, AioKafkaMembers)


# -- a coordinator move, measured ------------------------------------------------------------

def recovery() -> None:
    # kafka-python and aiokafka log every refused heartbeat and commit of a move as a warning
    for name in ("kafka", "aiokafka"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    target = HEARTBEAT_MS + LOAD_MS
    print(f"coordinator move, {MEMBERS} members per client (heartbeat {HEARTBEAT_MS} ms, load "
          f"{LOAD_MS} ms): every member answered without error by the new coordinator, target "
          f"< {target} ms, and served by the loaded group (median of {MOVES} moves [worst]); "
          f"per member, median ms from the move: heartbeat refused NOT_COORDINATOR -> "
          f"FindCoordinator -> first heartbeat answered by the new coordinator; the longest "
          f"time kafka-emu took answering a member's request meanwhile")
    for members in CLIENTS:
        recovery_of(members, target)


def recovery_of(client, target: int) -> None:
    """Move the group's coordinator ``MOVES`` times under ``client``'s members; print a row."""
    phase = random.Random(13)
    with run_in_thread(make_config(brokers=3)) as emu:
        topic, group = f"bench-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
        emu.create_topic(topic, 6, replication_factor=3)
        broker = emu.broker
        ok_at: dict[str, float] = {}  # first answer without error from the new coordinator
        served_at: dict[str, float] = {}  # ... and with the group loaded (not answered blind)
        seen: list[Seen] = []  # the requests answered during a move
        watching = threading.Event()

        def sink(event) -> None:  # runs on the emulator's thread, as the request is answered
            if not (watching.is_set() and type(event).__name__ == "RequestHandled"):
                return
            now = time.perf_counter()
            seen.append(Seen(now, event.client_id, event.connection_id, event.api,
                             event.error_code, event.latency_ms))
            if event.api == "Heartbeat" and event.group_id == group and event.error_code == 0:
                ok_at.setdefault(event.member_id, now)
                if not broker.cluster.loading:
                    served_at.setdefault(event.member_id, now)

        emu._run(lambda: broker.observation.subscribe(sink))
        members = client(emu.bootstrap_servers, topic, group)
        stop = threading.Event()

        def poll_all() -> None:
            while not stop.is_set():
                members.poll()
        poller = threading.Thread(target=poll_all, daemon=True)
        poller.start()
        try:
            answered, served = [], []
            rebalanced = 0
            steps: dict[str, list[float]] = {"detect": [], "find": [], "heartbeat": [],
                                             "queued": []}
            server_ms: list[float] = []
            for _ in range(MOVES):
                generation = settled(emu, group)
                # at a random point of the members' heartbeat cycles: right after the last
                # recovery every member has just heartbeated, which would make each wait a
                # whole interval for its next one
                time.sleep(phase.uniform(0, HEARTBEAT_MS / 1000))
                ok_at.clear()
                served_at.clear()
                seen.clear()
                watching.set()
                t0 = time.perf_counter()
                emu.move_coordinator(group, emu.coordinator_of(group) % 3 + 1, load_ms=LOAD_MS)
                while len(served_at) < MEMBERS and time.perf_counter() - t0 < 30:
                    time.sleep(0.01)
                watching.clear()
                view = group_view(emu, group)
                rebalanced += view is None or view["generation"] != generation
                where_the_time_went(seen, t0, steps, server_ms)
                answered.append(max(ok_at.values()) - t0 if len(ok_at) == MEMBERS
                                else float("inf"))
                served.append(max(served_at.values()) - t0 if len(served_at) == MEMBERS
                              else float("inf"))
        finally:
            stop.set()
            poller.join(timeout=10)
            members.close()

    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:.0f} [{max(values) * 1000:.0f}] ms"

    def med(values: list[float]) -> str:
        return f"{statistics.median(values):.0f}" if values else "-"
    verdict = "ok" if statistics.median(answered) * 1000 < target else "target missed"
    queued = f"{sum(steps['queued']):.0f}/{len(steps['queued'])}"
    print(f"  {client.name:<16} answered {ms(answered)} ({verdict}), served {ms(served)}; "
          f"per member {med(steps['detect'])} -> +{med(steps['find'])} -> "
          f"+{med(steps['heartbeat'])} ms (FindCoordinator queued behind a Fetch: {queued}); "
          f"kafka-emu {max(server_ms, default=0):.1f} ms"
          + (f"; a rebalance followed {rebalanced} of the moves" if rebalanced else ""))


def settled(emu, group: str) -> int:
    """Wait until the group has been Stable with every member in one generation for three
    heartbeat intervals, and return that generation: a move caught mid-rebalance (kafka-python
    rejoins once soon after its first assignment) measures the rebalance, not the move."""
    deadline = time.monotonic() + 60
    generation, since = None, 0.0
    while time.monotonic() < deadline:
        view = group_view(emu, group)
        if view is None or view["state"] != "Stable" or len(view["members"]) != MEMBERS:
            generation = None
        elif view["generation"] != generation:
            generation, since = view["generation"], time.monotonic()
        elif time.monotonic() - since >= 3 * HEARTBEAT_MS / 1000:
            return generation
        time.sleep(0.1)
    raise RuntimeError(f"group {group} did not settle with {MEMBERS} members")


def group_view(emu, group: str):
    """The group as the control plane shows it, or None while it does not exist (not joined
    yet, or between a move's unload and load)."""
    try:
        return emu.group_view(group)
    except ControlError:
        return None


class Seen(NamedTuple):
    at: float  # perf_counter when answered
    client: str | None
    connection: int
    api: str
    error: int | None
    latency_ms: float


def where_the_time_went(seen: list[Seen], t0: float, steps: dict[str, list[float]],
                        server_ms: list[float]) -> None:
    """Split each member's recovery into the client's three steps (see the module docstring),
    and collect kafka-emu's answering time for every request the members sent meanwhile
    (a new connection's ApiVersions and Metadata included; not the requests that wait by
    design). A FindCoordinator answered right after a Fetch on the same connection was read
    only then: it had waited behind that Fetch's long poll (``queued``: 1 per such member), as
    on Kafka, which reads a connection's next request only once it has answered the last."""
    for client in sorted({r.client for r in seen if r.client}):
        mine = [r for r in seen if r.client == client]
        server_ms.extend(r.latency_ms for r in mine if r.api not in PARKING)
        refused = next((r.at for r in mine
                        if r.api == "Heartbeat" and r.error == 16), None)  # NOT_COORDINATOR
        if refused is None:
            continue
        found = next((r for r in mine if r.api == "FindCoordinator" and r.at >= refused), None)
        beat = next((r.at for r in mine
                     if r.api == "Heartbeat" and r.error == 0 and found is not None
                     and r.at >= found.at), None)
        steps["detect"].append((refused - t0) * 1000)
        if found is not None:
            steps["find"].append((found.at - refused) * 1000)
            before = [r for r in mine if r.connection == found.connection and r.at <= found.at
                      and r is not found]
            steps["queued"].append(float(bool(before) and before[-1].api == "Fetch"
                                         and found.at - before[-1].at < 0.005))
            if beat is not None:
                steps["heartbeat"].append((beat - found.at) * 1000)


if __name__ == "__main__":
    if os.environ.get("BENCH_CLUSTER_ONLY") != "recovery":
        startup()
    recovery()
