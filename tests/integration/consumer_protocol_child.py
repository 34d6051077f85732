"""A confluent-kafka consumer with group.protocol=consumer, run as a child process so a test can
SIGKILL it. Prints one line per change: "ASSIGN t:0,t:3" (what it owns), and "COMMIT t:0=5"
after each synchronous commit. Arguments: bootstrap group topic."""

import sys

from confluent_kafka import Consumer, TopicPartition


def main() -> None:
    bootstrap, group, topic = sys.argv[1:4]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "group.protocol": "consumer", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe([topic])
    last = None
    while True:
        msg = consumer.poll(0.05)
        if msg is not None and msg.error() is None:
            consumer.commit(offsets=[TopicPartition(msg.topic(), msg.partition(), msg.offset() + 1)],
                            asynchronous=False)
            print(f"COMMIT {msg.topic()}:{msg.partition()}={msg.offset() + 1}", flush=True)
        now = sorted(f"{tp.topic}:{tp.partition}" for tp in consumer.assignment())
        if now != last:
            last = now
            print("ASSIGN " + ",".join(now), flush=True)


if __name__ == "__main__":
    main()
