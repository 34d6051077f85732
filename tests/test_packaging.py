"""What a user installs: the wheel and sdist `python -m build` makes, in a fresh venv.

One test, about 60 s on a loaded machine (an isolated build, then a venv that installs the
wheel with its `[pytest]` extra from the package index): `kafka-emu --version` must print the
version `kafka_emu.__version__` holds, a fixture test written as a user would must pass with
the plugin the wheel registers, and mypy --strict, resolving imports in that venv, must see the
handles' declared result types (py.typed shipped, nothing decayed to Any).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import kafka_emu
from kafka_emu.report import trace_jar

ROOT = Path(__file__).resolve().parents[1]

USER_TEST = textwrap.dedent('''
    import socket

    def test_fixture_serves(kafka_emu):
        kafka_emu.create_topic("orders", 3)
        with socket.create_connection((kafka_emu.host, kafka_emu.port), timeout=5):
            pass
        assert kafka_emu.list_groups() == ()
        assert kafka_emu.advance(0)["advanced_ms"] == 0
''')

# What the user's mypy sees of the installed wheel (py.typed): the handles' real result types.
USER_TYPING = textwrap.dedent('''
    from typing_extensions import assert_type

    from kafka_emu.control.results import Advanced, GroupView
    from kafka_emu.testing import Emulator


    def check(emu: Emulator) -> None:
        assert_type(emu.advance(10), Advanced)
        assert_type(emu.group_view("g"), GroupView)
        assert_type(emu.group_view("g")["total_lag"], int)
        assert_type(emu.describe_group("g").state, str)
''')


def run(*cmd, cwd=None, timeout=300):
    # Without PYTHONPATH: the fresh venv must see only what the wheel installed, never this tree.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env=env)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc.stdout


def test_wheel_installs_in_a_fresh_venv_and_its_fixtures_work(tmp_path):
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "build", "--outdir", dist, ROOT)
    (wheel,) = dist.glob("kafka_emu-*.whl")
    (sdist,) = dist.glob("kafka_emu-*.tar.gz")
    assert wheel.name.startswith(f"kafka_emu-{kafka_emu.__version__}-")

    names = zipfile.ZipFile(wheel).namelist()
    assert "kafka_emu/py.typed" in names
    assert any(n.endswith("licenses/LICENSE") for n in names)
    # the report's trace reader ships built (make builds it; the report tests need it)
    assert f"kafka_emu/report/jvm/{trace_jar.jar_name()}" in names
    assert "kafka_emu/report/jvm/TraceSource.java" in names
    sdist_names = tarfile.open(sdist).getnames()
    assert f"kafka_emu-{kafka_emu.__version__}/LICENSE" in sdist_names

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    run(venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
        f"{wheel}[pytest]")
    assert run(venv / "bin" / "kafka-emu", "--version").strip() == \
        f"kafka-emu {kafka_emu.__version__}"

    project = tmp_path / "project"
    project.mkdir()
    (project / "test_user.py").write_text(USER_TEST)
    out = run(venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
              "test_user.py", cwd=project)
    assert "1 passed" in out
    # mypy (this environment's) resolving imports in the fresh venv: only what the wheel ships
    (project / "user_typing.py").write_text(USER_TYPING)
    run(sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
        venv / "bin" / "python", "user_typing.py", cwd=project)
    # the strategies' dependency comes with the [pytest] extra
    where = run(venv / "bin" / "python", "-c",
                "import kafka_emu.testing.strategies, kafka_emu; print(kafka_emu.__file__)",
                cwd=project)
    assert where.startswith(str(venv)), where
