"""Whole lines only: appending to a trace file so that a failed write never tears it.

Theory of operation. A trace file is appended to by one writer at a time (the emulator's process
for ``run_start`` and ``run_end`` and when it formats lines itself, the encoder process in
between). ``Appender`` keeps the file's end as it knows it -- the offset just past the last whole
line, or the last whole gzip member -- by adding the length of each write that succeeded, so it
costs no system call beyond the writes themselves. A write that fails part-way (``ENOSPC`` after a
short write, ``EIO``) is rolled back with ``ftruncate`` to that offset, plus, without
compression, the whole lines the short write did land; the lines it could not write are counted
as lost and the next write tries again (a disk that fills and drains mid-run loses only what was
written while it was full). With gzip a member cut short is always truncated away: a torn member
would hide every member after it from a gzip reader. If the rollback itself fails the file can no
longer be trusted to end on a whole line: the appender is *wrecked*, writes nothing more and
counts every later line as lost.

The encoder process tells the emulator's process how far it got, so that an encoder that dies
(killed, out of memory) loses nothing uncounted and leaves no torn tail. It writes
*acknowledgements* to its stdout, one short line each (a pipe write under ``PIPE_BUF`` is
atomic), one pair per chunk -- never per event:

- ``p END LINES``: about to write a chunk that ends the file at END with LINES more lines;
- ``c END WRITTEN LOST FAILURES WRECKED``: after the chunk, the appender's totals;
- ``e MESSAGE``: the first failure of a streak of failed writes (for the emulator's log).

``settle`` reconciles the file with the last acknowledgements after the encoder is gone: a file
ending at the last ``c``'s END is as acknowledged; one ending at a later ``p``'s END had that chunk
written whole before the encoder died (its lines count as written); anything else is a chunk the
encoder died writing, and the file is truncated back to the last acknowledged END.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable

import attrs


@attrs.define(eq=False)
class Appender:
    fd: int
    compress: bool
    end: int  # offset just past the last whole line (or gzip member)
    written: int = 0  # lines written whole
    lost: int = 0  # lines a failed write lost (or a wrecked file refused)
    failures: int = 0  # writes that failed and were rolled back
    wrecked: OSError | None = None  # a rollback failed: nothing more is written
    before_write: Callable[[int, int], None] | None = None  # (end if whole, lines): see "p"

    def append(self, data: bytes, lines: int) -> OSError | None:
        """Append ``lines`` whole lines (``data``); the error if some or all were lost."""
        if self.wrecked is not None:
            self.lost += lines
            return self.wrecked
        payload = gzip.compress(data, compresslevel=6) if self.compress else data
        if self.before_write is not None:
            self.before_write(self.end + len(payload), lines)
        done = 0
        try:
            with memoryview(payload) as view:
                while done < len(payload):
                    done += os.write(self.fd, view[done:])
        except OSError as exc:
            self._roll_back(data, lines, done)
            return exc
        self.end += len(payload)
        self.written += lines
        return None

    def _roll_back(self, data: bytes, lines: int, done: int) -> None:
        """After a write that landed ``done`` bytes: keep its whole lines (not with gzip, whose
        member is whole or useless), cut the rest, count what is lost."""
        keep = kept = 0
        if done and not self.compress:
            keep = data.rfind(b"\n", 0, done) + 1
            kept = data.count(b"\n", 0, keep)
        self.failures += 1
        self.written += kept
        self.lost += lines - kept
        try:
            os.ftruncate(self.fd, self.end + keep)
        except OSError as exc:
            self.wrecked = exc
            return
        self.end += keep

    def ack(self) -> bytes:
        return (f"c {self.end} {self.written} {self.lost} {self.failures} "
                f"{int(self.wrecked is not None)}\n").encode()

    def adopt(self, acked: "Acks") -> None:
        """Take over the file after the encoder (see ``settle``): its end and its counts."""
        self.end = acked.end
        self.written += acked.written
        self.lost += acked.lost
        self.failures += acked.failures
        if acked.wrecked and self.wrecked is None:
            self.wrecked = OSError("the encoder process could not roll back a failed write")


@attrs.define(eq=False)
class Acks:
    """What the encoder acknowledged, parsed from its stdout as it comes."""
    end: int  # as of the last "c" (the end the encoder started from, before any)
    written: int = 0
    lost: int = 0
    failures: int = 0
    wrecked: bool = False
    pending: tuple[int, int] | None = None  # (end, lines) of a "p" not yet followed by a "c"
    errors: list[str] = attrs.Factory(list)  # "e" messages not yet logged
    _rest: bytes = b""

    def feed(self, data: bytes) -> None:
        data = self._rest + data
        cut = data.rfind(b"\n") + 1
        self._rest = data[cut:]
        for line in data[:cut].splitlines():
            tag, _, body = line.partition(b" ")
            if tag == b"c":
                end, written, lost, failures, wrecked = map(int, body.split())
                self.end, self.written, self.lost, self.failures = end, written, lost, failures
                self.wrecked = bool(wrecked)
                self.pending = None
            elif tag == b"p":
                end, lines = map(int, body.split())
                self.pending = (end, lines)
            elif tag == b"e":
                self.errors.append(body.decode(errors="replace"))

    def settle(self, fd: int) -> bool:
        """Make the file end where the acknowledgements say (the encoder is gone): True if a
        torn tail was cut off. A truncation that fails wrecks the file (see ``Appender``)."""
        size = os.fstat(fd).st_size
        if size == self.end:
            return False
        if self.pending is not None and size == self.pending[0]:
            self.end = size  # the chunk was written whole; its "c" never came
            self.written += self.pending[1]
            return False
        try:
            os.ftruncate(fd, self.end)
        except OSError:
            self.wrecked = True
        return True
