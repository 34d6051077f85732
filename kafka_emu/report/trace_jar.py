"""The jar of the report's trace reader: ``kafka_emu/report/jvm/*.java`` compiled against
pyspark's own jars, the data source ``format("kafka-emu-traces")``.

Parsing JSON is most of what the report costs, and this reader parses the trace lines in about
half the CPU of Spark's JSON reader, with the same rows (see TraceSource.java). It is the only
code of kafka-emu that runs in the JVM; Python still drives the job.

Where the jar comes from, first found wins:
- next to the sources: ``make`` builds it there (``python -m kafka_emu.report.trace_jar``), and a
  wheel built from that tree ships it;
- the user's cache (kafka_emu/cache.py): built there on first use when a JDK's ``javac`` is at
  hand.
Its name carries a digest of the sources, so an edited source is never read through an old jar.
Without a jar (no JDK, ``$KAFKA_EMU_TRACE_READER=json``, or a Spark that will not load it) the
report reads with Spark's own JSON reader: slower, the same tables.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ..cache import cache_root

FORMAT = "kafka-emu-traces"
READER_ENV = "KAFKA_EMU_TRACE_READER"  # "json": Spark's JSON reader, never the jar
SOURCES = Path(__file__).with_name("jvm")
SERVICE = "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister"
PROVIDERS = ("kafka_emu.report.jvm.TraceSource",  # format("kafka-emu-traces")
             "kafka_emu.report.jvm.KeptRows")  # format("kafka-emu-kept"): kept.py
JAVAC_TIMEOUT_S = 300


class JarUnavailable(Exception):
    """Why the jar cannot be had (no javac, no pyspark, a failed compile), in one line."""


def sources() -> list[Path]:
    return sorted(SOURCES.glob("*.java"))


def jar_name() -> str:
    digest = hashlib.sha256()
    for source in sources():
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return f"{FORMAT}-{digest.hexdigest()[:12]}.jar"


def wanted() -> bool:
    return os.environ.get(READER_ENV, "").strip().lower() != "json"


def find() -> Path | None:
    """The jar already built for these sources, or None."""
    name = jar_name()
    for place in (SOURCES, cache_root()):
        if (place / name).is_file():
            return place / name
    return None


def jar() -> Path:
    """The jar for these sources, built into the user's cache when it is missing.
    JarUnavailable: why there is none."""
    if not wanted():
        raise JarUnavailable(f"${READER_ENV} is json")
    return find() or build(cache_root())


def java_tool(name: str) -> str | None:
    """A JDK's or JRE's program (java, javac) as Spark would find it: $JAVA_HOME/bin, else
    PATH; None when it is not there."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / name) if home else shutil.which(name)
    return found if found and Path(found).exists() else None


def javac() -> str:
    found = java_tool("javac")
    if found is None:
        raise JarUnavailable("building it needs a JDK's javac (e.g. Debian's "
                             "openjdk-17-jdk-headless), and none was found")
    return found


def build(into: Path) -> Path:
    """Compile the sources into ``into/<jar_name()>`` (written whole, then renamed, so a reader
    never sees half a jar) and remove older builds there."""
    try:
        import pyspark
    except ImportError:
        raise JarUnavailable("building it needs pyspark's jars: pip install "
                             "'kafka-emu[report]'") from None
    spark_jars = Path(pyspark.__file__).parent / "jars"
    compiler = javac()
    into.mkdir(parents=True, exist_ok=True)
    target = into / jar_name()
    with tempfile.TemporaryDirectory(prefix="kafka-emu-jar-") as tmp:
        classes = Path(tmp) / "classes"
        proc = subprocess.run(
            [compiler, "--release", "17", "-nowarn", "-encoding", "UTF-8",
             "-cp", str(spark_jars / "*"), "-d", str(classes), *map(str, sources())],
            capture_output=True, text=True, timeout=JAVAC_TIMEOUT_S, check=False)
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise JarUnavailable(f"javac failed: {detail[0] if detail else proc.returncode}")
        partial = Path(tmp) / target.name
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as out:
            out.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
            # how Spark finds format("kafka-emu-traces"): Java's ServiceLoader
            out.writestr(SERVICE, "".join(f"{p}\n" for p in PROVIDERS))
            for path in sorted(classes.rglob("*.class")):
                out.write(path, path.relative_to(classes).as_posix())
        shutil.move(str(partial), str(target) + ".tmp")
        os.replace(str(target) + ".tmp", target)
    for old in into.glob(f"{FORMAT}-*.jar"):
        if old != target:
            old.unlink(missing_ok=True)
    return target


def main() -> int:
    """``python -m kafka_emu.report.trace_jar``: build the jar next to the sources (make does
    this). Without a JDK or pyspark it says so and succeeds (reports then use Spark's JSON
    reader); a compile error fails."""
    found = find()
    if found is not None and found.parent == SOURCES:
        return 0
    try:
        javac()
        import pyspark  # noqa: F401
    except (JarUnavailable, ImportError) as exc:
        print(f"kafka-emu: the report's trace reader is not built ({exc}); reports will use "
              f"Spark's JSON reader", file=sys.stderr)
        return 0
    try:
        built = build(SOURCES)
    except JarUnavailable as exc:
        print(f"kafka-emu: error: the report's trace reader: {exc}", file=sys.stderr)
        return 1
    print(f"kafka-emu: built {built}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
