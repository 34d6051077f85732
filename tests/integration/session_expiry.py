"""The crashed-consumer scenario of issue 9, shared by the acceptance test and the benchmark.

Two consumers of one client library share a topic with session.timeout.ms=45000 and
heartbeat.interval.ms=500: a survivor polled in a thread of this process, and a victim in a
subprocess (``crash_consumer.py``). The victim is killed with SIGKILL (no LeaveGroup); after
one heartbeat interval, and once the emulator has read the last of the victim and the survivor
has heartbeated since, the emulator's
``advance_to_next_deadline(group, kind="session")`` expires the victim -- only it, since the
survivor's session deadline lies later -- and the survivor is reassigned every partition.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time

import attrs

from kafka_emu.control.operations import ControlError

SESSION_MS = 45000
HEARTBEAT_MS = 500
PARTITIONS = 4
CLIENTS = ("confluent", "kafka-python", "aiokafka")
VICTIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crash_consumer.py")


class Survivor:
    """A consumer polled in its own thread until ``close``; ``owned()`` is what it holds."""

    def __init__(self, client: str, bootstrap: str, group: str, topic: str) -> None:
        self.client = client
        self._stop = threading.Event()
        self._owned: set[tuple[str, int]] = set()
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(bootstrap, group, topic),
                                        name=f"survivor-{client}", daemon=True)
        self._thread.start()

    def owned(self) -> set[tuple[str, int]]:
        if self._error is not None:
            raise self._error
        return set(self._owned)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self, bootstrap, group, topic):
        try:
            getattr(self, "_" + self.client.replace("-", "_"))(bootstrap, group, topic)
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the test's thread
            self._error = exc

    def _confluent(self, bootstrap, group, topic):
        from confluent_kafka import Consumer
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                             "client.id": "survivor", "session.timeout.ms": SESSION_MS,
                             "heartbeat.interval.ms": HEARTBEAT_MS,
                             "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        try:
            while not self._stop.is_set():
                consumer.poll(0.05)
                self._owned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
        finally:
            consumer.close()

    def _kafka_python(self, bootstrap, group, topic):
        from kafka import KafkaConsumer
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id="survivor",
                                 session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS,
                                 request_timeout_ms=SESSION_MS + 5000, auto_offset_reset="earliest")
        consumer.subscribe([topic])
        try:
            while not self._stop.is_set():
                consumer.poll(timeout_ms=50)
                self._owned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
        finally:
            consumer.close()

    def _aiokafka(self, bootstrap, group, topic):
        from aiokafka import AIOKafkaConsumer

        async def main():
            consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                        client_id="survivor", session_timeout_ms=SESSION_MS,
                                        heartbeat_interval_ms=HEARTBEAT_MS,
                                        auto_offset_reset="earliest")
            await consumer.start()
            try:
                while not self._stop.is_set():
                    await consumer.getmany(timeout_ms=50)
                    self._owned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
            finally:
                await consumer.stop()

        asyncio.run(main())


def start_victim(client: str, bootstrap: str, group: str, topic: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, VICTIM, client, bootstrap, group, topic, "victim", str(SESSION_MS),
         str(HEARTBEAT_MS)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


@attrs.frozen
class Outcome:
    victim_id: str
    survivor_id: str
    expired: list  # member ids advance_to_next_deadline expired
    advance: dict  # its whole answer
    kill_to_reassigned_s: float  # wall time from SIGKILL to the survivor owning every partition
    kill_to_advance_s: float
    final_view: dict  # the group view once the survivor owned everything


def run(emu, client: str, group: str, topic: str, *, timeout: float = 60.0) -> Outcome:
    """The scenario against a running emulator whose topic has PARTITIONS partitions."""
    everything = {(topic, p) for p in range(PARTITIONS)}
    victim = start_victim(client, emu.bootstrap_servers, group, topic)
    survivor = Survivor(client, emu.bootstrap_servers, group, topic)
    try:
        # Both members in, each owning a share (the victim says so once it does).
        emu.wait_for(lambda: _split(emu, group, survivor), timeout=timeout)
        view = emu.group_view(group)
        victim_id = next(m["member_id"] for m in view["members"] if m["client_id"] == "victim")
        survivor_id = next(m["member_id"] for m in view["members"] if m["client_id"] == "survivor")

        killed = time.monotonic()
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        time.sleep(HEARTBEAT_MS / 1000)  # one heartbeat interval later ...
        # ... once the emulator has read the last of the victim (every connection of its closed:
        # on a loaded machine a heartbeat it sent just before the kill can still be read after
        # the survivor's next one) and the survivor has heartbeated since, so the survivor's
        # deadline lies later than the victim's.
        emu.wait_for(lambda: _heard_after(emu, group, survivor_id), timeout=timeout)
        advanced_at = time.monotonic()
        answer = emu.advance_to_next_deadline(group, kind="session")
        expired = [m["member_id"] for m in answer["members_expired"]]

        def reassigned():
            view = emu.group_view(group)
            mine = view["members"][0]["assignment"] if len(view["members"]) == 1 else None
            owned = {(t, p) for t, ps in ((mine or {}).get("partitions") or {}).items() for p in ps}
            return view["state"] == "Stable" and owned == everything and survivor.owned() == everything

        emu.wait_for(reassigned, timeout=timeout)
        done = time.monotonic()
        return Outcome(victim_id, survivor_id, expired, answer, done - killed, advanced_at - killed,
                       emu.group_view(group))
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait(timeout=30)
        survivor.close()


def _heard_after(emu, group: str, survivor_id: str) -> bool:
    """Every victim connection is closed, and the survivor heartbeated (no error) after that.
    The victim's connections are read again at each check: one whose first request the
    emulator reads only after the kill (a heartbeat on a coordinator connection kafka-python
    had just opened) would otherwise be missed, and its heartbeat put the victim's session
    deadline after the survivor's (seen once in a full run: the survivor was expired)."""
    victim_connections = {r["connection_id"] for r in emu.requests(client_id="victim")}
    closed = [e["seq"] for e in emu.timeline(types=("ConnectionClosed",))
              if e["connection_id"] in victim_connections]
    if len(closed) < len(victim_connections):
        return False
    return any(r["member_id"] == survivor_id and r["error_code"] == 0
               for r in emu.requests(api="Heartbeat", group_id=group, since=max(closed)))


def _split(emu, group: str, survivor: Survivor) -> bool:
    try:
        view = emu.group_view(group)
    except ControlError:  # the group does not exist yet
        return False
    return (view["state"] == "Stable" and len(view["members"]) == 2
            and all(m["assignment"] and m["assignment"]["partitions"] for m in view["members"])
            and bool(survivor.owned()))
