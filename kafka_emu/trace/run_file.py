"""A run's trace file: where it goes, how it is created, and the lines that open and close it.

Theory of operation. Every run writes one file, ``DIR/date=YYYY-MM-DD/run=<id>.jsonl[.gz]`` (a
layout Spark's partition discovery and any glob read). ``create`` makes it -- exclusively, so two
runs never share a file -- after checking that the directory is writable and its disk has at
least ``MIN_FREE_BYTES`` free, and raises ``TraceError`` (one line, for the CLI) otherwise, so a
bad ``--trace-dir`` is an error before the server accepts anything. The lines that bracket a run
(``run_start``, ``run_end``, a conformance verdict) are few, so they are dicts formatted with
``json`` (``json_lines``) on the emulator's thread; every other line is the encoder's
(``encoder.py``). The run's labels come from the command line as ``key=value``
(``parse_labels``), its configuration flattened to text (``config_map``).
"""

from __future__ import annotations

import datetime
import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

import attrs

from .schema import SCHEMA_VERSION

COMPRESSIONS = ("gzip",)
MIN_FREE_BYTES = 1 << 20  # refuse to start a trace on a disk with less than 1 MiB free


class TraceError(Exception):
    """The trace cannot be written (message is one line, for the CLI)."""


def new_run_id(now: datetime.datetime | None = None) -> str:
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def wall_ms() -> int:
    """Now, in epoch milliseconds (a run's end, a verdict: lines the emulator's clock is not
    asked for)."""
    return int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000)


def create(trace_dir: Path, run_id: str, compress: str | None) -> tuple[Path, int]:
    """The run's new file (its path, an append-only descriptor). Raises TraceError."""
    now = datetime.datetime.now(datetime.timezone.utc)
    folder = trace_dir / f"date={now:%Y-%m-%d}"
    suffix = ".jsonl.gz" if compress == "gzip" else ".jsonl"
    path = folder / f"run={run_id}{suffix}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(folder).free
        if free < MIN_FREE_BYTES:
            raise TraceError(f"cannot write traces to {trace_dir}: only {free} bytes free on "
                             f"its disk")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
    except OSError as exc:
        raise TraceError(f"cannot write traces to {trace_dir}: "
                         f"{exc.strerror or exc}") from None
    return path, fd


def json_lines(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, separators=(",", ":"), default=str) + "\n"
                   for r in records).encode()


def run_start(run_id: str, at_ms: int, *, config: dict[str, str], labels: dict[str, str],
              host: str | None, port: int | None, apis: dict[str, int]) -> dict:
    return {"kind": "run_start", "run": run_id, "seq": 0, "at_ms": at_ms,
            "schema_version": SCHEMA_VERSION, "emu_version": emu_version(), "config": config,
            "labels": labels, "host": host, "port": port, "broker_api_versions": apis}


def emu_version() -> str:
    from .. import __version__
    return __version__


def advertised(broker: Any) -> dict[str, int]:
    """The newest version of each API the broker advertises, by API name."""
    from ..broker.handlers import HANDLERS
    return {HANDLERS[key].api.name: versions.hi for key, versions in broker.advertised.items()
            if key in HANDLERS}


def config_map(config: Any) -> dict[str, str]:
    """A BrokerConfig (or any attrs value) flattened to text, nested values dotted."""
    out: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        if attrs.has(type(value)):
            for f in attrs.fields(type(value)):
                walk(f"{prefix}{f.name}.", getattr(value, f.name))
        else:
            out[prefix.rstrip(".")] = str(value)
    if config is not None:
        walk("", config)
    return out


def parse_labels(items: Any) -> dict[str, str]:
    """["client=aiokafka", ...] or [("client", "aiokafka"), ...] -> {"client": "aiokafka"}."""
    labels: dict[str, str] = {}
    for item in items or ():
        if isinstance(item, str):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise TraceError(f"expected a trace label key=value, got {item!r}")
            item = (key.strip(), value.strip())
        labels[item[0]] = item[1]
    return labels

