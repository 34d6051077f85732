"""The built-in copiers (confluent-kafka, aiokafka, kafka-python, kafkajs) speak Kafka's
TransactionalMessageCopier contract: its flags (Kafka's service passes --broker-list and
--consumer-group), its JSON keys, remaining 0 at the end of a --max-messages run, and the records
copied exactly once to the same output partition."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from kafka_emu.conformance.txn_scenarios import copier_command
from kafka_emu.log.records import Record, build_batch
from kafka_emu.testing.emulator import make_config, run_in_thread

PROGRESS_KEYS = {"progress", "totalProcessed", "consumed", "remaining", "time", "stage"}
SHUTDOWN_KEYS = {"shutdown_complete", "totalProcessed", "consumed", "remaining", "time"}


def built_in(copier: str) -> tuple[str, ...]:
    if copier == "kafkajs":
        if shutil.which("node") is None:
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail("CI must provide Node.js for the kafkajs copier")
            pytest.skip("Node.js is not installed")
    else:
        pytest.importorskip({"kafka-python": "kafka"}.get(copier, copier.replace("-", "_")))
    return copier_command(copier, None)[1]


@pytest.mark.parametrize("copier", ["confluent-kafka", "aiokafka", "kafka-python", "kafkajs"])
def test_a_copier_prints_kafkas_events_and_copies_max_messages(copier):
    argv = built_in(copier)
    with run_in_thread(make_config(topics={"in": 2, "out": 2})) as emu:
        def seed():
            log = emu.broker.topics.partition("in", 1)
            log.append(build_batch([Record(value=b"%d" % i, timestamp_ms=0)
                                    for i in range(20)]), emu.broker.now_ms())
        emu._call(seed)
        out = subprocess.run(
            [*argv, "--broker-list", emu.bootstrap_servers, "--input-topic", "in",
             "--input-partition", "1", "--output-topic", "out", "--transactional-id", "c-1",
             "--consumer-group", "g", "--max-messages", "12", "--transaction-size", "5"],
            capture_output=True, text=True, timeout=120, check=True).stdout
        events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        ends = emu._call(lambda: [emu.broker.topics.partition("out", p).log_end_offset
                                  for p in range(2)])
    progress = [e for e in events if "progress" in e]
    assert progress and all(set(e) == PROGRESS_KEYS for e in progress)
    assert {e["stage"] for e in progress} == {"ProcessLoop"}
    assert progress[0]["remaining"] == 12 and progress[0]["totalProcessed"] == 0
    *_, last = events
    assert set(last) == SHUTDOWN_KEYS and last["shutdown_complete"] == "c-1"
    assert last["remaining"] <= 0 and last["totalProcessed"] >= 12
    # copied to the same partition number, each transaction ended by a marker
    assert ends[0] == 0 and ends[1] > last["totalProcessed"]
