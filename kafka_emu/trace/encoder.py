"""The trace encoder: a child process that turns the writer's batches into JSON Lines.

Theory of operation. Formatting a trace line costs more than serving the request it records
(about as much CPU again for a Heartbeat), so the writer (``writer.py``) does not format on the
emulator's process: it marshals the events' rows (tuples of plain values,
``broker/event_rows.py``) into messages as they queue, which costs a fraction of formatting them,
and every flush sends the messages through a pipe to this process, which formats the lines with
the same compiled encoders (``schema.line_encoder``), compresses them if asked, and appends them
to the run's file: the whole messages of what it could read at once (a flush, usually) in one
write of whole lines (a gzip member per write).

A message is a 4-byte big-endian length and ``marshal.dumps((first_seq, items))``: each item is a
row, a request by its frames (``REQUEST_FRAME``, made into its row here by decoding them:
``broker/frame_rows.py``; a commit's OffsetsCommitted too, ``COMMIT_FRAME``), a dict
(``topics_known``) or a line the writer formatted itself; item i gets sequence number
``first_seq + i``. A message ``("topic_names", {id: name})`` (``names_message``) holds no lines:
it adds to the topic names a request recorded by its frame is read with
(``broker/frame_rows.py``), ahead of every such record that names those ids. The process ends at
end of input -- when the writer closes the pipe, or when the emulator dies (a crash leaves every
line of every whole message received complete; a message cut short is dropped). It appends through
an ``Appender`` (``appender.py``): a write that fails (a full disk) is rolled back to the last
whole line or gzip member and its lines counted, and the next chunk is tried again. On its stdout
it acknowledges each chunk (``appender.py``, "acknowledgements"), so the writer knows what reached
the file even if this process is killed with events still in its pipe.

Run as ``main([FD, RUN_ID, "gzip" or "", END])`` in a fresh interpreter
(``writer.ENCODER_MAIN``), FD being the open trace file and END the offset of its last whole line.
"""

from __future__ import annotations

import json
import marshal
import os
import select
import struct
import sys
from typing import Any

from ..broker.frame_rows import learn_topic_names
from ..broker.event_rows import COMMIT_FRAME, REQUEST_FRAME
from .appender import Appender
from .frame_lines import commit_line, frame_line
from .schema import encode_run, line_encoder

HEADER = struct.Struct(">I")


def message(first_seq: int, items: list) -> bytes:
    """One batch for the encoder (ValueError if an item holds a value marshal cannot carry)."""
    return b"".join(message_parts(first_seq, items))


def message_parts(first_seq: int, items: list) -> tuple[bytes, bytes]:
    """``message`` as its header and its body, for a writev: not copied into one more bytes
    (a pack's worth, tens of KB, allocated and copied again per message)."""
    data = marshal.dumps((first_seq, items), 4)
    return HEADER.pack(len(data)), data


TOPIC_NAMES_TAG = "topic_names"


def names_message(names: dict) -> bytes:
    """A message adding topic names (id as its 16 bytes -> name) to those the encoder knows."""
    data = marshal.dumps((TOPIC_NAMES_TAG, names), 4)
    return HEADER.pack(len(data)) + data


def format_lines(first_seq: int, items: list, run: str) -> str:
    """The lines of one batch, exactly as the writer would format them itself (none for topic
    names, ``names_message``: learnt for the batches after it)."""
    if first_seq == TOPIC_NAMES_TAG:
        learn_topic_names(items)
        return ""
    run_json = encode_run(run)
    encoders: dict[str, Any] = {}
    out = []
    for seq, item in enumerate(items, first_seq):
        if type(item) is tuple:
            if item[0] == REQUEST_FRAME:  # a request by its frames (broker/frame_rows.py)
                out.append(frame_line(item, run_json, seq))
                continue
            if item[0] == COMMIT_FRAME:  # a commit's OffsetsCommitted by its request's frames
                out.append(commit_line(item, run_json, seq))
                continue
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


def whole_messages(buf: bytearray) -> tuple[list[tuple[int, list]], int]:
    """The whole messages at the start of ``buf`` and how many bytes they take (topic names
    among them too, ``names_message``: ``format_lines`` learns them, in order)."""
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


_heard = [True]  # False once the writer is gone: the lines still go to the file


def _say(data: bytes) -> None:
    """An acknowledgement for the writer (one atomic pipe write: it is shorter than PIPE_BUF)."""
    if _heard[0]:
        try:
            os.write(1, data)
        except OSError:  # the emulator died: write what it sent, unacknowledged
            _heard[0] = False


def main(argv: list[str]) -> int:
    fd, run = int(argv[0]), argv[1]
    compress = len(argv) > 2 and argv[2] == "gzip"
    end = int(argv[3]) if len(argv) > 3 else os.lseek(fd, 0, os.SEEK_END)
    out = Appender(fd, compress, end, before_write=lambda at, n: _say(f"p {at} {n}\n".encode()))
    failing = False
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
        messages, used = whole_messages(buf)
        del buf[:used]
        if not messages:
            continue
        lines = sum(len(items) for first, items in messages if first != TOPIC_NAMES_TAG)
        data = "".join(format_lines(first_seq, items, run)
                       for first_seq, items in messages).encode()
        error = out.append(data, lines)
        if error is not None and not failing:  # the first of a streak: the writer logs it
            _say(f"e {str(error.strerror or error)[:200]}\n".encode())
        failing = error is not None
        _say(out.ack())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
