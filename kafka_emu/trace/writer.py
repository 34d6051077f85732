"""The trace writer: one JSON Lines file per run, fed by the observer seam.

Theory of operation. ``TraceWriter.open()`` picks the file
``DIR/date=YYYY-MM-DD/run=<id>.jsonl[.gz]`` (a layout Spark's partition discovery and any glob
read), checks that the directory is writable and the disk not full, and writes the ``run_start``
line synchronously, so a bad ``--trace-dir`` is an error before the server accepts anything.

On the request path the sink only queues the event's row (``broker/event_rows.py``) -- or, for a
Heartbeat and the like, the request's and the response's frames (``REQUEST_FRAME``: marshal carries
two byte strings for a fraction of a row's fields, and the encoder makes the row by decoding them,
``broker/frame_rows.py``); the observer seam hands them over in batches (``sink_many``: one C pass
per batch, no Python work per row). A trio task of the emulator (``flush_loop``) wakes every
``flush_interval_s`` and sends what has queued, marshal-ed in one call per chunk, to the encoder: a
child process (``encoder.py``) started with the writer, which formats the lines with the schema's
compiled encoders, compresses them if asked and appends them to the file in one write of whole
lines per chunk. Formatting a request's line costs more CPU than all the rest of observing the
request, and a second Python *thread* doing it would fight the serving thread for the GIL; marshal
costs a fraction of formatting (bench/bench_trace.py measures both processes, by time and, with
``--callgrind``, in instructions). The pipe to the encoder is written without blocking, from the
trio task itself (no thread hand-off per flush). Without the encoder (it could not start) lines are
formatted on the emulator's thread and written by a worker thread, as before it existed. A process
killed mid-run leaves a file whose every line is complete, up to the last chunk the encoder
received (it reads to the end of its input, then exits). With gzip each chunk is its own gzip
member: concatenated members are a valid gzip stream (RFC 1952), so the file stays readable after a
crash too.

Whole lines only, whatever fails (``appender.py``): a write that fails part-way -- a full disk --
is rolled back to the last whole line (or gzip member) and its lines are counted; the next chunk
is tried again, so a disk that fills and drains mid-run costs only the lines written while it was
full. The encoder acknowledges every chunk it writes (``encoder_process.py``), so ``run_end``
knows how many lines reached the file, whatever happened to the rest: its ``dropped`` is every
event that is not a line of the file (``events - written``), ``dropped_disk`` those a failed
write lost. An encoder that dies (or is stuck past ``ENCODER_EXIT_TIMEOUT_S`` at the end of a run)
is logged once, its file cut back to the last chunk it acknowledged, and the run goes on with the
lines formatted on the emulator's thread, as when the encoder cannot start; what sat in its pipe
is counted as dropped.

Every event is written except ``ReplyEmitted`` (see ``sink``), which the writer tells the seam it
does not want, so the coordinator builds none while the trace is the only listener. The sink
runs on the emulator's trio thread, so it may read broker state: before an assignment goes out
it queues a ``topics_known`` snapshot (partition counts), from which a reader can tell
which subscribed partitions were left unassigned.

A write error mid-run (disk full), or the encoder dying, is logged once; the run goes on and
every event that did not reach the file is counted in ``run_end``: tracing never stops serving.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import secrets
import select
import shutil
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ..broker.event_rows import event_row
from ..coordinator.events import AssignmentsDistributed, ReplyEmitted
import trio

from .appender import Appender
from .encoder import whole_messages
from .encoder import format_lines
from .encoder import message as encoder_message
from .encoder import TOPIC_NAMES_TAG, names_message
from .encoder_process import ENCODER_MAIN, EncoderProcess  # noqa: F401 (tests start it)
from .schema import SCHEMA_VERSION

log = logging.getLogger("kafka_emu.trace")
_REPLY_EMITTED = ReplyEmitted.__name__  # the tag of its rows
_ROWS_ONLY = {tuple}
_CHUNK = 5000  # events formatted at once without an encoder
# Rows marshal-ed together for the encoder as soon as that many have queued (and at each flush):
# enough that a message's fixed costs are negligible, few enough that the rows are still in the
# CPU's caches (see "flushing").
PACK_ROWS = 256
ENCODER_EXIT_TIMEOUT_S = 60.0  # at the end of a run: for the encoder to take and write the rest

COMPRESSIONS = ("gzip",)
MIN_FREE_BYTES = 1 << 20  # refuse to start a trace on a disk with less than 1 MiB free


class TraceError(Exception):
    """The trace cannot be written (message is one line, for the CLI)."""


def new_run_id(now: datetime.datetime | None = None) -> str:
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def _emu_version() -> str:
    from .. import __version__
    return __version__


def _advertised(broker: Any) -> dict[str, int]:
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


class TraceWriter:
    def __init__(self, trace_dir: str | os.PathLike, *, labels: Mapping[str, str] | None = None,
                 compress: str | None = None, run_id: str | None = None,
                 flush_interval_s: float = 0.2, use_encoder: bool = True) -> None:
        if compress not in (None, *COMPRESSIONS):
            raise TraceError(f"unknown trace compression {compress!r} (choose from "
                             f"{', '.join(COMPRESSIONS)})")
        self.trace_dir = Path(trace_dir)
        self.labels = dict(labels or {})
        self.compress = compress
        self.run_id = run_id or new_run_id()
        self.flush_interval_s = flush_interval_s
        self.path: Path | None = None
        self._queue: list = []  # rows and dicts, for the encoder (see ``sink``)
        self._seq = 0
        self._fd: int | None = None
        self._file: Appender | None = None  # (the encoder's while it runs: see ``written``)
        self._failing = False  # a write failed (logged once per run; run_end counts them all)
        self._lock = threading.Lock()  # one write at a time (the worker thread and close())
        self._broker: Any = None
        self._topics_seen: tuple = ()
        self._unsubscribe = None
        self.use_encoder = use_encoder
        self._encoder: EncoderProcess | None = None
        self._pipe = -1  # the encoder's input, non-blocking
        self._unsent = memoryview(b"")  # the rest of a message the pipe has not taken yet
        self._packed: list[bytes] = []  # messages for the encoder, sent at the next flush
        # Fetch is recorded by its request frame (broker/frame_rows.py: its answer holds records)
        # while the topic ids it names are among those shipped to the encoder (see ``_pack``)
        self._answers: dict = {}  # request class -> its answer reader, for the observer seam
        self._shipped: dict = {}  # topic id -> name, as shipped to the encoder
        self._shipped_version = [-1]  # the catalogue's version when they were

    # -- start -----------------------------------------------------------------------------
    def open(self) -> "TraceWriter":
        """Create the run's file (checking the directory and the disk). Raises TraceError."""
        now = datetime.datetime.now(datetime.timezone.utc)
        folder = self.trace_dir / f"date={now:%Y-%m-%d}"
        suffix = ".jsonl.gz" if self.compress == "gzip" else ".jsonl"
        self.path = folder / f"run={self.run_id}{suffix}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            free = shutil.disk_usage(folder).free
            if free < MIN_FREE_BYTES:
                raise TraceError(f"cannot write traces to {self.trace_dir}: only {free} bytes "
                                 f"free on its disk")
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND,
                               0o644)
            self._file = Appender(self._fd, self.compress == "gzip", 0)
        except TraceError:
            raise
        except OSError as exc:
            raise TraceError(f"cannot write traces to {self.trace_dir}: "
                             f"{exc.strerror or exc}") from None
        return self

    def attach(self, broker: Any, nursery: trio.Nursery, config: Any = None) -> None:
        """Write ``run_start`` (synchronously: a failure raises TraceError), subscribe to the
        broker's observer seam and start ``flush_loop`` in the emulator's nursery."""
        if self._fd is None:
            self.open()
        start = {"kind": "run_start", "run": self.run_id, "seq": 0, "at_ms": broker.now_ms(),
                 "schema_version": SCHEMA_VERSION, "emu_version": _emu_version(),
                 "config": config_map(config if config is not None else broker.config),
                 "labels": self.labels, "host": broker.bound_host, "port": broker.bound_port,
                 "broker_api_versions": _advertised(broker)}
        try:
            self._write([start])
        except OSError as exc:
            self._close_fd()
            raise TraceError(f"cannot write traces to {self.trace_dir}: "
                             f"{exc.strerror or exc}") from None
        self._seq = 1
        self._broker = broker
        if self.use_encoder:
            self._start_encoder()
        # (replies=False: no ReplyEmitted is built for the trace alone; see ``sink``;
        # frames: Heartbeats and the like come as their frames, see "the sink" -- only with the
        # encoder process, which decodes them; without one a row is cheaper made where it is)
        self._unsubscribe = broker.observation.subscribe(self.sink, rows=True,
                                                         many=self.sink_many, replies=False,
                                                         frames=self._encoder is not None,
                                                         answers=self._answers)
        nursery.start_soon(self.flush_loop)

    # -- the sink: on the emulator's thread, cheap ------------------------------------------
    #
    # The queue holds what the encoder takes: rows (tuples of plain values) and dicts. Rows the
    # request path emits are queued as they come; the few event objects (coordinator events) are
    # turned into rows here, once. ReplyEmitted is never queued. Once PACK_ROWS have queued they
    # are marshal-ed into one message for the encoder (see "flushing").

    def sink(self, event: Any) -> None:
        if type(event) is tuple:  # a row (broker/event_rows.py): RequestHandled or ReplyEmitted
            if event[0] != _REPLY_EMITTED:
                self._queue.append(event)
            return
        kind = type(event)
        if kind is ReplyEmitted:
            # The coordinator's view of an answer whose request_handled line follows with the
            # same error (and the client, group and member): the trace keeps that one. Writing
            # both doubled the lines of every heartbeat for nothing a reader can join.
            return
        if kind is AssignmentsDistributed and self._broker is not None:
            self._snapshot_topics(event.at_ms)
        self._queue.append(event_row(event))

    def sink_many(self, events: list) -> None:
        """``sink`` for a batch (the observer seam's deferred delivery, once per batch the
        emulator's serving task emits between two yields). A batch of rows only -- what serving
        requests emits -- is queued as it is while no sink wants ReplyEmitted (none is built:
        a C pass over the batch tells it holds rows only), else filtered by one comprehension;
        a batch holding an event object (the coordinator's) goes through ``sink`` one event
        at a time."""
        broker = self._broker
        if set(map(type, events)) == _ROWS_ONLY:
            if broker is not None and not broker.observation.replies:
                self._queue += events
            else:
                self._queue += [row for row in events if row[0] != _REPLY_EMITTED]
        else:  # (not by a TypeError caught: a commit's batch holds its OffsetsCommitted)
            sink = self.sink
            for event in events:
                sink(event)
        if len(self._queue) >= PACK_ROWS and self._encoder is not None:
            self._pack()

    def _snapshot_topics(self, at_ms: int) -> None:
        topics = tuple(sorted((t.name, t.partitions) for t in self._broker.topics.all()))
        if topics != self._topics_seen:
            self._topics_seen = topics
            self._queue.append({"kind": "topics_known", "at_ms": at_ms, "topic_partitions": [
                {"topic": name, "count": count} for name, count in topics]})

    # -- flushing ------------------------------------------------------------------------------
    #
    # Rows are marshal-ed (in C, one call per message) as soon as PACK_ROWS have queued, and at
    # each flush: the queue stays small, so rows are freed while still in the CPU's caches, and
    # a message holds a row in a quarter of the memory or less. Every ``flush_interval_s`` the
    # messages packed since the last flush go in one write to the encoder's pipe, non-blocking:
    # what the pipe cannot take at once is written when trio says it can take more, so a slow
    # encoder never stalls serving and no thread is involved. A flush cancelled mid-write (the
    # emulator stopping) leaves the rest in ``_unsent``, which ``flush()`` writes first: the
    # encoder only ever sees whole messages, in order.

    async def flush_loop(self) -> None:
        """Run as a task of the emulator's nursery: write what has queued, every interval."""
        while True:
            await trio.sleep(self.flush_interval_s)
            self._drain()
            if self._encoder is not None:
                if not self._encoder.read_acks():  # (one read: how far the encoder got)
                    self._encoder_failed("it exited")
                else:
                    self._log_errors(self._encoder.acks.errors)
            if self._encoder is None:
                for data, lines in self._formatted():  # formatted here, written by a thread
                    await trio.to_thread.run_sync(self._write_bytes, data, lines)
                continue
            if self._queue:
                self._pack()
            if self._packed:
                await self._send(self._take_packed())

    def _take(self, limit: int) -> tuple[int, list]:
        """Take up to ``limit`` queued items as (first seq, items)."""
        queue = self._queue
        if len(queue) <= limit:
            items, self._queue = queue, []
        else:
            items = queue[:limit]
            del queue[:limit]
        first = self._seq
        self._seq += len(items)
        return first, items

    def _pack(self) -> None:
        """The queue, as one message for the encoder, then the topic names its next records may
        need (``_ship_topic_names``: after, as records before a change name topics as before)."""
        first, items = self._take(len(self._queue))
        try:
            message = encoder_message(first, items)
        except ValueError:  # a value marshal cannot carry: format here, send the lines
            lines = format_lines(first, items, self.run_id).split("\n")[:-1]
            message = encoder_message(first, [line + "\n" for line in lines])  # (item per line)
        self._packed.append(message)
        self._ship_topic_names()

    def _ship_topic_names(self) -> None:
        """Ship the encoder the names of the topics live now, where the catalogue changed since
        it was last told (its ``version``), and record Fetch by its frame once there is a
        catalogue. The request path records a Fetch by its frame only while the catalogue is
        unchanged since and every id it names is live (``frame_rows.answer_reader``); else it
        makes the row itself, so a row names a topic as it did when the request was served."""
        broker = self._broker
        catalogue = broker.topics.__dict__.get("catalogue") if broker is not None else None
        if catalogue is None:  # (made on first use, not here)
            return
        shipped, seen = self._shipped, self._shipped_version
        if not self._answers:
            from ..broker.frame_rows import answer_reader
            from ..protocol.messages.fetch import FetchRequest, FetchResponse
            read = answer_reader(FetchRequest, FetchResponse, catalogue, seen)
            if read is not None:
                self._answers[FetchRequest] = read
        if catalogue.version == seen[0]:
            return
        from ..broker.frame_rows import learn_topic_names
        # (an id a test's uuid_factory gives again, to another topic, is shipped again)
        new = {topic_id: topic.name for topic_id, topic in catalogue._by_id.items()
               if shipped.get(topic_id) != topic.name}
        if new:
            learn_topic_names(new)  # (here too: lines formatted here if the encoder dies)
            self._packed.append(names_message({t.bytes: name for t, name in new.items()}))
            shipped.update(new)
        seen[0] = catalogue.version

    def _take_packed(self) -> bytes:
        """The messages packed since the last flush, in one piece."""
        data = b"".join(self._packed)
        self._packed = []
        return data

    def _formatted(self):
        """Without the encoder, chunks of (lines, their count) formatted here: the messages packed
        for an encoder that died before they were sent, then the queue."""
        if self._packed:
            for first, items in whole_messages(bytearray(self._take_packed()))[0]:
                if first != TOPIC_NAMES_TAG:  # (names: learnt already, see _ship_topic_names)
                    yield format_lines(first, items, self.run_id).encode(), len(items)
        while self._queue:
            first, items = self._take(_CHUNK)
            yield format_lines(first, items, self.run_id).encode(), len(items)

    async def _send(self, data: bytes) -> None:
        """Messages to the encoder, waiting (not blocking) while its pipe is full."""
        self._unsent = memoryview(data)
        try:
            while not self._write_unsent():
                # (its acknowledgements are read meanwhile: an encoder blocked writing them to a
                # full pipe would take no more input -- a deadlock)
                with trio.move_on_after(self.flush_interval_s):
                    await trio.lowlevel.wait_writable(self._pipe)
                if self._encoder is not None:
                    self._encoder.read_acks()
        except OSError as exc:
            self._encoder_failed(exc.strerror or str(exc))

    def _finish_unsent(self) -> None:
        """``_send``'s loop for the end of a run: blocks until the pipe has taken it all, or
        until the encoder has taken nothing for ENCODER_EXIT_TIMEOUT_S (stuck: killed)."""
        deadline = time.monotonic() + ENCODER_EXIT_TIMEOUT_S
        try:
            while self._unsent:
                left = len(self._unsent)
                if self._write_unsent():
                    break
                if len(self._unsent) < left:
                    deadline = time.monotonic() + ENCODER_EXIT_TIMEOUT_S
                elif time.monotonic() > deadline:
                    self._encoder_failed(f"it took nothing for {ENCODER_EXIT_TIMEOUT_S:g} s")
                    return
                select.select([], [self._pipe], [], 0.2)
                self._encoder.read_acks()  # (see ``_send``)
        except OSError as exc:
            self._encoder_failed(exc.strerror or str(exc))

    def _write_unsent(self) -> bool:
        """Write as much of the unsent messages as the pipe takes now; True once all are written."""
        while self._unsent:
            try:
                self._unsent = self._unsent[os.write(self._pipe, self._unsent):]
            except BlockingIOError:
                return False
        return True

    def _encoder_failed(self, why: str) -> None:
        """The encoder died (or is stuck): its file is settled and lines are formatted here from
        now on. What it had not written -- its pipe, the rest of a flush -- is not among the
        lines it acknowledged, so ``run_end`` counts it as dropped."""
        encoder, self._encoder = self._encoder, None
        self._unsent = memoryview(b"")
        if encoder is None:
            return
        encoder.kill(self._fd)
        self._adopt(encoder)
        log.error("trace %s: the encoder process is gone (%s, exit code %s); the run goes on "
                  "with the lines formatted in the emulator's process, and run_end counts the "
                  "events lost", self.path, why, encoder.process.returncode)

    def _drain(self) -> None:
        if self._broker is not None:
            self._broker.observation.drain()  # deferred events first (broker/observe.py)

    def flush(self) -> None:
        """Deliver everything queued now (synchronously; at the end of a run)."""
        self._drain()
        if self._encoder is not None:
            self._finish_unsent()  # the rest of what a cancelled flush began
        if self._encoder is not None:
            if self._queue:
                self._pack()
            if self._packed:
                self._unsent = memoryview(self._take_packed())
                self._finish_unsent()
        if self._encoder is None:
            for data, lines in self._formatted():
                self._write_bytes(data, lines)

    # -- the encoder process ---------------------------------------------------------------------
    def _start_encoder(self) -> None:
        """Format lines in a child process (encoder.py) from now on; if it cannot be started,
        this process formats them (and says so once)."""
        try:
            self._encoder = EncoderProcess.start(self._fd, self.run_id, self.compress,
                                                 self._file.end)
        except OSError as exc:
            log.warning("trace %s: cannot start the encoder process (%s); formatting lines in "
                        "the emulator's process", self.path, exc)
            return
        self._pipe = self._encoder.pipe

    def _stop_encoder(self) -> None:
        """Close its input, wait for it to write what it has, take over the file."""
        encoder, self._encoder = self._encoder, None
        if encoder is None:
            return
        if not encoder.finish(self._fd, ENCODER_EXIT_TIMEOUT_S):
            log.error("trace %s: the encoder process did not finish in %g s (killed)", self.path,
                      ENCODER_EXIT_TIMEOUT_S)
        elif encoder.process.returncode:
            log.error("trace %s: the encoder process ended with code %s", self.path,
                      encoder.process.returncode)
        self._adopt(encoder)

    def _adopt(self, encoder: EncoderProcess) -> None:
        """The file as the encoder left it (settled), with its counts, is this process's again."""
        self._log_errors(encoder.acks.errors)
        with self._lock:
            self._file.adopt(encoder.acks)

    # -- writing here ------------------------------------------------------------------------
    def _write_bytes(self, data: bytes, lines: int) -> None:
        with self._lock:
            error = self._file.append(data, lines)
        if error is not None:
            self._log_errors([error.strerror or str(error)])

    def _log_errors(self, messages: list[str]) -> None:
        """A failed write, logged once per run (every later one is counted in run_end)."""
        if messages and not self._failing:
            self._failing = True
            log.error("trace %s: cannot write (%s); the run goes on, every line is whole and the "
                      "events lost are counted in run_end", self.path, messages[0])
        messages.clear()

    def _write(self, records: list[dict]) -> None:
        data = "".join(json.dumps(r, separators=(",", ":"), default=str) + "\n"
                       for r in records).encode()
        error = self._file.append(data, len(records))
        if error is not None:
            raise error

    # -- end -------------------------------------------------------------------------------
    def close(self, reason: str = "stopped") -> None:
        """Flush what is queued, write ``run_end``, close the file (idempotent)."""
        if self._fd is None:
            return
        self.flush()
        self._stop_encoder()
        events = self._seq
        with self._lock:
            file = self._file
            end = {"kind": "run_end", "run": self.run_id, "seq": events,
                   "at_ms": self._last_at_ms(), "events": events, "written": file.written,
                   "dropped": events - file.written, "dropped_disk": file.lost,
                   "write_failures": file.failures, "reason": reason}
            try:
                self._write([end])
            except OSError as exc:
                log.error("trace %s: cannot write its end (%s)", self.path,
                          exc.strerror or exc)
            self._close_fd()
        if end["dropped"]:
            log.warning("trace %s: %d of %d events are not in the file (%d lost to failed "
                        "writes)", self.path, end["dropped"], events, end["dropped_disk"])

    def _last_at_ms(self) -> int:
        return int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000)

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @property
    def written(self) -> int:
        """Lines in the file so far (run_start included), as far as the encoder acknowledged."""
        encoder = self._encoder
        return self._file.written + (encoder.acks.written if encoder is not None else 0)

    @property
    def dropped_disk(self) -> int:
        """Lines failed writes lost so far (as far as the encoder acknowledged)."""
        encoder = self._encoder
        return self._file.lost + (encoder.acks.lost if encoder is not None else 0)

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close("error" if exc[0] is not None else "stopped")


