"""The trace encoder: a child process that turns the writer's batches into JSON Lines.

Theory of operation. Formatting a trace line costs more than serving the request it records
(about as much CPU again for a Heartbeat), so the writer (``writer.py``) does not format on the
emulator's process: every flush it sends what has queued -- the events' rows (tuples of plain
values, ``broker/observe.py``), ``marshal``-ed, which costs a sixth of formatting them -- through
a pipe to this process, which formats the lines with the same compiled encoders
(``schema.line_encoder``), compresses them if asked, and appends them to the run's file in one
write of whole lines per batch (a gzip member per batch).

A message is a 4-byte big-endian length and ``marshal.dumps((first_seq, items))``: each item is
a row, a dict (``topics_known``) or a line the writer formatted itself; item i gets sequence
number ``first_seq + i``. The process ends at end of input -- when the writer closes the pipe,
or when the emulator dies (a crash leaves every line of every batch received complete) -- and
prints the number of lines it could not write (a full disk) for ``run_end``.

Run as ``main([FD, RUN_ID, "gzip" or ""])`` in a fresh interpreter (``writer.ENCODER_MAIN``),
FD being the open trace file.
"""

from __future__ import annotations

import gzip
import json
import marshal
import os
import struct
import sys
from typing import Any

from .schema import encode_run, line_encoder

HEADER = struct.Struct(">I")


def message(first_seq: int, items: list) -> bytes:
    """One batch for the encoder (ValueError if an item holds a value marshal cannot carry)."""
    data = marshal.dumps((first_seq, items), 4)
    return HEADER.pack(len(data)) + data


def format_lines(first_seq: int, items: list, run: str) -> str:
    """The lines of one batch, exactly as the writer would format them itself."""
    run_json = encode_run(run)
    encoders: dict[str, Any] = {}
    out = []
    for seq, item in enumerate(items, first_seq):
        if type(item) is tuple:
            encode = encoders.get(item[0])
            if encode is None:
                encode = encoders[item[0]] = line_encoder(item)
            out.append(encode(item, run_json, seq))
        elif isinstance(item, dict):
            out.append(json.dumps(item | {"run": run, "seq": seq}, separators=(",", ":")) + "\n")
        else:
            out.append(item)
    return "".join(out)


def _read_exactly(stream: Any, n: int) -> bytes | None:
    data = stream.read(n)
    return data if data is not None and len(data) == n else None


def main(argv: list[str]) -> int:
    fd, run = int(argv[0]), argv[1]
    compress = len(argv) > 2 and argv[2] == "gzip"
    dropped = 0
    broken = False
    source = sys.stdin.buffer
    while True:
        head = _read_exactly(source, HEADER.size)
        if head is None:
            break
        body = _read_exactly(source, HEADER.unpack(head)[0])
        if body is None:
            break  # the emulator died mid-message: that batch was never whole
        first_seq, items = marshal.loads(body)
        data = format_lines(first_seq, items, run).encode()
        if broken:
            dropped += len(items)
            continue
        if compress:
            data = gzip.compress(data, compresslevel=6)  # one whole member per batch
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except OSError as exc:
            broken = True
            dropped += len(items)
            print(f"kafka-emu trace encoder: cannot write ({exc.strerror or exc}); later "
                  "events are dropped", file=sys.stderr)
    print(dropped, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
