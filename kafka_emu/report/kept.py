"""The leaves of a one-pass report kept as rows in the driver's JVM (KeptRows.java).

A one-pass report (onepass.py) reads the traces into one partition and builds its tables over
four leaves: the lines, and the runs, events and requests made from them. Each leaf is computed
once and read by many plans. Kept as a local checkpoint, a leaf is copied row by row, every
column, each time a plan scans it (Spark's RDD scan). Kept here, a scan hands on the rows as
they are: at 100,000 events those copies were over a quarter of the executor's time.

The rows live in the JVM's heap, so only a local session (``local`` or ``local[N]``: tasks in
the driver's JVM) with the trace reader's jar loaded keeps them here, and only traces whose rows
fit in a share of its heap (``fits()``: a local checkpoint can spill to disk, kept rows cannot);
any other report keeps local checkpoints, as before (load.py).

The leaves are computed in order by ``keep_all()`` (the report's background read), each as soon
as load() has planned it: the lines while the others are planned. A plan over a leaf must not
run before its rows are kept: ``ready()`` waits for them (onepass.build_and_collect calls it
before collecting).
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

FORMAT = "kafka-emu-kept"


def _rows_class(spark: Any) -> Any:
    return spark._jvm.kafka_emu.report.jvm.KeptRows


# The four leaves kept of 100,001 events took 96 MB of heap for 46 MB of JSON Lines (measured
# after a full collection): about 2.1 bytes per byte of JSON; 3 leaves room for other traces.
KEPT_BYTES_PER_INPUT_BYTE = 3
HEAP_SHARE = 1 / 3  # the rest is the job's: its sorts, aggregations and collected rows


def fits(input_bytes: int | None, max_heap: int) -> bool:
    """Whether the rows of traces of ``input_bytes`` (None: not on this machine's disk) fit in
    a JVM heap of ``max_heap`` bytes at most."""
    return (input_bytes is not None
            and input_bytes * KEPT_BYTES_PER_INPUT_BYTE <= max_heap * HEAP_SHARE)


def usable(spark: Any, paths: list[str]) -> bool:
    """Whether ``spark`` runs its tasks in this JVM, has KeptRows loaded, and has the heap for
    the rows of the traces under ``paths``."""
    try:
        master = spark.sparkContext.master  # (a Spark Connect session has no SparkContext)
    except Exception:
        return False
    if not (master == "local" or master.startswith("local[")):  # (not local-cluster[...])
        return False
    try:
        _rows_class(spark).held()
    except Exception:  # no jar (Spark's JSON reader reads the traces), or one without it
        return False
    from .onepass import json_bytes
    return fits(json_bytes(paths), spark._jvm.java.lang.Runtime.getRuntime().maxMemory())


class Kept:
    """The leaves of one report: ``frame(df)`` registers one, ``seal()`` says no more will
    come, ``keep_all()`` computes them in order, ``unpersist()`` forgets them (as a cached
    DataFrame's, so that Traces.release() treats both alike)."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self._pending: list[tuple[str, Any]] = []
        self._sealed = False
        self._changed = threading.Condition()
        self._done = threading.Event()
        self._error: BaseException | None = None
        self._started = False
        self._count = 0

    def frame(self, df: Any) -> Any:
        """A DataFrame of ``df``'s rows once kept: its schema, one partition (the coalesce
        tells the plans above so: no shuffle for their groupings and joins)."""
        key = f"kafka-emu-{uuid.uuid4().hex}"
        kept = (self.spark.read.format(FORMAT).schema(df.schema).option("key", key).load()
                .coalesce(1))
        with self._changed:
            self._pending.append((key, df))
            self._changed.notify_all()
        return kept

    def seal(self) -> None:
        with self._changed:
            self._sealed = True
            self._changed.notify_all()

    def keep_all(self) -> int:
        """Compute every leaf, each as soon as it is registered (until seal()): the first (the
        lines, which the others are made from) alone, then the others side by side, each a
        one-partition job in a thread of its own (pyspark's InheritableThread: in the caller's
        job group, which cancels them with it). Returns how many rows the first has (the
        lines read). Called again, it waits for the first call's end and returns the same."""
        with self._changed:
            again, self._started = self._started, True
        if again:
            self.ready()
            return self._count
        from pyspark import InheritableThread
        rows = _rows_class(self.spark)
        errors: list[BaseException] = []

        def keep(key: str, df: Any) -> None:
            try:
                rows.keep(key, df._jdf)
            except BaseException as exc:
                errors.append(exc)

        threads = []
        try:
            at = 0
            while (entry := self._next(at)) is not None:
                if at == 0:
                    self._count = rows.keep(entry[0], entry[1]._jdf)
                else:
                    thread = InheritableThread(target=keep, args=entry,
                                               name="kafka-emu-keep")
                    thread.start()
                    threads.append(thread)
                at += 1
            for thread in threads:
                thread.join()
            if errors:
                raise errors[0]
            return self._count
        except BaseException as exc:
            self._error = exc
            raise
        finally:
            self._done.set()

    def _next(self, at: int) -> tuple[str, Any] | None:
        """The ``at``-th leaf registered, once it is; None once sealed with fewer."""
        with self._changed:
            while at == len(self._pending) and not self._sealed:
                self._changed.wait()
            return self._pending[at] if at < len(self._pending) else None

    def ready(self) -> None:
        """Wait until every leaf is kept; raises what stopped keep_all()."""
        self._done.wait()
        if self._error is not None:
            raise self._error

    def unpersist(self) -> None:
        self.seal()
        rows = _rows_class(self.spark)
        for key, _df in self._pending:  # (a key never kept is forgotten as nothing)
            rows.forget(key)
