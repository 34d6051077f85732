"""A consumer that joins a group and polls until it is killed: the crashing member of the
session-expiry scenario (tests/integration/test_control_time.py, bench/bench_control.py).

    python crash_consumer.py CLIENT BOOTSTRAP GROUP TOPIC CLIENT_ID SESSION_MS HEARTBEAT_MS

CLIENT is confluent, kafka-python or aiokafka. It prints "assigned" once it owns partitions,
then keeps polling (and heartbeating) until SIGKILL stops it without a LeaveGroup.
"""

from __future__ import annotations

import sys


def confluent(bootstrap, group, topic, client_id, session_ms, heartbeat_ms):
    from confluent_kafka import Consumer
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
                         "session.timeout.ms": session_ms, "heartbeat.interval.ms": heartbeat_ms,
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    told = False
    while True:
        consumer.poll(0.1)
        if not told and consumer.assignment():
            print("assigned", flush=True)
            told = True


def kafka_python(bootstrap, group, topic, client_id, session_ms, heartbeat_ms):
    from kafka import KafkaConsumer
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
                             session_timeout_ms=session_ms, heartbeat_interval_ms=heartbeat_ms,
                             request_timeout_ms=session_ms + 5000, auto_offset_reset="earliest")
    consumer.subscribe([topic])
    told = False
    while True:
        consumer.poll(timeout_ms=100)
        if not told and consumer.assignment():
            print("assigned", flush=True)
            told = True


def aiokafka(bootstrap, group, topic, client_id, session_ms, heartbeat_ms):
    import asyncio

    from aiokafka import AIOKafkaConsumer

    async def main():
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                    client_id=client_id, session_timeout_ms=session_ms,
                                    heartbeat_interval_ms=heartbeat_ms,
                                    auto_offset_reset="earliest")
        await consumer.start()
        told = False
        while True:
            await consumer.getmany(timeout_ms=100)
            if not told and consumer.assignment():
                print("assigned", flush=True)
                told = True

    asyncio.run(main())


CLIENTS = {"confluent": confluent, "kafka-python": kafka_python, "aiokafka": aiokafka}

if __name__ == "__main__":
    client, bootstrap, group, topic, client_id, session_ms, heartbeat_ms = sys.argv[1:8]
    CLIENTS[client](bootstrap, group, topic, client_id, int(session_ms), int(heartbeat_ms))
