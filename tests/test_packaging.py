"""What a user installs: the wheel and sdist `python -m build` makes, in a fresh venv.

One test, about 60-90 s on a loaded machine (an isolated build, then a venv that installs the
wheel with its `[pytest]` extra and kafka-python from the package index):
- both distributions pass `twine check --strict` (the metadata PyPI would show, the README as
  the long description rendering as Markdown), and carry what they must: the licence,
  `py.typed`, the trace schema, the report's trace reader (sources and built jar), the
  conformance kit's Node clients; the sdist also the CHANGELOG;
- `kafka-emu --version` prints the version `kafka_emu.__version__` holds (its one place), and
  the CHANGELOG's newest section names that version;
- fixture tests written as a user would pass with the plugin the wheel registers, one of them
  forming a real consumer group with kafka-python;
- mypy --strict, resolving imports in that venv, sees the handles' declared result types
  (py.typed shipped, nothing decayed to Any).
"""

from __future__ import annotations

import email
import os
import re
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


    def test_a_real_client_forms_a_group(kafka_emu):
        from kafka import KafkaConsumer, KafkaProducer

        kafka_emu.create_topic("orders", 2)
        producer = KafkaProducer(bootstrap_servers=kafka_emu.bootstrap_servers)
        producer.send("orders", b"first", partition=0).get(timeout=30)
        producer.close()
        consumer = KafkaConsumer("orders", bootstrap_servers=kafka_emu.bootstrap_servers,
                                 group_id="g", auto_offset_reset="earliest",
                                 consumer_timeout_ms=30000)
        try:
            assert next(iter(consumer)).value == b"first"
            view = kafka_emu.wait_for_group("g", "Stable", members=1)
            assert view["state"] == "Stable"
            consumer.commit()
            assert kafka_emu.describe_group("g").state == "Stable"
        finally:
            consumer.close()
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
    run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)

    names = zipfile.ZipFile(wheel).namelist()
    assert "kafka_emu/py.typed" in names
    assert any(n.endswith("licenses/LICENSE") for n in names)
    # the report's trace reader ships built (make builds it; the report tests need it)
    assert f"kafka_emu/report/jvm/{trace_jar.jar_name()}" in names
    assert "kafka_emu/report/jvm/TraceSource.java" in names
    assert "kafka_emu/trace/trace-schema.json" in names
    assert any(n.startswith("kafka_emu/conformance/clients/") and n.endswith(".mjs")
               for n in names)
    sdist_names = tarfile.open(sdist).getnames()
    top = f"kafka_emu-{kafka_emu.__version__}"
    for shipped in ("LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml",
                    "kafka_emu/py.typed"):
        assert f"{top}/{shipped}" in sdist_names, shipped

    metadata = email.message_from_bytes(
        zipfile.ZipFile(wheel).read(f"kafka_emu-{kafka_emu.__version__}.dist-info/METADATA"))
    assert metadata["Name"] == "kafka-emu"
    assert metadata["Version"] == kafka_emu.__version__
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_payload(decode=True).decode("utf-8").strip() == (ROOT / "README.md").read_text().strip()

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    run(venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
        f"{wheel}[pytest]", "kafka-python")
    assert run(venv / "bin" / "kafka-emu", "--version").strip() == \
        f"kafka-emu {kafka_emu.__version__}"

    project = tmp_path / "project"
    project.mkdir()
    (project / "test_user.py").write_text(USER_TEST)
    out = run(venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
              "test_user.py", cwd=project)
    assert "2 passed" in out
    # mypy (this environment's) resolving imports in the fresh venv: only what the wheel ships
    (project / "user_typing.py").write_text(USER_TYPING)
    run(sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
        venv / "bin" / "python", "user_typing.py", cwd=project)
    # the strategies' dependency comes with the [pytest] extra
    where = run(venv / "bin" / "python", "-c",
                "import kafka_emu.testing.strategies, kafka_emu; print(kafka_emu.__file__)",
                cwd=project)
    assert where.startswith(str(venv)), where


def test_the_changelog_names_the_version_in_its_one_place():
    """`kafka_emu.__version__` is the one place the version is written (pyproject reads it);
    the CHANGELOG's newest section must be that version, so a bump without a changelog fails."""
    sections = re.findall(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert sections, "CHANGELOG.md has no '## [version]' section"
    assert sections[0] == kafka_emu.__version__
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'version = {attr = "kafka_emu.__version__"}' in pyproject
    assert not re.search(r'^version\s*=\s*"', pyproject, re.M)
