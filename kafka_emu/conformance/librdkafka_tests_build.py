"""librdkafka's own test runner (``tests/test-runner``), built on this machine from a pinned source.

librdkafka's real-broker share consumer tests (``tests/0170``-``0190``) run against kafka-emu
(``librdkafka_share_tests.py``). kafka-emu ships none of librdkafka's code: the source comes
from the npm registry, whose ``@confluentinc/kafka-javascript`` package carries librdkafka's
whole tree (``package/deps/librdkafka``, tests included), pinned by version and by the
registry's sha512 integrity, which is checked before anything is unpacked.

- the source: ``npm pack @confluentinc/kafka-javascript@NPM_VERSION`` into
  ``<cache>/librdkafka-tests-LIBRDKAFKA_VERSION-<build id>/`` (kafka_emu/cache.py; the id
  is a digest of the flags and programs below, so a change builds anew), its digest compared
  with ``INTEGRITY``, ``package/deps/librdkafka`` unpacked beside it (and its ``rdkafka.h``
  checked to be ``LIBRDKAFKA_VERSION``);
- the libraries: librdkafka's ``./configure`` (``CONFIGURE_FLAGS``: no TLS, SASL or libcurl,
  which the share tests do not use; zlib and zstd required, for 0171's codecs; no
  optimisation: the unoptimised build compiles about ten times faster and the tests wait on the
  broker, not the CPU) and ``make libs``;
- the runner: ``make -C tests test-runner`` with the Makefile's own ``TESTSRCS_C`` variable
  naming only the share test programs (``TEST_PROGRAMS``) plus one generated file that
  defines every other program of ``test.c``'s list as a skip -- no upstream file is changed,
  and the build compiles 20 test files instead of 200.

Each step runs once (a stamp per step); ``make`` runs with ``-j2``, as many cores as CI has.
A lock file keeps two builds from racing in one cache directory. ``BuildUnavailable`` says in
one line what is missing (npm, a compiler, ``libzstd-dev``, ...); the whole output of a failed
step is kept in ``build.log`` beside the tree.

``python -m kafka_emu.conformance.librdkafka_tests_build`` prints the runner's path (building it
when missing), or one line saying what is missing, with exit status 1.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..cache import cache_root

NPM_PACKAGE = "@confluentinc/kafka-javascript"
NPM_VERSION = "1.10.1"
# `npm view @confluentinc/kafka-javascript@1.10.1 dist.integrity`
INTEGRITY = ("sha512-KVePUBn21EqCVP9mfxzEuM3SYJHHEF7X+iiC2e43QQgDSyEaksInmCGooT3w5q+cNAdkSCrK71j0"
             "ICfqoSqZLw==")
LIBRDKAFKA_VERSION = "2.15.1"
RD_KAFKA_VERSION = 0x020F01FF  # rdkafka.h's RD_KAFKA_VERSION for LIBRDKAFKA_VERSION
TREE_IN_PACKAGE = "package/deps/librdkafka/"
CONFIGURE_FLAGS = ("--disable-ssl", "--disable-sasl", "--disable-gssapi", "--disable-curl",
                   "--disable-lz4-ext", "--disable-optimization",
                   "--disable-debug-symbols")
# librdkafka's share consumer tests that need a real broker (TEST_BRKVER(4, 2, 0, 0)); the
# mock-cluster ones (0155-0158, 0182, 0183) test librdkafka against its own mock.
TEST_PROGRAMS = ("0170", "0171", "0172", "0173", "0174", "0175", "0176", "0177", "0178",
                 "0179", "0180", "0181", "0184", "0185", "0186", "0190")
# what 0171's do_test_all_compression_codecs needs beside the built-in lz4 and snappy
REQUIRED_FEATURES = {"ZLIB": "zlib1g-dev", "ZSTD": "libzstd-dev"}
UNBUILT = "kafka_emu_unbuilt_tests.c"
INSTALL_HINT = "apt-get install g++ make libzstd-dev zlib1g-dev"
JOBS = "-j2"
TIMEOUT_S = 1800


class BuildUnavailable(Exception):
    """Why the runner cannot be had here, in one line."""


def build_dir() -> Path:
    """One directory per librdkafka version and way of building it (flags, programs)."""
    how = hashlib.sha256(repr((NPM_VERSION, CONFIGURE_FLAGS, TEST_PROGRAMS)).encode())
    return cache_root() / f"librdkafka-tests-{LIBRDKAFKA_VERSION}-{how.hexdigest()[:8]}"


def tree() -> Path:
    return build_dir() / "librdkafka"


def runner_path() -> Path:
    return tree() / "tests" / "test-runner"


def library_dirs() -> list[Path]:
    """What the runner's LD_LIBRARY_PATH needs (it links the tree's shared libraries)."""
    return [tree() / "src", tree() / "src-cpp"]


def find() -> Path | None:
    """The runner already built, or None."""
    path = runner_path()
    return path if _stamp(build_dir(), "runner").is_file() and path.is_file() else None


def runner() -> Path:
    """The runner's path, built into the cache when missing. BuildUnavailable: why not."""
    found = find()
    if found is not None:
        return found
    return build()


