"""The clients test_cluster_clients.py does not cover, on a 3-broker kafka-emu (issue 13): kcat,
@platformatic/kafka and kafka-python 2.3. Each produces to a topic whose partition leaders are
spread over the three brokers and a consumer group reads every record exactly once; for
@platformatic/kafka and kafka-python 2.3 the group's coordinator also moves midway and the group
must keep consuming with no record lost.

Each client runs the way the rest of the suite runs it (and is skipped, or failed under
CI=true, the same way when missing): kcat as a subprocess (test_kcat.py), @platformatic/kafka as
a Node script under node/ (test_node_clients.py), kafka-python 2.3 as a script in .venv-kp2
(kp2/test_kafka_python_2.py).
"""

from __future__ import annotations

import json
import subprocess
import time

from .helpers import assert_disjoint_cover, stable_assignment, unique, wait_until
from .kp2.test_kafka_python_2 import kp2_python  # noqa: F401 -- a fixture (skips without .venv-kp2)
from .test_kcat import FORMAT, TIMEOUT_S, kcat, parse, run_kcat, stop_members  # noqa: F401 -- kcat: a fixture
from .test_node_clients import NODE_DIR, run_node  # node_modules: tests/conftest.py

PARTITIONS = 6
SETTINGS = {"emu.coordinator.load.time.ms": 300}


def spread_topic(emu, topic: str) -> None:
    """A topic of PARTITIONS partitions, three replicas each, led by every broker."""
    emu.create_topic(topic, PARTITIONS, replication_factor=3)
    leaders = {emu.partition(topic, p)["leader"] for p in range(PARTITIONS)}
    assert leaders == {1, 2, 3}, f"partition leaders not spread over the brokers: {leaders}"


def test_kcat_balanced_consumers_read_every_record_once_on_a_cluster(
        kcat, kafka_emu_factory, tmp_path):  # noqa: F811 -- the fixture
    emu = kafka_emu_factory(SETTINGS, brokers=3)
    topic, group = unique("kcat-cluster"), unique("kcat-group")
    spread_topic(emu, topic)
    procs, outputs = [], []
    try:
        for i in range(2):  # -u: unbuffered, so the test sees each record as kcat prints it
            out = (tmp_path / f"member{i}.out").open("w")
            outputs.append(out)
            procs.append(subprocess.Popen(
                [kcat, "-b", emu.bootstrap_servers, "-q", "-u", "-G", group, "-f", FORMAT,
                 "-X", "session.timeout.ms=30000", "-X", "heartbeat.interval.ms=500",
                 "-X", "auto.offset.reset=earliest", "-X", "fetch.wait.max.ms=100", topic],
                stdout=out, stderr=subprocess.PIPE, text=True))
        assignment = wait_until(lambda: stable_assignment(emu, group, 2), timeout=60,
                                message="two kcat members in a Stable group")
        assert all(assignment.values()), assignment
        assert_disjoint_cover(assignment.values(), topic, PARTITIONS)

        lines = [f"k{i}:v{i}" for i in range(300)]  # keys hash over every partition
        run_kcat(kcat, emu, "-P", "-t", topic, "-K", ":", "-X", "acks=all",
                 stdin="\n".join(lines) + "\n")

        def read(i):
            return parse((tmp_path / f"member{i}.out").read_text())

        def consumed():
            rows = read(0) + read(1)
            return rows if len(rows) >= len(lines) else None

        wait_until(consumed, timeout=60, message=f"{len(lines)} records across both members")
        time.sleep(1.0)  # a grace period: a record read twice would show up now
        rows = read(0) + read(1)
        assert sorted(f"{k}:{v}" for _, _, k, v, _ in rows) == sorted(lines)  # each exactly once
        assert len({p for p, *_ in rows}) == PARTITIONS  # every leader served records
        by_member = [{p for p, *_ in read(i)} for i in range(2)]
        assert not (by_member[0] & by_member[1]), f"a partition read by both: {by_member}"
    finally:
        stop_members(procs, outputs)
    wait_until(lambda: emu.describe_group(group).state == "Empty", timeout=30,
               message="group Empty after both kcat members left")


def test_kafka_python_2_group_keeps_consuming_across_a_coordinator_move(
        kafka_emu_factory, kp2_python, monkeypatch):  # noqa: F811 -- the fixture
    from .kp2.test_kafka_python_2 import SCRIPT
    emu = kafka_emu_factory(SETTINGS, brokers=3, control_port=0)
    topic, group = unique("kp2-cluster"), unique("kp2-group")
    spread_topic(emu, topic)
    monkeypatch.setenv("KAFKA_EMU_CONTROL", emu.control_url)
    monkeypatch.setenv("KAFKA_EMU_CONTROL_TOKEN", emu.control_token)
    script = SCRIPT.with_name("cluster_script.py")
    try:
        proc = subprocess.run([str(kp2_python), str(script), emu.bootstrap_servers, topic, group],
                              capture_output=True, text=True, timeout=240, cwd="/")
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"kafka-python 2 script hung:\n{exc.stdout}\n{exc.stderr}") from None
    assert proc.returncode == 0, f"kafka-python 2 script failed:\n{proc.stdout}\n{proc.stderr[-4000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["kafka_python_version"].startswith("2."), result["kafka_python_version"]
    assert result["coordinator"] == [result["coordinator"][0], result["target"]], result
    assert result["coordinator"][0] != result["target"]
    assert (result["state_after"], result["members_after"]) == ("Stable", 3), result
    assert result["generation"][0] == result["generation"][1], result  # reloaded, not rebalanced
    assert sorted(result["seen"]) == list(range(result["produced"])) and result["produced"] == 300


def test_platformatic_group_keeps_consuming_across_a_coordinator_move(
        kafka_emu_factory, node_modules, monkeypatch):  # noqa: F811 -- the fixture
    emu = kafka_emu_factory(SETTINGS, brokers=3, control_port=0)
    spread_topic(emu, "cluster-topic")
    monkeypatch.setenv("KAFKA_EMU_CONTROL", emu.control_url)
    monkeypatch.setenv("KAFKA_EMU_CONTROL_TOKEN", emu.control_token)
    proc = run_node(NODE_DIR / "platformatic_cluster.mjs", "move", emu.bootstrap_servers)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"no RESULT line: {proc.stdout[-3000:]} {proc.stderr[-3000:]}"
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["ok"], result.get("error")
    assert result["coordinator"] == [result["coordinator"][0], result["target"]], result
    assert result["coordinator"][0] != result["target"]
    assert (result["state_after"], result["members_after"]) == ("Stable", 3), result
    assert result["generation"][0] == result["generation"][1], result  # reloaded, not rebalanced
    assert result["produced"] == 300
    assert sorted(result["seen"]) == list(range(300)), (len(result["seen"]), result["errors"])
