"""Isolated environments holding one version of one built-in client's library, for the matrix.

Each (library, version) gets a directory under kafka-emu's cache (``kafka_emu/cache.py``:
``$KAFKA_EMU_CACHE``, else ``$XDG_CACHE_HOME/kafka-emu``, else ``~/.cache/kafka-emu``), made once
and reused:

- Python libraries: ``<cache>/envs/py3.11-<dist>-<version>/``, a venv made by this Python with
  ``pip install <dist>==<version> attrs`` (wheels only, so a version without a wheel for this
  Python is refused in seconds instead of compiling librdkafka), and a ``.pth`` file putting a
  directory on its path whose only entry is a link to this kafka-emu package. The kit's client
  programs (``python -m kafka_emu.conformance.clients.X``) then import that env's library and
  this checkout's contract code; ``attrs`` is the one dependency the programs' imports pull in.
- kafkajs: ``<cache>/kafkajs-<version>/`` with ``npm install kafkajs@<version>`` (``node.py``),
  the layout the single-version kit already uses.

A version that cannot be installed is an :class:`EnvUnavailable` carrying pip's or npm's last
words; the failure is remembered in the env's directory (``install-failed.txt``) so the next
matrix says so at once -- delete the directory to try again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

from ..cache import cache_root

PIP_TIMEOUT_S = 900
DONE, FAILED = "installed.txt", "install-failed.txt"


class EnvUnavailable(RuntimeError):
    """This version of the library cannot be installed here (the message says why)."""


def _py_tag() -> str:
    return f"py{sys.version_info.major}.{sys.version_info.minor}"


def python_env_dir(dist: str, version: str) -> Path:
    return cache_root() / "envs" / f"{_py_tag()}-{dist}-{version}"


def env_python(where: Path) -> Path:
    return where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def python_env(dist: str, version: str, *, log=None) -> Path:
    """The Python of a venv holding ``dist==version`` (made on first use); EnvUnavailable when
    pip cannot install it for this Python."""
    where = python_env_dir(dist, version)
    _link_kit(where)
    if (where / DONE).exists():
        return env_python(where)
    if (where / FAILED).exists():
        raise EnvUnavailable((where / FAILED).read_text(encoding="utf-8").strip() +
                             f" (remembered; remove {where} to retry)")
    if log is not None:
        log(f"installing {dist}=={version} into {where} (once)")
    if not env_python(where).exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(where)
        _link_kit(where)
    proc = subprocess.run(
        [str(env_python(where)), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--only-binary", ":all:", f"{dist}=={version}", "attrs"],
        capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False)
    if proc.returncode != 0:
        why = _last_words(proc.stderr or proc.stdout)
        reason = f"cannot install {dist}=={version} for Python {sys.version.split()[0]}: {why}"
        if "timed out" not in why.lower() and "connection" not in why.lower():
            (where / FAILED).write_text(reason + "\n", encoding="utf-8")  # not a network blip
        raise EnvUnavailable(reason)
    (where / DONE).write_text(f"{dist}=={version}\n", encoding="utf-8")
    return env_python(where)


def _last_words(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    return " / ".join((errors or lines)[-2:])[:400] or "pip failed without a message"


def _link_kit(where: Path) -> None:
    """``<env>/kit/kafka_emu`` -> this package, and a .pth naming ``<env>/kit``: the env sees
    kafka-emu's client programs without kafka-emu (or this venv's libraries) installed in it.
    Refreshed each time, so a moved checkout is followed."""
    if not where.exists():
        return
    kit = where / "kit"
    kit.mkdir(exist_ok=True)
    link = kit / "kafka_emu"
    package = Path(__file__).resolve().parent.parent
    if link.is_symlink() and Path(os.readlink(link)) == package:
        pass
    else:
        if link.is_symlink() or link.exists():
            link.unlink() if link.is_symlink() else shutil.rmtree(link)
        link.symlink_to(package, target_is_directory=True)
    for site in (where / "lib").glob("python*/site-packages"):
        pth = site / "kafka_emu_kit.pth"
        if not pth.exists() or pth.read_text(encoding="utf-8").strip() != str(kit):
            pth.write_text(f"{kit}\n", encoding="utf-8")


def installed_version(python: Path, dist: str) -> str | None:
    """The version of ``dist`` that ``python`` sees (what the matrix labels the column with)."""
    proc = subprocess.run(
        [str(python), "-c", "import sys, importlib.metadata as m; print(m.version(sys.argv[1]))",
         dist], capture_output=True, text=True, timeout=60, check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None
