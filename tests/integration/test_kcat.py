"""kcat (librdkafka's command-line client) against kafka-emu (issue 5).

kcat runs as a subprocess with timeouts: ``-P`` produces lines from stdin (``-K`` splits keys,
``-H`` adds headers, ``-z`` compresses), ``-C -e`` consumes a topic to its end, and ``-G`` joins a
balanced consumer group whose assignment the test reads back with ``emu.describe_group``.
Without kcat on PATH the tests are skipped, except under ``CI=true`` where they fail (CI installs
the Debian package ``kcat``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest

from .helpers import HEARTBEAT_MS, SESSION_TIMEOUT_MS, assert_disjoint_cover, stable_assignment, wait_until

TIMEOUT_S = 30
FORMAT = r"%p|%o|%k|%s|%h\n"  # partition|offset|key|value|headers


@pytest.fixture(scope="session")
def kcat() -> str:
    path = shutil.which("kcat")
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("kcat not on PATH: CI must install it (apt-get install -y kcat)", pytrace=False)
        pytest.skip("kcat not on PATH: install it (Debian/Ubuntu: apt-get install -y kcat) to run these tests")
    return path


def run_kcat(kcat: str, emu, *args: str, stdin: str | None = None) -> str:
    cmd = [kcat, "-b", emu.bootstrap_servers, "-q", *args]
    try:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(cmd)} did not finish in {TIMEOUT_S}s; stderr: {exc.stderr!r}", pytrace=False)
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stderr}"
    return proc.stdout


def stop_members(procs: list[subprocess.Popen], outputs: list) -> None:
    """Stop balanced kcat consumers as a user would (SIGINT: kcat leaves the group), killing
    any that do not exit in time, and close their output files."""
    for proc in procs:
        proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for out in outputs:
        out.close()


def parse(out: str) -> list[tuple[int, int, str, str, str]]:
    rows = []
    complete = out[:out.rfind("\n") + 1]  # a running kcat may be mid-line
    for line in complete.splitlines():
        partition, offset, key, value, headers = line.split("|", 4)
        rows.append((int(partition), int(offset), key, value, headers))
    return rows


@pytest.mark.parametrize("compression", [None, "gzip", "lz4", "snappy"])
def test_produce_with_keys_and_headers_then_consume_to_end(kcat, kafka_emu_factory, compression):
    emu = kafka_emu_factory(topics={"lines": 3})
    lines = [f"key-{i % 7}:value {i}" for i in range(300)]
    z = ["-z", compression] if compression else []
    run_kcat(kcat, emu, "-P", "-t", "lines", "-K", ":", "-H", "source=kcat", "-H", "run=1", *z,
             stdin="\n".join(lines) + "\n")

    rows = parse(run_kcat(kcat, emu, "-C", "-t", "lines", "-o", "beginning", "-e", "-f", FORMAT))

    assert sorted(f"{k}:{v}" for _, _, k, v, _ in rows) == sorted(lines)
    assert {h for *_, h in rows} == {"source=kcat,run=1"}
    for p in {p for p, *_ in rows}:  # offsets dense from 0; per key, production order
        assert [o for q, o, *_ in rows if q == p] == list(range(sum(1 for q, *_ in rows if q == p)))
    for key in {k for _, _, k, _, _ in rows}:
        values = [int(v.split()[1]) for _, _, k, v, _ in rows if k == key]
        assert values == sorted(values), key
        assert len({p for p, _, k, _, _ in rows if k == key}) == 1, f"key {key} spread over partitions"


def test_consume_single_partition_from_offset(kcat, kafka_emu_factory):
    emu = kafka_emu_factory(topics={"one": 2})
    run_kcat(kcat, emu, "-P", "-t", "one", "-p", "1", stdin="".join(f"m{i}\n" for i in range(10)))

    rows = parse(run_kcat(kcat, emu, "-C", "-t", "one", "-p", "1", "-o", "4", "-e", "-f", FORMAT))

    assert [(p, o, v) for p, o, _, v, _ in rows] == [(1, i, f"m{i}") for i in range(4, 10)]
    assert run_kcat(kcat, emu, "-C", "-t", "one", "-p", "0", "-o", "beginning", "-e") == ""


def test_two_balanced_consumers_split_the_topic_and_consume_everything(kcat, kafka_emu_factory, tmp_path):
    emu = kafka_emu_factory(topics={"shared": 4})
    group = "kcat-group"
    procs, outputs = [], []
    try:
        for i in range(2):  # -u: unbuffered, so the test sees each message as kcat prints it
            out = (tmp_path / f"member{i}.out").open("w")
            outputs.append(out)
            procs.append(subprocess.Popen(
                [kcat, "-b", emu.bootstrap_servers, "-q", "-u", "-G", group, "-f", FORMAT,
                 "-X", f"session.timeout.ms={SESSION_TIMEOUT_MS}",
                 "-X", f"heartbeat.interval.ms={HEARTBEAT_MS}",
                 "-X", "auto.offset.reset=earliest", "-X", "fetch.wait.max.ms=100", "shared"],
                stdout=out, stderr=subprocess.PIPE, text=True))

        assignment = wait_until(lambda: stable_assignment(emu, group, 2), timeout=TIMEOUT_S,
                                message="two kcat members in a Stable group")
        assert all(assignment.values()), assignment
        assert_disjoint_cover(assignment.values(), "shared", 4)

        lines = [f"k{i}:v{i}" for i in range(200)]
        run_kcat(kcat, emu, "-P", "-t", "shared", "-K", ":", stdin="\n".join(lines) + "\n")

        def consumed():
            rows = [r for i in range(2) for r in parse((tmp_path / f"member{i}.out").read_text())]
            return rows if len(rows) >= len(lines) else None

        rows = wait_until(consumed, timeout=TIMEOUT_S, message="200 messages across both members")
        assert sorted(f"{k}:{v}" for _, _, k, v, _ in rows) == sorted(lines)
        by_member = [{p for p, *_ in parse((tmp_path / f"member{i}.out").read_text())} for i in range(2)]
        assert not (by_member[0] & by_member[1]), f"a partition consumed by both members: {by_member}"
    finally:
        stop_members(procs, outputs)

    assert wait_until(lambda: emu.describe_group(group).state == "Empty", timeout=10,
                      message="group Empty after both kcat members left")
