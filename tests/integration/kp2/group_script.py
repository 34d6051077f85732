"""Run with kafka-python 2.x (the .venv-kp2 interpreter): form a 3-consumer group on a
6-partition topic, consume everything once, and print one JSON object with the results.

Usage: python group_script.py BOOTSTRAP TOPIC GROUP
Standalone on purpose: it imports nothing from kafka_emu (which is not installed there).
"""

import json
import sys
import threading
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer

PARTITIONS = 6
MESSAGES = 120


def main() -> int:
    bootstrap, topic, group = sys.argv[1:4]
    deadline = time.monotonic() + 30
    consumers = [KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                               auto_offset_reset="earliest", enable_auto_commit=False,
                               session_timeout_ms=6000, heartbeat_interval_ms=500,
                               metadata_max_age_ms=1000, fetch_max_wait_ms=100)
                 for _ in range(3)]
    for c in consumers:
        c.subscribe([topic])

    records = []
    lock = threading.Lock()

    def poll_all():
        def one(c):
            for recs in c.poll(timeout_ms=50).values():
                with lock:
                    records.extend((r.partition, r.offset, r.value.decode()) for r in recs)
        threads = [threading.Thread(target=one, args=(c,)) for c in consumers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def assignments():
        return [sorted((tp.topic, tp.partition) for tp in c.assignment()) for c in consumers]

    while not (all(assignments()) and sum(map(len, assignments())) == PARTITIONS):
        if time.monotonic() > deadline:
            raise SystemExit(f"group never formed: {assignments()}")
        poll_all()
    split = assignments()

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(MESSAGES):
        producer.send(topic, value=f"m-{i}".encode(), partition=i % PARTITIONS)
    producer.flush(timeout=20)
    producer.close()

    while len(records) < MESSAGES:
        if time.monotonic() > deadline:
            raise SystemExit(f"consumed only {len(records)} of {MESSAGES}")
        poll_all()
    for c in consumers:
        c.commit()
        c.close()
    print(json.dumps({"kafka_python_version": kafka.__version__, "assignments": split,
                      "records": sorted(records)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
