"""kafkajs and @platformatic/kafka against kafka-emu (issues 4 and 5).

Each scenario is a Node script in ``tests/integration/node/`` (``<client>.mjs <scenario>
<bootstrap>``) that does the work with the real client, checks what it can itself, and prints one
``RESULT {json}`` line; these tests start an emulator, run the script as a subprocess with a
timeout, and assert on that JSON (and on the emulator's view of the group).

The Node packages are pinned in ``node/package.json`` + ``package-lock.json``; the session fixture
runs ``npm ci`` when ``node_modules`` is missing. Without ``node``/``npm`` on PATH the tests are
skipped, except under ``CI=true`` where they fail: CI is expected to provide Node.

@platformatic/kafka 2.x declares Node >= 22.22 but only needs ``Promise.withResolvers`` from it;
``node/compat.mjs`` defines that on Node 20 so the suite runs on either.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from kafka_emu.broker.events import RequestHandled

NODE_DIR = Path(__file__).parent / "node"
EXAMPLE = Path(__file__).parents[2] / "examples" / "kafkajs_group.mjs"
SCRIPT_TIMEOUT_S = 90  # the scripts bound every wait and have a 60 s watchdog of their own

# Topics every scenario script expects to exist (names are fixed: each test gets a fresh emulator).
TOPICS = {"group-topic": 6, "plain": 3, "gzip": 3, "lz4": 3, "snappy": 3, "resume": 2}

CLIENTS = ["kafkajs", "platformatic"]


# The node_modules fixture (npm ci on first use) lives in tests/conftest.py: the docs' Node
# examples and the ACL tests need the same packages.


def run_node(script: Path, *args: str, cwd: Path = NODE_DIR) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["node", str(script), *args], cwd=cwd, capture_output=True,
                              text=True, timeout=SCRIPT_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{script.name} {' '.join(args)} did not finish in {SCRIPT_TIMEOUT_S}s\n"
                    f"stdout: {exc.stdout!r}\nstderr: {exc.stderr!r}", pytrace=False)


def run_scenario(client: str, scenario: str, emu) -> dict:
    proc = run_node(NODE_DIR / f"{client}.mjs", scenario, emu.bootstrap_servers)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    detail = f"exit {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    assert lines, f"{client} {scenario}: no RESULT line; {detail}"
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["ok"] and proc.returncode == 0, f"{client} {scenario} failed: {result.get('error')}\n{detail}"
    return result


@pytest.fixture
def emu_and_requests(kafka_emu_factory, node_modules):
    """An emulator with the scenario topics, and the (api, version) of every request it served."""
    requests: list[tuple[str, int]] = []

    def observe(event) -> None:
        if isinstance(event, RequestHandled):
            requests.append((event.api, event.version))

    return kafka_emu_factory(topics=TOPICS, observer=observe), requests


def _max_version(requests, api: str) -> int:
    return max((v for a, v in requests if a == api), default=-1)


@pytest.mark.parametrize("client", CLIENTS)
def test_three_members_split_partitions_and_survivors_take_over(client, emu_and_requests):
    emu, requests = emu_and_requests
    result = run_scenario(client, "group", emu)

    before, after, leaver = result["before"], result["after"], result["leaver"]
    assert len(before) == 3 and all(before.values()), before
    assert sorted(p for ps in before.values() for p in ps) == list(range(6)), before
    assert leaver in before and leaver not in after
    assert set(after) == set(before) - {leaver}, (before, after)
    assert sorted(p for ps in after.values() for p in ps) == list(range(6)), after
    assert all(len(partitions) == 3 for partitions in after.values()), after
    # every member closed and left, so the group is empty rather than waiting for timeouts
    assert emu.describe_group(result["group"]).state == "Empty"
    assert {"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup"} <= {a for a, _ in requests}
    if client == "platformatic":  # it only speaks the newest versions; prove we served them
        assert _max_version(requests, "JoinGroup") >= 6
        assert _max_version(requests, "FindCoordinator") >= 4


@pytest.mark.parametrize("client", CLIENTS)
def test_produce_and_consume_1000_messages_intact_and_in_order(client, emu_and_requests):
    emu, _ = emu_and_requests
    result = run_scenario(client, "produce", emu)

    codecs = ["plain", "gzip"] + (["lz4", "snappy"] if client == "platformatic" else [])
    for codec in codecs:
        summary = result[codec]
        assert summary["problems"] == [], (codec, summary)
        assert summary["produced"] == summary["consumed"] == summary["distinct"] == 1000, (codec, summary)
        assert summary["partitions"] == [0, 1, 2], (codec, summary)


@pytest.mark.parametrize("client", CLIENTS)
def test_new_member_resumes_from_committed_offsets(client, emu_and_requests):
    emu, requests = emu_and_requests
    result = run_scenario(client, "resume", emu)

    assert len(result["first"]) == 20
    assert sum(result["committed"].values()) == 20, result["committed"]  # next offset per partition
    assert result["second_seen"] == result["second_produced"], result
    assert "OffsetCommit" in {a for a, _ in requests} and "OffsetFetch" in {a for a, _ in requests}
    if client == "platformatic":
        assert _max_version(requests, "OffsetFetch") >= 8


@pytest.mark.parametrize("client", CLIENTS)
def test_admin_creates_and_deletes_topics(client, emu_and_requests):
    emu, requests = emu_and_requests
    result = run_scenario(client, "admin", emu)

    assert result["partitions"] == 3
    assert result["listed"] == ["admin-a", "admin-b"]
    assert result["listed_after_delete"] == ["admin-b"]
    if client == "kafkajs":
        assert result["created"] is True
        assert result["created_again"] is False  # kafkajs' answer to TOPIC_ALREADY_EXISTS
        assert result["delete_unknown_error"] == "UNKNOWN_TOPIC_OR_PARTITION"
    else:
        assert result["created"] == [["admin-a", 3], ["admin-b", 3]]
        assert result["create_again_error"] == ["TOPIC_ALREADY_EXISTS"]
        assert result["delete_unknown_error"] == ["UNKNOWN_TOPIC_OR_PARTITION"]


def test_kafkajs_group_example_runs(kafka_emu, node_modules, tmp_path):
    """examples/kafkajs_group.mjs, run verbatim next to a node_modules with kafkajs in it.

    ESM ignores NODE_PATH, so the example is copied into a temporary directory whose
    node_modules is a symlink to the test suite's: exactly what a user gets after
    ``npm install kafkajs`` beside their copy, and nothing is written into the repository.
    """
    (tmp_path / "node_modules").symlink_to(node_modules, target_is_directory=True)
    script = tmp_path / EXAMPLE.name
    shutil.copyfile(EXAMPLE, script)
    proc = run_node(script, kafka_emu.bootstrap_servers, cwd=tmp_path)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "consumed 5 messages" in proc.stdout
    for word in ["alpha", "beta", "gamma", "delta", "epsilon"]:
        assert f"= {word}" in proc.stdout, proc.stdout
    assert kafka_emu.describe_group("example-group").state == "Empty"