def build(log=None) -> Path:
    """Every step not done yet, under the cache directory's lock; ``log(str)`` hears each one
    with its duration."""
    say = log or (lambda message: None)
    for tool, why in (("npm", "fetching librdkafka's source needs npm"),
                      ("make", "building librdkafka needs make"),
                      (os.environ.get("CC") or "gcc", "building librdkafka needs a C compiler"),
                      (os.environ.get("CXX") or "g++", "building librdkafka needs a C++ "
                       "compiler")):
        if shutil.which(tool) is None:
            raise BuildUnavailable(f"{why} ({tool}), none was found ({INSTALL_HINT})")
    where = build_dir()
    where.mkdir(parents=True, exist_ok=True)
    with _locked(where):
        if find() is not None:  # built by another process while this one waited
            return runner_path()
        for name, step in (("source", _fetch_and_unpack), ("configure", _configure),
                           ("libs", _make_libs), ("runner", _make_runner)):
            if _stamp(where, name).is_file():
                continue
            started = time.monotonic()
            step(where)
            seconds = time.monotonic() - started
            _stamp(where, name).write_text(f"{seconds:.1f}\n", encoding="utf-8")
            say(f"librdkafka {LIBRDKAFKA_VERSION}: {name} in {seconds:.1f}s")
    return runner_path()


def step_seconds() -> dict[str, float]:
    """How long each finished build step took (the figures of the last build)."""
    out = {}
    for name in ("source", "configure", "libs", "runner"):
        stamp = _stamp(build_dir(), name)
        if stamp.is_file():
            out[name] = float(stamp.read_text(encoding="utf-8").strip() or 0)
    return out


def _stamp(where: Path, step: str) -> Path:
    return where / f".done-{step}"


