"""Fixtures more than one test folder uses."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

LEFT_FREE = 3 * 4096  # what a filled disk keeps free: less than any chunk a trace test writes


@pytest.fixture
def small_disk(tmp_path):
    """A 12 MiB tmpfs of the test's own (the trace writer wants 1 MiB free to start), for tests
    of a disk that fills; mounting needs root, as CI and the house's containers run."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(disk)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill (needs root): {done.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def _fill(disk: Path, leave: int = LEFT_FREE) -> Path:
    """Fill the disk but for about ``leave`` bytes; the filler's path (delete it to drain)."""
    filler = disk / "filler"
    block = os.urandom(1 << 16)
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            try:
                os.write(fd, block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
        os.ftruncate(fd, max(0, os.fstat(fd).st_size - leave))
    finally:
        os.close(fd)
    return filler


@pytest.fixture
def fill_disk() -> Callable[..., Path]:
    """``fill_disk(small_disk, leave=LEFT_FREE)`` fills it; returns the filler to delete."""
    return _fill


NODE_DIR = Path(__file__).parent / "integration" / "node"
NPM_TIMEOUT_S = 600


def _missing_node_tools(*tools: str) -> None:
    """Skip (or, under CI=true, fail) when a command-line tool the test needs is not on PATH."""
    import shutil

    missing = [t for t in tools if shutil.which(t) is None]
    if not missing:
        return
    what = f"{', '.join(missing)} not on PATH"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what}: CI must install Node.js 20+ with npm (see .ci/run)", pytrace=False)
    pytest.skip(f"{what}: install Node.js 20+ and npm to run the kafkajs/@platformatic/kafka tests")


@pytest.fixture(scope="session")
def node_modules() -> Path:
    """tests/integration/node/node_modules, installed from the lock file on first use: the Node
    client tests, the ACL tests with kafkajs and the docs' Node examples all need it, and on a
    fresh clone whichever runs first installs it."""
    _missing_node_tools("node", "npm")
    modules = NODE_DIR / "node_modules"
    if not (modules / ".package-lock.json").exists():
        cmd = ["npm", "ci"] if (NODE_DIR / "package-lock.json").exists() else ["npm", "install"]
        proc = subprocess.run(cmd + ["--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True,
                              text=True, timeout=NPM_TIMEOUT_S)
        if proc.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} in {NODE_DIR} failed:\n{proc.stdout}\n{proc.stderr}",
                        pytrace=False)
    return modules

