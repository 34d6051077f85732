"""Records sent as they are stored: a Fetch response as a list of buffers, never one copy.

A Fetch response is mostly record batches the log already holds as ``bytes`` objects. Joining
them per partition and then appending them to the encoded response copied every fetched byte
twice (and grew a buffer of the whole response, page by page) before the socket copied it
once more. Instead:

* the Fetch handler hands the codec a :class:`RecordsParts` -- the stored batches and their
  total size -- where a RECORDS value goes;
* the codec writes the length prefix as for any bytes value, and then, if the output is a
  :class:`SplicedOutput`, only notes where the parts go (``splice``); into a plain bytearray it
  appends them, so ``encode``/``encode_response`` still return every byte (tests, golden
  frames);
* :func:`frame_parts` turns a finished output into the frame as a list of buffers -- views of
  the encoded fields between the stored batches themselves -- for one vectored write
  (``sendmsg``; broker/connection.py).

Nothing here knows Fetch: any RECORDS value may be a RecordsParts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

Buffer = Union[bytes, bytearray, memoryview]


class RecordsParts:
    """A RECORDS value made of buffers written one after another, never joined.

    ``len()`` is the total byte size (what the wire's length prefix says); it compares equal to
    the bytes it stands for, so a response holding one reads like one holding ``bytes``."""

    __slots__ = ("parts", "size")

    def __init__(self, parts: Sequence[Buffer], size: int | None = None) -> None:
        self.parts = parts
        self.size = sum(map(len, parts)) if size is None else size

    def __len__(self) -> int:
        return self.size

    def __bytes__(self) -> bytes:
        return b"".join(self.parts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RecordsParts):
            return bytes(self) == bytes(other)
        if isinstance(other, (bytes, bytearray, memoryview)):
            return bytes(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(bytes(self))

    def __repr__(self) -> str:
        return f"RecordsParts({len(self.parts)} parts, {self.size} bytes)"


class SplicedOutput(bytearray):
    """An encoding in progress that keeps RecordsParts out of its own bytes: ``spliced`` lists
    (position in this buffer, parts) in order. Made by :func:`spliced_output` (an ``__init__``
    in Python would cost more than the rest of making it)."""

    __slots__ = ("spliced", "spliced_size")
    spliced: list[tuple[int, RecordsParts]]
    spliced_size: int


def spliced_output(prefix: int = 0) -> SplicedOutput:
    """An empty SplicedOutput starting with ``prefix`` zero bytes (room for a size)."""
    out = SplicedOutput(prefix)
    out.spliced = []
    out.spliced_size = 0
    return out


def splice(out: bytearray, records: RecordsParts) -> None:
    """Write ``records`` (their length prefix is already written) -- what the codec's generated
    code does for a RECORDS value that is a RecordsParts (it writes the SplicedOutput case out
    itself, and calls this for a plain bytearray)."""
    if out.__class__ is SplicedOutput:
        out.spliced.append((len(out), records))  # type: ignore[attr-defined]
        out.spliced_size += records.size  # type: ignore[attr-defined]
    else:
        for part in records.parts:
            out += part


def frame_parts(out: SplicedOutput) -> list[Buffer]:
    """The buffers of a finished output in wire order: views of its own bytes between the
    spliced parts. The output must not be resized afterwards (the views pin it)."""
    view = memoryview(out)
    result: list[Buffer] = []
    pos = 0
    for at, records in out.spliced:
        if at > pos:
            result.append(view[pos:at])
        result.extend(records.parts)
        pos = at
    if pos < len(out):
        result.append(view[pos:])
    return result
