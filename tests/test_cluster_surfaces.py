"""A cluster from every surface: ``kafka-emu serve --brokers 3``, the fixtures' ``brokers=``,
and the control operations over HTTP and ``kafka-emu ctl``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from functools import partial

import pytest

from kafka_emu.testing import make_config, run_in_thread


def test_serve_brokers_prints_every_broker_first_and_each_one_answers():
    from confluent_kafka.admin import AdminClient
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                             "--brokers", "3", "--rack", "a", "--rack", "b", "--log-level",
                             "WARNING"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        bootstrap = proc.stdout.readline().strip()
        addresses = bootstrap.split(",")
        assert len(addresses) == 3 and len(set(addresses)) == 3
        for address in addresses:  # each broker alone lists the whole cluster
            admin = AdminClient({"bootstrap.servers": address})
            brokers = admin.list_topics(timeout=10).brokers
            assert sorted(f"{b.host}:{b.port}" for b in brokers.values()) == sorted(addresses)
            assert sorted(brokers) == [1, 2, 3]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


@pytest.mark.parametrize("args, fragment", [
    (["--brokers", "0"], "outside 1-64"),
    (["--brokers", "x"], "invalid broker count"),
    (["--brokers", "2", "--rack", "a", "--rack", "b", "--rack", "c"], "3 --rack values"),
    (["--port", "65535", "--brokers", "2"], "go past 65535"),
])
def test_bad_cluster_flags_get_one_line_and_exit_code_2(args, fragment):
    result = subprocess.run([sys.executable, "-m", "kafka_emu", "serve", *args],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.kafka_emu(brokers=3)
def test_the_fixture_marker_starts_a_cluster(kafka_emu):
    assert [b["node_id"] for b in kafka_emu.brokers()] == [1, 2, 3]
    assert len(kafka_emu.bootstrap_servers.split(",")) == 3


def _call(url, method="GET", body=None, *, token):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())["result"]
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_cluster_operations_over_http_and_ctl():
    with run_in_thread(make_config(brokers=3), control_port=0) as emu:
        base = emu.control_url
        call = partial(_call, token=emu.control_token)
        status, stopped = call(f"{base}/brokers/2/stop", "POST")
        assert status == 200 and stopped["running"] is False
        status, listed = call(f"{base}/brokers")
        assert [b["running"] for b in listed] == [True, False, True]
        status, error = call(f"{base}/brokers/2/stop", "POST")
        assert status == 400 and "stopped" in json.dumps(error)
        status, error = call(f"{base}/brokers/9/start", "POST")
        assert status == 404
        status, started = call(f"{base}/brokers/2/start", "POST")
        assert status == 200 and started["running"] is True
        coordinator = emu.coordinator_of("g")
        target = coordinator % 3 + 1
        result = subprocess.run(
            [sys.executable, "-m", "kafka_emu", "ctl", "--control", base.split("//")[1],
             "--control-token", emu.control_token, "move-coordinator", "--group-id", "g", "--to", str(target), "--load-ms", "0"],
            capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["coordinator"] == target
        assert emu.coordinator_of("g") == target
        status, moved = call(f"{base}/partitions/__consumer_offsets/0/move-leader", "POST",
                              {"to": 1})
        assert status == 200 and moved["leader"] == 1
