"""`kafka-emu groups --describe` shows committed offsets, log-end offsets and lag per partition
against the emulator, with a real client (kafka-python) producing and committing."""

from __future__ import annotations

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from kafka_emu.cli import main
from kafka_emu.testing import make_config, run_in_thread


def test_describe_shows_offsets_and_lag_for_an_empty_group(capsys):
    with run_in_thread(make_config(topics={"orders": 2})) as emu:
        producer = KafkaProducer(bootstrap_servers=emu.bootstrap_servers)
        for i in range(5):
            producer.send("orders", value=b"v%d" % i, partition=0)
        producer.send("orders", value=b"w", partition=1)
        producer.flush()
        producer.close()

        consumer = KafkaConsumer(bootstrap_servers=emu.bootstrap_servers, group_id="billing",
                                 enable_auto_commit=False)
        consumer.assign([TopicPartition("orders", 0)])
        consumer.commit({TopicPartition("orders", 0): OffsetAndMetadata(2, "", -1)})
        consumer.close()

        assert main(["groups", "--bootstrap-server", emu.bootstrap_servers, "--describe",
                     "--group", "billing"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "STATE:          Empty"
    header = out.index(next(line for line in out if line.startswith("GROUP ")))
    assert out[header].split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET",
                                   "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]
    # only partition 0 has a commit; it is owned by nobody (the group is Empty)
    assert out[header + 1].split() == ["billing", "orders", "0", "2", "5", "3", "-", "-", "-"]
    assert out[header + 2] == ""
    assert out[-1] == "Consumer group 'billing' has no active members."