def parse_labels(items) -> dict[str, str]:
    """["client=aiokafka", ...] or [("client", "aiokafka"), ...] -> {"client": "aiokafka"}."""
    labels = {}
    for item in items or ():
        if isinstance(item, str):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise TraceError(f"expected a trace label key=value, got {item!r}")
            item = (key.strip(), value.strip())
        labels[item[0]] = item[1]
    return labels


def write_scenario_verdict(trace_dir: str | os.PathLike, *, scenario: str, client: str,
                           client_version: str, verdict: str, reason: str = "",
                           seconds: float | None = None, run_id: str | None = None) -> Path:
    """Record one conformance verdict as a run of its own (run_start, scenario_verdict, run_end)
    in the trace layout, so ``kafka-emu report`` shows it in the conformance matrix."""
    writer = TraceWriter(trace_dir, labels={"client": client, "client_version": client_version,
                                            "scenario": scenario}, run_id=run_id).open()
    now = writer._last_at_ms()
    try:
        writer._write([
            {"kind": "run_start", "run": writer.run_id, "seq": 0, "at_ms": now,
             "schema_version": SCHEMA_VERSION, "emu_version": _emu_version(), "config": {},
             "labels": writer.labels, "host": None, "port": None, "broker_api_versions": {}},
            {"kind": "scenario_verdict", "run": writer.run_id, "seq": 1, "at_ms": now,
             "scenario": scenario, "client": client, "client_version": client_version,
             "verdict": verdict, "reason": reason, "seconds": seconds}])
        writer._seq = 2
    except OSError as exc:
        writer._close_fd()
        raise TraceError(f"cannot write traces to {trace_dir}: {exc.strerror or exc}") from None
    writer.close()
    return writer.path
