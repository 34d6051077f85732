"""A confluent-kafka consumer group: produce a few messages, consume them with a group of two.

    python examples/confluent_kafka_group.py [BOOTSTRAP]     # default 127.0.0.1:9092

Start a broker first (`kafka-emu serve --topic orders:4`, or any Kafka). Exits 0 once every
message was consumed.
"""

import sys
import time

from confluent_kafka import Consumer, Producer

BOOTSTRAP = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9092"
TOPIC, GROUP, COUNT = "orders", "billing", 20


def main() -> int:
    producer = Producer({"bootstrap.servers": BOOTSTRAP})
    for i in range(COUNT):
        producer.produce(TOPIC, key=b"customer-%d" % (i % 5), value=b"order-%d" % i)
    producer.flush(10)

    members = [Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": GROUP,
                         "auto.offset.reset": "earliest",
                         "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
               for _ in range(2)]
    for consumer in members:
        consumer.subscribe([TOPIC])

    consumed = []
    deadline = time.monotonic() + 20
    while len(consumed) < COUNT and time.monotonic() < deadline:
        for name, consumer in enumerate(members):
            msg = consumer.poll(0.1)
            if msg is not None and msg.error() is None:
                consumed.append((f"member-{name}", msg.partition(), msg.offset(), msg.value()))
    for consumer in members:
        consumer.close()  # commits (auto-commit) and leaves the group

    for name, partition, offset, value in sorted(consumed, key=lambda r: (r[1], r[2])):
        print(f"{name} partition={partition} offset={offset} value={value.decode()}")
    print(f"consumed {len(consumed)} messages")
    return 0 if len(consumed) == COUNT else 1


if __name__ == "__main__":
    sys.exit(main())
