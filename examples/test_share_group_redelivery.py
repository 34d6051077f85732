"""A share group (KIP-932, queues for Kafka) under test with kafka-emu: a worker that takes a
job and stalls keeps it only until its acquisition lock runs out -- made to happen at once by
moving the emulator's clock, not by waiting 30 s -- and the job comes back to another worker
with its delivery count.

Run: pytest examples/test_share_group_redelivery.py
"""

import time

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                   ResourceType)


def worker(emu):
    consumer = ShareConsumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": "workers",
                              "share.acknowledgement.mode": "explicit"})
    consumer.subscribe(["jobs"])
    return consumer


def next_job(consumer, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in consumer.poll(0.2):
            if message.error() is None:
                return message
    raise AssertionError("no job delivered")


@pytest.mark.kafka_emu(topics={"jobs": 1})
def test_a_stalled_worker_s_job_goes_to_another(kafka_emu):
    # share groups start at the log end unless told otherwise: read from the beginning
    admin = AdminClient({"bootstrap.servers": kafka_emu.bootstrap_servers})
    config = ConfigResource(ResourceType.GROUP, "workers", incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest",
                    incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([config]).values():
        future.result(10)
    producer = Producer({"bootstrap.servers": kafka_emu.bootstrap_servers})
    producer.produce("jobs", value=b"resize image 42")
    producer.flush(10)

    stalled = worker(kafka_emu)
    job = next_job(stalled)
    assert job.delivery_count() == 1  # taken, never acknowledged: the worker hangs

    healthy = worker(kafka_emu)
    kafka_emu.advance(30_000)  # group.share.record.lock.duration.ms passes now
    again = next_job(healthy)
    assert (again.offset(), again.delivery_count()) == (job.offset(), 2)
    healthy.acknowledge(again, AcknowledgeType.ACCEPT)
    healthy.commit_sync()

    (partition,) = kafka_emu.share_partitions("workers")
    assert partition["start_offset"] == 1  # done: never delivered again
    healthy.close()
    stalled.close()
