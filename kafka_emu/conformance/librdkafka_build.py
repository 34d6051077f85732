"""librdkafka's own verifiable client, ``kafkatest_verifiable_client``, built on this machine.

librdkafka keeps ``examples/kafkatest_verifiable_client.cpp`` for Kafka's system tests; the kit
runs it as a client maintainer would (profile ``librdkafka``). kafka-emu ships none of its
source: the program is compiled from Debian's source package of the librdkafka installed here,
so the example and the library it links are the same release.

- the library: the system's ``librdkafka-dev`` (headers, ``librdkafka++``), found with
  ``dpkg-query``; its source version names the source package and the build;
- the source: ``apt-get source --download-only librdkafka=VERSION`` (this needs a ``deb-src``
  entry in apt's sources) into ``<cache>/librdkafka-VERSION/`` (kafka_emu/cache.py), unpacked
  with ``dpkg-source -x`` when dpkg-dev is there (Debian's patches applied), else the one
  example read from the upstream tarball (Debian 2.0.2-1 patches only a Makefile);
- the build: ``$CXX`` (or ``g++``) on that one file, as its Makefile does, against the shared
  libraries instead of the static ones the Makefile uses, into the same directory, written
  under another name and renamed so a half-written binary is never run.

``python -m kafka_emu.conformance.librdkafka_build`` prints the binary's path (building it when
missing), or one line saying what is missing, with exit status 1.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from ..cache import cache_root

PROGRAM = "kafkatest_verifiable_client"
EXAMPLE = f"examples/{PROGRAM}.cpp"
DEV_PACKAGE = "librdkafka-dev"
INSTALL_HINT = "apt-get install librdkafka-dev g++"
TIMEOUT_S = 600


class BuildUnavailable(Exception):
    """Why the client cannot be had here, in one line."""


def installed_version() -> str:
    """The source version of the installed librdkafka-dev (e.g. ``2.0.2-1``)."""
    if shutil.which("dpkg-query") is None:
        raise BuildUnavailable("building it needs a Debian-like system (dpkg-query, apt-get); "
                               "none was found")
    proc = subprocess.run(["dpkg-query", "-W", "-f", "${db:Status-Status} ${source:Version}",
                           DEV_PACKAGE], capture_output=True, text=True, check=False)
    status, _, version = proc.stdout.strip().partition(" ")
    if proc.returncode != 0 or status != "installed" or not version:
        raise BuildUnavailable(f"building it needs {DEV_PACKAGE}, which is not installed "
                               f"({INSTALL_HINT})")
    return version


def build_dir(version: str) -> Path:
    return cache_root() / f"librdkafka-{version}"


def find() -> Path | None:
    """The client already built for the installed librdkafka, or None."""
    try:
        path = build_dir(installed_version()) / PROGRAM
    except BuildUnavailable:
        return None
    return path if path.is_file() and os.access(path, os.X_OK) else None


def client() -> Path:
    """The client's path, built into the cache when it is missing. BuildUnavailable: why not."""
    version = installed_version()
    path = build_dir(version) / PROGRAM
    if path.is_file() and os.access(path, os.X_OK):
        return path
    return build(version, path.parent)


def build(version: str, into: Path) -> Path:
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        raise BuildUnavailable(f"building it needs a C++ compiler (g++), none was found "
                               f"({INSTALL_HINT})")
    into.mkdir(parents=True, exist_ok=True)
    source = example_source(version, into)
    target = into / PROGRAM
    with tempfile.TemporaryDirectory(dir=into) as tmp:
        out = Path(tmp) / PROGRAM
        # The example includes "rdkafkacpp.h" (its Makefile builds inside the tree); the
        # installed header lives in <includedir>/librdkafka.
        cmd = [compiler, "-O1", f"-I{include_dir()}", "-o", str(out), str(source),
               "-lrdkafka++", "-lrdkafka"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                              timeout=TIMEOUT_S)
        if proc.returncode != 0:
            raise BuildUnavailable(f"{' '.join(cmd)} failed: {_last_line(proc.stderr)}")
        out.replace(target)
    return target


def include_dir() -> str:
    prefix = "/usr/include"
    if shutil.which("pkg-config"):
        proc = subprocess.run(["pkg-config", "--variable=includedir", "rdkafka++"],
                              capture_output=True, text=True, check=False)
        prefix = proc.stdout.strip() or prefix
    return f"{prefix}/librdkafka"


def example_source(version: str, into: Path) -> Path:
    """``into/<PROGRAM>.cpp`` from Debian's source package ``librdkafka=version``."""
    wanted = into / f"{PROGRAM}.cpp"
    if wanted.is_file():
        return wanted
    dsc = into / f"librdkafka_{_no_epoch(version)}.dsc"
    if not dsc.is_file():
        if shutil.which("apt-get") is None:
            raise BuildUnavailable("fetching its source needs apt-get; none was found")
        proc = subprocess.run(["apt-get", "source", "--download-only", f"librdkafka={version}"],
                              cwd=into, capture_output=True, text=True, check=False,
                              timeout=TIMEOUT_S)
        if proc.returncode != 0 or not dsc.is_file():
            raise BuildUnavailable(
                f"apt-get source librdkafka={version} failed: {_last_line(proc.stderr)} (it "
                "needs a deb-src entry matching apt's deb sources, then apt-get update)")
    text = _unpacked(dsc, into) if shutil.which("dpkg-source") else _from_tarball(into)
    wanted.write_text(text, encoding="utf-8")
    return wanted


def _unpacked(dsc: Path, into: Path) -> str:
    with tempfile.TemporaryDirectory(dir=into) as tmp:
        tree = Path(tmp) / "tree"
        proc = subprocess.run(["dpkg-source", "--no-check", "-x", str(dsc), str(tree)],
                              capture_output=True, text=True, check=False, timeout=TIMEOUT_S)
        if proc.returncode != 0:
            raise BuildUnavailable(f"dpkg-source -x {dsc.name} failed: "
                                   f"{_last_line(proc.stderr or proc.stdout)}")
        return (tree / EXAMPLE).read_text(encoding="utf-8")


def _from_tarball(into: Path) -> str:
    origs = sorted(into.glob("librdkafka_*.orig.tar.*"))
    if not origs:
        raise BuildUnavailable(f"no upstream tarball of librdkafka in {into}")
    with tarfile.open(origs[-1]) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.split("/", 1)[-1] == EXAMPLE:
                data = tar.extractfile(member)
                if data is not None:
                    return data.read().decode("utf-8")
    raise BuildUnavailable(f"{origs[-1].name} has no {EXAMPLE}")


def _no_epoch(version: str) -> str:
    # Debian's file names leave out a version's epoch ("1:2.0.2-1" -> librdkafka_2.0.2-1.dsc).
    return re.sub(r"^\d+:", "", version)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("E:")]
    return (errors or lines or ["(no output)"])[-1]


def main() -> int:
    try:
        print(client())
    except BuildUnavailable as exc:
        print(f"kafkatest_verifiable_client unavailable: {exc}", file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired as exc:
        print(f"kafkatest_verifiable_client unavailable: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
