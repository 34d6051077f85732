"""The emulator's handle on the trace encoder process: its input pipe and its acknowledgements.

Theory of operation. ``EncoderProcess.start`` runs ``encoder.py`` in a fresh interpreter with the
trace file's descriptor and the offset of its last whole line. The writer (``writer.py``) writes
messages to ``pipe`` without blocking; at each flush it calls ``read_acks`` (one non-blocking read
of the encoder's stdout: how far the file got, ``appender.py``), which also tells it the encoder
is gone (end of file on that pipe). ``finish`` closes the input and waits for the encoder to
write everything and exit; ``kill`` is for an encoder found dead or stuck. Both end with
``settle``: the file is cut back to the last whole chunk the encoder acknowledged, and ``acks``
then says how many lines the encoder wrote and lost -- whatever was still in its pipe when it
died is simply not among them, so the writer counts it as dropped.
"""

from __future__ import annotations

import fcntl
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from .appender import Acks

# (not ``-m kafka_emu.trace.encoder``: the package imports that module before runpy would run it)
ENCODER_MAIN = "import sys; from kafka_emu.trace.encoder import main; sys.exit(main(sys.argv[1:]))"
_PIPE_SIZE = 1 << 20  # asked of the encoder's pipe: a flush rarely has to wait for it


class EncoderProcess:
    def __init__(self, process: subprocess.Popen, end: int) -> None:
        self.process = process
        self.pipe = process.stdin.fileno()  # type: ignore[union-attr]
        self._out = process.stdout.fileno()  # type: ignore[union-attr]
        self.acks = Acks(end)
        self.settled = False

    @classmethod
    def start(cls, fd: int, run_id: str, compress: str | None, end: int) -> "EncoderProcess":
        """Start the encoder on the open file ``fd`` whose last whole line ends at ``end``
        (OSError if it cannot be started)."""
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH"))
                                            if p)
        process = subprocess.Popen(
            [sys.executable, "-c", ENCODER_MAIN, str(fd), run_id, compress or "", str(end)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(fd,), env=env)
        self = cls(process, end)
        os.set_blocking(self.pipe, False)  # (these ends only: the encoder's are blocking)
        os.set_blocking(self._out, False)
        try:  # a larger pipe: fewer waits when a flush carries many events (Linux)
            fcntl.fcntl(self.pipe, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
        except (AttributeError, OSError):
            pass  # the default (64 KiB) works too
        return self

    def read_acks(self) -> bool:
        """Take in what the encoder acknowledged so far; False once it is gone."""
        while True:
            try:
                data = os.read(self._out, 1 << 16)
            except BlockingIOError:
                return True
            if not data:
                return False
            self.acks.feed(data)

    def _read_until_gone(self, deadline: float) -> bool:
        """Acknowledgements until the encoder closes its stdout (exits); False at the deadline."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if select.select([self._out], [], [], min(left, 1.0))[0] and not self.read_acks():
                return True

    def finish(self, fd: int, timeout_s: float) -> bool:
        """Close its input, let it write everything it was sent, then ``settle``. False if it
        had to be killed (it did not finish within ``timeout_s``)."""
        self._close_input()
        if not self._read_until_gone(time.monotonic() + timeout_s):
            self.kill(fd)
            return False
        self.process.wait()
        self._settle(fd)
        return True

    def kill(self, fd: int) -> None:
        """Kill it (dead already, or stuck), read its last acknowledgements, then ``settle``."""
        self._close_input()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._read_until_gone(time.monotonic() + 5.0)  # at most what its pipe holds
        self._settle(fd)

    def _close_input(self) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.close()
            except OSError:  # (a broken pipe: nothing was buffered, the descriptor is closed)
                pass

    def _settle(self, fd: int) -> None:
        self.acks.settle(fd)
        self.process.stdout.close()  # type: ignore[union-attr]
        self.settled = True
