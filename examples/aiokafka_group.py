"""An aiokafka consumer group: produce a few messages, consume them with a group of two.

    python examples/aiokafka_group.py [BOOTSTRAP]     # default 127.0.0.1:9092

Start a broker first (`kafka-emu serve --topic orders:4`, or any Kafka). Exits 0 once every
message was consumed.
"""

import asyncio
import sys

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

BOOTSTRAP = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9092"
TOPIC, GROUP, COUNT = "orders", "billing", 20


async def main() -> int:
    producer = AIOKafkaProducer(bootstrap_servers=BOOTSTRAP)
    await producer.start()
    try:
        for i in range(COUNT):
            await producer.send(TOPIC, key=b"customer-%d" % (i % 5), value=b"order-%d" % i)
        await producer.flush()
    finally:
        await producer.stop()

    members = [AIOKafkaConsumer(TOPIC, bootstrap_servers=BOOTSTRAP, group_id=GROUP,
                                auto_offset_reset="earliest",
                                session_timeout_ms=6000, heartbeat_interval_ms=500)
               for _ in range(2)]
    for consumer in members:
        await consumer.start()
    consumed = []
    try:
        async def until_done():
            while len(consumed) < COUNT:
                for name, consumer in enumerate(members):
                    for records in (await consumer.getmany(timeout_ms=100)).values():
                        consumed.extend((f"member-{name}", r.partition, r.offset, r.value)
                                        for r in records)
        await asyncio.wait_for(until_done(), timeout=20)
    finally:
        for consumer in members:
            await consumer.stop()  # commits (auto-commit) and leaves the group

    for name, partition, offset, value in sorted(consumed, key=lambda r: (r[1], r[2])):
        print(f"{name} partition={partition} offset={offset} value={value.decode()}")
    print(f"consumed {len(consumed)} messages")
    return 0 if len(consumed) == COUNT else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
