"""Run with kafka-python 2.x (the .venv-kp2 interpreter) against a 3-broker kafka-emu whose
control endpoint's base URL is in $KAFKA_EMU_CONTROL: a group of three consumes a topic whose
partition leaders are spread over the brokers, its coordinator is moved over HTTP midway, and
the group must go on reading. Prints one JSON object: every value read (duplicates kept), the
coordinator and generation before and after the move, and the group's state after it.

Usage: python cluster_script.py BOOTSTRAP TOPIC GROUP
Standalone on purpose: it imports nothing from kafka_emu (which is not installed there).
"""

import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request

import kafka
from kafka import KafkaConsumer, KafkaProducer

CONSUMERS = 3
PER_PHASE = 150
CONTROL = os.environ["KAFKA_EMU_CONTROL"]
TOKEN = os.environ["KAFKA_EMU_CONTROL_TOKEN"]


def control(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(CONTROL + path, data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())["result"]


def main() -> int:
    bootstrap, topic, group = sys.argv[1:4]
    brokers = bootstrap.split(",")
    consumers = [KafkaConsumer(bootstrap_servers=brokers, group_id=group,
                               auto_offset_reset="earliest", enable_auto_commit=True,
                               auto_commit_interval_ms=200, session_timeout_ms=30000,
                               heartbeat_interval_ms=500, fetch_max_wait_ms=100)
                 for _ in range(CONSUMERS)]
    for c in consumers:
        c.subscribe([topic])
    seen = []
    lock = threading.Lock()

    def tick():
        # each consumer polls in its own thread: a kafka-python 2 poll can block in a join
        # until the other members join too
        def one(c):
            for records in c.poll(timeout_ms=50).values():
                with lock:
                    seen.extend(int(r.value) for r in records)
        threads = [threading.Thread(target=one, args=(c,)) for c in consumers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def wait(what, done, timeout=90):
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out waiting for {what}; read {len(set(seen))} distinct")
            tick()

    def stable():
        try:
            view = control("GET", f"/groups/{group}")
        except urllib.error.HTTPError as exc:
            if exc.code == 404:  # no member has joined yet
                return False
            raise
        return view["state"] == "Stable" and len(view["members"]) == CONSUMERS

    producer = KafkaProducer(bootstrap_servers=brokers, acks="all", retries=10_000, linger_ms=5)
    produced = 0

    def produce(n):
        nonlocal produced
        futures = [producer.send(topic, str(v).encode()) for v in range(produced, produced + n)]
        producer.flush(60)
        for f in futures:
            f.get(timeout=60)
        produced += n

    # produce only once the group has settled: records read while members still join one by
    # one are read again by whoever gets their partition (at-least-once, on Kafka as well)
    wait("a stable group of three", stable)
    produce(PER_PHASE)
    wait(f"{produced} records", lambda: len(set(seen)) >= produced)
    generation_before = control("GET", f"/groups/{group}")["generation"]
    coordinator_before = control("GET", f"/groups/{group}/coordinator")["coordinator"]
    target = coordinator_before % 3 + 1
    control("POST", f"/groups/{group}/move-coordinator", {"to": target, "load_ms": 300})
    produce(PER_PHASE)
    wait(f"{produced} records after the move", lambda: len(set(seen)) >= produced)
    end = time.monotonic() + 1.0  # a few heartbeats and commits against the new coordinator
    while time.monotonic() < end:
        tick()
    after = control("GET", f"/groups/{group}")
    coordinator_after = control("GET", f"/groups/{group}/coordinator")["coordinator"]
    producer.close()
    for c in consumers:
        c.close()
    print(json.dumps({"kafka_python_version": kafka.__version__, "produced": produced,
                      "seen": seen, "target": target,
                      "coordinator": [coordinator_before, coordinator_after],
                      "generation": [generation_before, after["generation"]],
                      "state_after": after["state"], "members_after": len(after["members"])}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
