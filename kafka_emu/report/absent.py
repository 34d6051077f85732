"""Which trace event kinds a small report's traces cannot hold, told from their bytes before
Spark reads them.

Several tables are built from one event kind's rows alone (the transactions' from
``transaction_ended``, the logins' from ``authentication_failed``, ...): without that kind they
are empty. Building them is no work for the data but much for a cold driver JVM, which
analyses every step of a DataFrame as it is made -- about a second of a 300-event report's
time, for tables most runs leave empty. The one-pass path (onepass.py) writes such a table from
its declared schema instead when its kind is absent (job.ONE_KIND_TABLES).

A kind is absent when its name appears nowhere in the files' bytes: every line that holds it
spells it out. The answer is only ever "absent" when that is sure, else the kind is planned as
usual: nothing is absent for a path off this machine, a compressed or Parquet file, or a file
with a ``\\u`` escape anywhere (JSON may spell a name's letters that way)."""

from __future__ import annotations

import mmap
import os
from typing import Iterable

from .onepass import trace_files

NOTHING: frozenset[str] = frozenset()


def absent_kinds(paths: list[str], kinds: Iterable[str], input_format: str = "json"
                 ) -> frozenset[str]:
    """The ``kinds`` no line of the JSON Lines traces under ``paths`` can hold."""
    if input_format != "json":
        return NOTHING
    files = _files(paths)
    if files is None:
        return NOTHING
    left = {kind: kind.encode() for kind in kinds}
    for path in files:
        found = _found_in(path, left)
        if found is None:
            return NOTHING
        for kind in found:
            del left[kind]
        if not left:
            break
    return frozenset(left)


def _files(paths: list[str]) -> list[str] | None:
    """The trace files under ``paths`` as load() reads them, or None when one of them is not
    a plain JSON Lines file on this machine's disk."""
    files = trace_files(paths)
    if files is None or any(not f.endswith(".jsonl") for f in files):
        return None  # (elsewhere, compressed or Parquet: its bytes do not spell its names)
    return files


def _found_in(path: str, left: dict[str, bytes]) -> list[str] | None:
    """The kinds of ``left`` whose names ``path`` holds, or None when it has an escape."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return []
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data.find(b"\\u") != -1:
                return None
            return [kind for kind, name in left.items() if data.find(name) != -1]
