"""A class archive for the report's local JVM: Spark's classes mapped, not loaded, at start.

A small report is mostly a cold JVM's work: starting Spark and planning the job load and verify
some fifteen thousand classes from pyspark's jars, every time. HotSpot's class data sharing
(CDS, JDK 13+) can save the classes one JVM loaded into an archive as it exits
(``-XX:ArchiveClassesAtExit``) and map that archive into the next JVM
(``-XX:SharedArchiveFile``). Measured on the two-core machine, interleaved: a bare session's
start and stop 15.2 s -> 6.9 s, a report over 309 events 26.8 s -> 20.9 s (docs/performance.md).

Theory of operation:
- The archive belongs to one Java and one pyspark (its name is a digest of the java binary,
  pyspark's version and jars, and the JVM flags that shape the archive: ``archive_path``). It
  lives in the user's cache (kafka_emu/cache.py), about 170 MB.
- When it exists, the local session's JVM maps it (``options``). The JVM checks it is for
  the same Java and class path and ignores it, silently, when it is not (``-Xshare:auto``):
  a missing or foreign archive costs a report nothing but the time it would have saved.
- When it does not, the JVM is asked to write one as it exits, under a name of its own
  (``*.partial``), with the JVM's own log of the dump beside it. The JVM exits when this
  process does (pyspark's gateway ends on its stdin closing), so the dump -- 10-20 s of one
  core, once -- runs after the report has answered, and nobody waits for it. The next session
  promotes the file (a rename) once the JVM's log says the archive was written whole: a JVM
  never maps half an archive. While a dump is under way (a partial file younger than
  DUMP_GRACE_S without that line) no other session starts one; a partial file older than that
  is a JVM that was killed while dumping, and is removed.
- ``$KAFKA_EMU_CLASS_ARCHIVE=off`` turns all of it off (no archive read or written).

Only the local session's own JVM uses it: a Spark master's executors, a Spark Connect server and
``kafka-emu report-server`` start their JVMs elsewhere (the last keeps its JVM warm anyway).
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from pathlib import Path

from ..cache import cache_root

ENV = "KAFKA_EMU_CLASS_ARCHIVE"  # "off": no archive
SUFFIX = ".jsa"
PARTIAL = ".partial"
LOG = ".log"
SIZE = ".size"  # beside the archive: its size when promoted (_whole())
# what the JVM's log says last once the archive file is written and closed (HotSpot's
# DynamicArchive: "Written dynamic archive 0x... - 0x... [984 bytes header, ... bytes total]")
WRITTEN = b"Written dynamic archive"
# A dynamic archive's file begins with this magic (HotSpot's CDS_DYNAMIC_ARCHIVE_MAGIC, in the
# machine's byte order)
DYNAMIC_MAGIC = 0xF00BABA8
DUMP_GRACE_S = 600  # a dump takes 10-20 s of CPU; a partial file this old was abandoned
# The JVM's own notes about the archive (skipped classes, a class path that no longer matches)
# are for nobody on the terminal: the report works the same with or without it.
QUIET = "-Xlog:cds*=off"


def wanted() -> bool:
    return os.environ.get(ENV, "").strip().lower() not in ("off", "0", "false", "no")


def directory() -> Path:
    return cache_root() / "jvm-classes"


def archive_path(java: str, java_options: list[str]) -> Path:
    """Where the archive for this Java, this pyspark and these JVM flags lives. (Not the heap's
    size: --memory and --reserve-memory share one archive -- a JVM whose heap is too large for
    the archive's compressed pointers just ignores it.)"""
    import pyspark
    java_options = [o for o in java_options if not o.startswith(("-Xms", "-Xmx"))]
    digest = hashlib.sha256()
    real = os.path.realpath(java)
    try:
        stat = os.stat(real)
        digest.update(f"{real}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    except OSError:
        digest.update(real.encode())
    digest.update(f"{pyspark.__version__}\0{' '.join(java_options)}\0".encode())
    jars = Path(pyspark.__file__).parent / "jars"
    for jar in sorted(jars.glob("*.jar")):
        digest.update(f"{jar.name}\0{jar.stat().st_size}\0".encode())
    return directory() / f"spark-classes-{digest.hexdigest()[:16]}{SUFFIX}"


def options(java: str | None, java_options: list[str]) -> list[str]:
    """The archive flags for a local JVM started with ``java_options``: map the archive when
    there is one (promoting a finished dump first), else write one at exit unless another JVM
    is writing it now; nothing when the cache cannot be written."""
    if java is None or not wanted():
        return []
    final = archive_path(java, java_options)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        whole = _whole(final)
        if not whole and not _promote_finished(final) and _dump_under_way(final):
            return []
    except OSError:  # (a read-only or vanished cache: the report runs without the archive)
        return []
    if whole or _whole(final):
        # VerifySharedSpaces: the JVM checks each region's checksum as it maps it, and a
        # damaged archive is then ignored, not run
        return [f"-XX:SharedArchiveFile={final}", "-Xshare:auto", "-XX:+VerifySharedSpaces",
                QUIET]
    partial = final.with_name(f"{final.name}.{uuid.uuid4().hex[:8]}{PARTIAL}")
    log = partial.with_name(partial.name + LOG)
    log.touch()  # (claims the dump for DUMP_GRACE_S before the JVM has started)
    return [f"-XX:ArchiveClassesAtExit={partial}", QUIET,
            # (filecount=0: the JVM's log rotation would move the claim aside)
            f"-Xlog:cds=info,cds+dynamic=info:file={log}::filecount=0"]


def mapped(options: list[str]) -> Path | None:
    """The archive ``options`` (from ``options()``) map, if any."""
    for option in options:
        if option.startswith("-XX:SharedArchiveFile="):
            return Path(option.split("=", 1)[1])
    return None


def is_archive(path: Path | str) -> bool:
    """Whether ``path`` begins as a dynamic class archive does (whether it is whole, only the
    log of the JVM that wrote it says)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return len(head) == 4 and DYNAMIC_MAGIC in (int.from_bytes(head, "little"),
                                                int.from_bytes(head, "big"))


def _size_file(final: Path) -> Path:
    return final.with_name(final.name + SIZE)


def _whole(final: Path) -> bool:
    """Whether ``final`` is the archive as promoted: the size written beside it then. (A
    shorter file -- a copy or a disk cut short -- would crash the JVM that maps it, checksums
    or not: it is removed.)"""
    try:
        recorded = int(_size_file(final).read_text())
        if os.path.getsize(final) == recorded:
            return True
    except (OSError, ValueError):
        if not final.exists():
            return False
    discard(final)
    return False


def discard(final: Path) -> None:
    """Forget an archive (damaged, or refused by a JVM)."""
    final.unlink(missing_ok=True)
    _size_file(final).unlink(missing_ok=True)


def _partials(final: Path) -> list[Path]:
    return sorted(final.parent.glob(f"{final.name}.*{PARTIAL}{LOG}"))


def _promote_finished(final: Path) -> bool:
    """Rename the first finished dump for ``final`` into place (True when one was)."""
    for log in _partials(final):
        partial = log.with_name(log.name.removesuffix(LOG))
        if _written(log) and is_archive(partial):
            os.replace(partial, final)
            size = _size_file(final)
            size.with_name(size.name + ".tmp").write_text(str(os.path.getsize(final)))
            os.replace(size.with_name(size.name + ".tmp"), size)
            log.unlink(missing_ok=True)
            for other in final.parent.glob(f"spark-classes-*{SUFFIX}"):
                if other != final:  # (another Java's or pyspark's, replaced by this one)
                    discard(other)
            return True
    return False


def _dump_under_way(final: Path) -> bool:
    """Whether a JVM may be writing ``final``'s archive now; abandoned dumps are removed."""
    now = time.time()
    busy = False
    for log in _partials(final):
        partial = log.with_name(log.name.removesuffix(LOG))
        if now - log.stat().st_mtime < DUMP_GRACE_S and not _written(log):
            busy = True
        else:  # (written but its archive gone, or abandoned)
            partial.unlink(missing_ok=True)
            log.unlink(missing_ok=True)
    for partial in final.parent.glob(f"{final.name}.*{PARTIAL}"):
        # (a dump whose log another session removed as abandoned while its JVM still ran)
        if (not partial.with_name(partial.name + LOG).exists()
                and now - partial.stat().st_mtime >= DUMP_GRACE_S):
            partial.unlink(missing_ok=True)
    return busy


def _written(log: Path) -> bool:
    try:
        with open(log, "rb") as f:
            f.seek(max(0, os.path.getsize(log) - 4096))
            return WRITTEN in f.read()
    except OSError:
        return False


# -- building it ahead of use (make setup) ----------------------------------------------------

BUILD_WAIT_S = 300  # for the report that loads the classes, then for its JVM's dump

def trace() -> list[dict]:
    """The smallest trace a report reads whole and builds every table of: one run with a
    member's join, and a line of each kind whose absence would spare building a table or a
    rule (absent.py) -- so the report loads what any report's JVM loads."""
    from .job import SPARING_KINDS
    run = "archive"
    lines = [
        {"kind": "run_start", "run": run, "seq": 0, "at_ms": 0, "emu_version": "0"},
        {"kind": "request_handled", "run": run, "seq": 1, "at_ms": 1, "api": "JoinGroup",
         "version": 9, "connection_id": 1, "correlation_id": 1, "client_id": "archive",
         "group_id": "g", "member_id": "", "latency_ms": 0, "error_code": 0}]
    lines += [{"kind": kind, "run": run, "seq": 2 + i, "at_ms": 2 + i}
              for i, kind in enumerate(sorted(SPARING_KINDS))]
    return lines + [{"kind": "run_end", "run": run, "seq": len(lines) + 1, "at_ms": len(lines) + 1,
                     "dropped": 0}]


def build() -> str:
    """Make the local session's archive now, if it is missing: a report over a tiny trace in a
    child process, whose JVM dumps the archive as it exits; wait for that and promote it.
    Returns what was done, in words."""
    import json
    import subprocess
    import sys
    import tempfile

    from .spark import local_heap, local_java_options, reserve_heap
    from .trace_jar import java_tool
    java = java_tool("java")
    if java is None or not wanted():
        return "not built (" + ("no java found" if java is None else f"${ENV} is off") + ")"
    final = archive_path(java, local_java_options(local_heap(), reserve_heap()))
    if _whole(final):
        return f"up to date: {final}"
    with tempfile.TemporaryDirectory(prefix="kafka-emu-archive-") as tmp:
        traces = Path(tmp) / "traces"
        traces.mkdir()
        (traces / "archive.jsonl").write_text("".join(json.dumps(r) + "\n" for r in trace()))
        proc = subprocess.run(
            [sys.executable, "-m", "kafka_emu", "report", str(traces), "--out",
             str(Path(tmp) / "out")], capture_output=True, text=True, timeout=BUILD_WAIT_S)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            return f"not built (the report failed: {lines[-1] if lines else proc.returncode})"
    deadline = time.monotonic() + BUILD_WAIT_S
    while time.monotonic() < deadline:  # (the JVM outlives its report while it dumps)
        if _whole(final) or _promote_finished(final):
            return f"built: {final}"
        time.sleep(0.5)
    return "not built (the JVM's dump did not finish in time)"


def main() -> int:
    """``python -m kafka_emu.report.class_archive``: the archive built now (make does this);
    without java or pyspark it says so and succeeds (reports then start without it)."""
    import sys
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("kafka-emu: the report's class archive is not built (no pyspark)", file=sys.stderr)
        return 0
    print(f"kafka-emu: the report's class archive: {build()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
