"""Verifiable-client processes: start one, read its JSON events, stop it cleanly or hard.

Each process is one *life* of a consumer slot (node). Its stdout is read line by line on a
thread; lines that are JSON objects with a ``name`` go into the scenario's :class:`RunLog` with
the line as printed, anything else is ignored (librdkafka's client prints its arguments there)
unless it names a contract event and does not parse (``record.parse_line``). stderr goes to a file
(the trace directory when there is one) so a failure can quote its tail. When the process ends
the kit adds ``kit_exited`` with the exit code.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from .record import RunLog, parse_line

STOP_TIMEOUT_S = 30.0  # Kafka's VerifiableConsumer service waits stop_timeout_sec=30


class ClientProcess:
    def __init__(self, node: str, life: int, argv: list[str], log: RunLog, *,
                 stderr_dir: Path | None = None, env: dict[str, str] | None = None,
                 meta: dict | None = None) -> None:
        self.node = node
        self.life = life
        self.argv = argv
        self.log = log
        self.killed = False
        self.expected_exit = False  # the scenario expects it to stop on its own (fenced)
        self.signalled: str | None = None
        self.tail: collections.deque[str] = collections.deque(maxlen=40)
        where = stderr_dir or Path(tempfile.gettempdir())
        where.mkdir(parents=True, exist_ok=True)
        self.stderr_path = where / f"{node}.{life}.stderr"
        self._stderr = open(self.stderr_path, "w", encoding="utf-8")
        log.kit(node, life, "started", argv=argv, **(meta or {}))
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._stderr,
                                     stdin=subprocess.DEVNULL, text=True, bufsize=1,
                                     env={**os.environ, **(env or {})},
                                     start_new_session=True)
        self._reader = threading.Thread(target=self._read, name=f"client-{node}.{life}",
                                        daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            self.tail.append(line)
            event = parse_line(line)
            if event is not None:
                self.log.add(self.node, self.life, event, raw=line)
        code = self.proc.wait()
        self._stderr.close()
        self.log.kit(self.node, self.life, "exited", code=code,
                     clean=(not self.killed and code == 0))

    @property
    def running(self) -> bool:
        return self.proc.poll() is None or self._reader.is_alive()

    def terminate(self) -> None:
        """SIGTERM: the client closes cleanly and prints shutdown_complete."""
        if self.proc.poll() is None:
            self.signalled = "SIGTERM"
            self.log.kit(self.node, self.life, "signalled", signal="SIGTERM")
            self.proc.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL: a hard failure; the member stays in the group until its session expires."""
        if self.proc.poll() is None:
            self.killed = True
            self.signalled = "SIGKILL"
            at_ms = time.time() * 1000
            os.killpg(self.proc.pid, signal.SIGKILL)
            # Lines the client printed before it died may still sit in the pipe: read them
            # first, so the log never shows events of a process after its kill.
            self.wait(5.0)
            self.log.kit(self.node, self.life, "killed", timestamp=at_ms)

    def wait(self, timeout: float = STOP_TIMEOUT_S) -> bool:
        """True once the process ended and its output was read."""
        deadline = time.monotonic() + timeout
        try:
            self.proc.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            return False
        self._reader.join(timeout=max(0.1, deadline - time.monotonic()))
        return not self._reader.is_alive()

    def stderr_tail(self, lines: int = 8) -> str:
        try:
            text = self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])
