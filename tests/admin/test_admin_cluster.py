"""`kafka-emu groups` against a cluster: groups listed from every broker, and each partition's
log-end offset asked of its leader (another broker answers NOT_LEADER_OR_FOLLOWER)."""

import subprocess
import sys

from confluent_kafka import Producer

from kafka_emu.testing import make_config, run_in_thread


def test_describe_shows_the_log_end_of_partitions_led_by_other_brokers():
    with run_in_thread(make_config(brokers=3, topics={"t": 3})) as emu:
        producer = Producer({"bootstrap.servers": emu.bootstrap_servers})
        for p in range(3):
            for _ in range(p + 1):
                producer.produce("t", b"v", partition=p)
        assert producer.flush(30) == 0
        first = emu.bootstrap_servers.split(",")[0]
        assert {emu.partition("t", p)["leader"] for p in range(3)} == {1, 2, 3}
        emu.set_offsets("g", {("t", 0): 0, ("t", 1): 0, ("t", 2): 0})
        out = subprocess.run([sys.executable, "-m", "kafka_emu", "groups", "--bootstrap-server",
                              first, "--describe", "--group", "g"], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        rows = [line.split() for line in out.stdout.splitlines() if line.startswith("g ")]
        assert [(r[2], r[3], r[4], r[5]) for r in rows] == [
            ("0", "0", "1", "1"), ("1", "0", "2", "2"), ("2", "0", "3", "3")]
