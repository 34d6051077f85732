"""A kafka-python consumer group: produce a few messages, consume them with a group of two.

    python examples/kafka_python_group.py [BOOTSTRAP]     # default 127.0.0.1:9092

Start a broker first (`kafka-emu serve --topic orders:4`, or any Kafka). Exits 0 once every
message was consumed.
"""

import sys
import threading
import time

from kafka import KafkaConsumer, KafkaProducer

BOOTSTRAP = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9092"
TOPIC, GROUP, COUNT = "orders", "billing", 20


def main() -> int:
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP)
    for i in range(COUNT):
        producer.send(TOPIC, key=b"customer-%d" % (i % 5), value=b"order-%d" % i)
    producer.flush()
    producer.close()

    consumed, lock = [], threading.Lock()

    def run_member(name: str) -> None:
        # each member in its own thread, as an application would run them
        consumer = KafkaConsumer(TOPIC, bootstrap_servers=BOOTSTRAP, group_id=GROUP,
                                 auto_offset_reset="earliest",
                                 session_timeout_ms=6000, heartbeat_interval_ms=500)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=100).values():
                with lock:
                    consumed.extend((name, r.partition, r.offset, r.value) for r in records)
            with lock:
                if len(consumed) >= COUNT:
                    break
        consumer.commit()
        consumer.close()

    members = [threading.Thread(target=run_member, args=(f"member-{i}",)) for i in range(2)]
    for t in members:
        t.start()
    for t in members:
        t.join()

    for name, partition, offset, value in sorted(consumed, key=lambda r: (r[1], r[2])):
        print(f"{name} partition={partition} offset={offset} value={value.decode()}")
    print(f"consumed {len(consumed)} messages")
    return 0 if len(consumed) == COUNT else 1


if __name__ == "__main__":
    sys.exit(main())
