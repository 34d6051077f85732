"""What the code generator (``codegen.py``) writes into and what its code calls.

A :class:`Source` is one generated module as it is written: its lines, the field each line
serves (kept in ``LINE_FIELDS`` by file name once compiled, so codec.py can name the field a
failing line was reading) and the constants the lines refer to by name. The functions below are
the few the generated code calls beside ``primitives``: the errors it raises (a body too short
or too long, a bad length, an array count its bytes cannot hold) and the precompiled
``struct.Struct`` methods for short arrays of fixed-width values.
"""

from __future__ import annotations

import functools
import itertools
import linecache
import struct
import uuid
from typing import Any

from . import primitives as p
from .errors import DecodeError, EncodeError

# --- helpers the generated code calls (the wire-level ones are in primitives) --------------

def overrun(pos: int, end: int) -> DecodeError:
    if pos > end:
        return DecodeError(f"truncated: the data ends {pos - end} bytes before the message "
                           f"does", offset=end)
    return DecodeError(f"{end - pos} trailing bytes", offset=pos)


def bad_length(n: int, pos: int, what: str) -> DecodeError:
    if n == -1:
        return DecodeError(f"null {what} where the version forbids null", offset=pos)
    return DecodeError(f"negative {what} length {n}", offset=pos)


def too_many(n: int, pos: int, end: int) -> DecodeError:
    return DecodeError(f"array of {n} elements cannot fit in {end - pos} bytes", offset=pos)


# --- one generated module ----------------------------------------------------------------

class Source:
    """One generated module: lines of source, and which field each line serves."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lines: list[str] = []
        self.fields: list[str | None] = []
        self.globs: dict[str, Any] = {
            "_EE": EncodeError, "_overrun": overrun, "_uv": p.uvarint_at,
            "_bad": bad_length, "_many": too_many, "_UUID": uuid.UUID,
            "_wuv": p.write_uvarint, "_pack": struct.pack, "_unpack_from": struct.unpack_from,
            "_read_tags": p.read_tag_section, "_write_tags": p.write_tag_section}
        self._n = 0

    def emit(self, indent: int, text: str, field: str | None = None) -> None:
        self.lines.append("    " * indent + text)
        self.fields.append(field)

    def var(self, prefix: str = "v") -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def const(self, value: Any, prefix: str = "_k") -> str:
        name = self.var(prefix)
        self.globs[name] = value
        return name

    def compile(self) -> dict[str, Any]:
        text = "\n".join(self.lines) + "\n"
        filename = f"<kafka_emu.codec {self.name} #{next(_compiled)}>"
        exec(compile(text, filename, "exec"), self.globs)  # noqa: S102 - from declarations
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        LINE_FIELDS[filename] = self.fields
        return self.globs


LINE_FIELDS: dict[str, list[str | None]] = {}
_compiled = itertools.count(1)


SHORT = 33  # arrays of fixed-width values shorter than this use a precompiled Struct

# The loop over an array's elements runs over one of these for a count below 128 (the usual:
# partitions, topics, members), not over a new range(n): CPython 3.11 builds a range through
# generic number calls (about 800 instructions), where iterating a range built once costs the
# iterator alone.
RANGES = tuple(range(n) for n in range(128))


@functools.cache
def array_structs(char: str, method: str) -> tuple:
    return tuple(getattr(struct.Struct(f">{n}{char}"), method) for n in range(SHORT))