@contextmanager
def _locked(where: Path) -> Iterator[None]:
    with open(where / ".lock", "w", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def tarball_name() -> str:
    # npm pack's file name: the scope's @ dropped and its slash made a dash
    return NPM_PACKAGE.lstrip("@").replace("/", "-") + f"-{NPM_VERSION}.tgz"


def integrity_of(path: Path) -> str:
    digest = hashlib.sha512(path.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode("ascii")


def _fetch_and_unpack(where: Path) -> None:
    tarball = where / tarball_name()
    if not tarball.is_file() or integrity_of(tarball) != INTEGRITY:
        with tempfile.TemporaryDirectory(dir=where) as tmp:
            _run(["npm", "pack", f"{NPM_PACKAGE}@{NPM_VERSION}", "--pack-destination", tmp,
                  "--silent"], where, what=f"npm pack {NPM_PACKAGE}@{NPM_VERSION}")
            got = Path(tmp) / tarball_name()
            if not got.is_file():
                raise BuildUnavailable(f"npm pack {NPM_PACKAGE}@{NPM_VERSION} wrote no "
                                       f"{tarball_name()}")
            if integrity_of(got) != INTEGRITY:
                raise BuildUnavailable(f"{tarball_name()} from npm does not have the pinned "
                                       f"integrity {INTEGRITY} (got {integrity_of(got)})")
            got.replace(tarball)
    target = tree()
    if target.exists():
        shutil.rmtree(target)
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        with tarfile.open(tarball) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(TREE_IN_PACKAGE)]
            if not members:
                raise BuildUnavailable(f"{tarball_name()} has no {TREE_IN_PACKAGE}")
            # "data": no links out of the tree, no device files (Python 3.12's default)
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(tmp, members=members, **safe)
        unpacked = Path(tmp) / TREE_IN_PACKAGE
        version = _header_version(unpacked / "src" / "rdkafka.h")
        if version != RD_KAFKA_VERSION:
            raise BuildUnavailable(f"{tarball_name()} carries librdkafka {version:#010x}, not "
                                   f"{RD_KAFKA_VERSION:#010x} ({LIBRDKAFKA_VERSION})")
        unpacked.replace(target)


def _header_version(header: Path) -> int:
    match = re.search(r"^#define RD_KAFKA_VERSION\s+(0x[0-9a-fA-F]+)",
                      header.read_text(encoding="utf-8", errors="replace"), re.MULTILINE)
    return int(match.group(1), 16) if match else -1


def _configure(where: Path) -> None:
    # configure is mklove's: sh, reading only the tree (it does not write outside it)
    out = _run(["./configure", *CONFIGURE_FLAGS], tree(), what="librdkafka's ./configure")
    built_with = re.search(r"BUILT_WITH\s+(.*)", out)
    features = built_with.group(1).split() if built_with else []
    for feature, package in REQUIRED_FEATURES.items():
        if feature not in features:
            raise BuildUnavailable(f"librdkafka's ./configure found no {feature.lower()} "
                                   f"({package}), which test 0171's codecs need "
                                   f"({INSTALL_HINT})")


def _make_libs(where: Path) -> None:
    _run(["make", JOBS, "libs"], tree(), what="make libs")


def _make_runner(where: Path) -> None:
    tests = tree() / "tests"
    sources = sorted(str(p.name) for number in TEST_PROGRAMS for p in tests.glob(f"{number}-*.c"))
    missing = [n for n in TEST_PROGRAMS if not any(s.startswith(f"{n}-") for s in sources)]
    if missing:
        raise BuildUnavailable(f"librdkafka {LIBRDKAFKA_VERSION} has no test {missing[0]}")
    (tests / UNBUILT).write_text(unbuilt_source(tests / "test.c", [tests / s for s in sources]),
                                 encoding="utf-8")
    # the Makefile's own variables, set from the command line: its files are left as they are
    _run(["make", JOBS, "-C", "tests", "test-runner",
          "TESTSRCS_C=" + " ".join([*sources, UNBUILT]), "TESTSRCS_CXX="],
         tree(), what="make -C tests test-runner")


def unbuilt_source(test_c: Path, built: list[Path]) -> str:
    """C defining, as a skip, each test program ``test.c`` declares and ``built`` leaves out:
    ``test.c`` lists all of them, and the runner links only if each has its ``main_``."""
    declared = re.findall(r"^_TEST_DECL\((\w+)\);", test_c.read_text(encoding="utf-8"),
                          re.MULTILINE)
    defined = set()
    for path in built:
        defined |= set(re.findall(r"\bint\s+main_(\w+)\s*\(",
                                  path.read_text(encoding="utf-8", errors="replace")))
    lines = ["/* Written by kafka-emu (conformance/librdkafka_tests_build.py): the test",
             " * programs this runner was built without, each a skip. */",
             '#include "test.h"', ""]
    for name in declared:
        if name not in defined:
            lines += [f"int main_{name}(int argc, char **argv) {{",
                      '        TEST_SKIP("not built into kafka-emu\'s test-runner\\n");',
                      "        return 0;", "}", ""]
    return "\n".join(lines)


def _run(cmd: list[str], cwd: Path, *, what: str) -> str:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BuildUnavailable(f"{what} took over {TIMEOUT_S}s") from None
    out = proc.stdout + proc.stderr
    with open(build_dir() / "build.log", "a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(cmd)}  (in {cwd}, exit {proc.returncode})\n{out}\n")
    if proc.returncode != 0:
        raise BuildUnavailable(f"{what} failed: {_last_error(out)} (the whole output is in "
                               f"{build_dir() / 'build.log'})")
    return out


def _last_error(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() or "fail" in line.lower()]
    return (errors or lines or ["(no output)"])[-1][:300]


def main() -> int:
    try:
        path = build(log=lambda message: print(message, file=sys.stderr, flush=True))
    except BuildUnavailable as exc:
        print(f"librdkafka test-runner unavailable: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
