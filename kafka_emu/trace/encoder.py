"""The trace encoder: a child process that turns the writer's batches into JSON Lines.

Theory of operation. Formatting a trace line costs more than serving the request it records
(about as much CPU again for a Heartbeat), so the writer (``writer.py``) does not format on the
emulator's process: it marshals the events' rows (tuples of plain values,
``broker/observe.py``) into messages as they queue, which costs a fraction of formatting them,
and every flush sends the messages through a pipe to this process, which formats the lines with
the same compiled encoders (``schema.line_encoder``), compresses them if asked, and appends them
to the run's file: the whole messages of what it could read at once (a flush, usually) in one
write of whole lines (a gzip member per write).

A message is a 4-byte big-endian length and ``marshal.dumps((first_seq, items))``: each item is
a row, a request by its frames (``REQUEST_FRAME``, made into its row here by decoding them:
``broker/frame_rows.py``), a dict (``topics_known``) or a line the writer formatted itself;
item i gets sequence number ``first_seq + i``. The process ends at end of input -- when the
writer closes the pipe, or when the emulator dies (a crash leaves every line of every whole
message received complete; a message cut short is dropped) -- and prints the number of lines it
could not write (a full disk) for ``run_end``.

Run as ``main([FD, RUN_ID, "gzip" or ""])`` in a fresh interpreter (``writer.ENCODER_MAIN``),
FD being the open trace file.
"""

from __future__ import annotations

import gzip
import json
import marshal
import os
import select
import struct
import sys
from typing import Any

from ..broker.frame_rows import frame_row
from ..broker.observe import REQUEST_FRAME
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
            if item[0] == REQUEST_FRAME:  # a request by its frames (broker/frame_rows.py)
                item = frame_row(item)
            encode = encoders.get(item[0])
            if encode is None:
                encode = encoders[item[0]] = line_encoder(item)
            out.append(encode(item, run_json, seq))
        elif isinstance(item, dict):
            out.append(json.dumps(item | {"run": run, "seq": seq}, separators=(",", ":")) + "\n")
        else:
            out.append(item)
    return "".join(out)


_READ = 1 << 20
_COALESCE_BYTES = 8 << 20  # at most this much input formatted and written at once


def _messages(buf: bytearray) -> tuple[list[tuple[int, list]], int]:
    """The whole messages at the start of ``buf`` and how many bytes they take."""
    out, at, size = [], 0, len(buf)
    with memoryview(buf) as view:  # (released before the caller shrinks buf)
        while size - at >= HEADER.size:
            (length,) = HEADER.unpack_from(view, at)
            end = at + HEADER.size + length
            if end > size:
                break
            out.append(marshal.loads(view[at + HEADER.size:end]))
            at = end
    return out, at


def main(argv: list[str]) -> int:
    fd, run = int(argv[0]), argv[1]
    compress = len(argv) > 2 and argv[2] == "gzip"
    dropped = 0
    broken = False
    source = sys.stdin.fileno()
    buf = bytearray()
    at_end = False
    while not at_end:
        chunk = os.read(source, _READ)
        if not chunk:
            break  # (what is left in buf is a message the emulator died writing: never whole)
        buf += chunk
        # What the writer sent in one flush arrives as one or more reads: take what is already
        # there too, so that it becomes one write (one gzip member), as it would from one message.
        while len(buf) < _COALESCE_BYTES and select.select([source], [], [], 0)[0]:
            chunk = os.read(source, _READ)
            if not chunk:
                at_end = True
                break
            buf += chunk
        messages, used = _messages(buf)
        del buf[:used]
        if not messages:
            continue
        lines = sum(len(items) for _, items in messages)
        if broken:
            dropped += lines
            continue
        data = "".join(format_lines(first_seq, items, run)
                       for first_seq, items in messages).encode()
        if compress:
            data = gzip.compress(data, compresslevel=6)  # one whole member per write
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except OSError as exc:
            broken = True
            dropped += lines
            print(f"kafka-emu trace encoder: cannot write ({exc.strerror or exc}); later "
                  "events are dropped", file=sys.stderr)
    print(dropped, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
