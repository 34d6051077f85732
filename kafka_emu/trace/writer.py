"""The trace writer: one JSON Lines file per run, fed by the observer seam.

Theory of operation. ``TraceWriter.open()`` creates the run's file (``run_file.py``: its layout,
the checks of the directory and the disk) and ``attach`` writes its ``run_start`` line
synchronously, so a bad ``--trace-dir`` is an error before the server accepts anything.

On the request path the sink only queues the event's row (``broker/event_rows.py``) -- or, for a
Heartbeat and the like, the request's and the response's frames (``REQUEST_FRAME``, decoded into
the row by the encoder, ``broker/frame_rows.py``); the observer seam hands them over in batches
(``sink_many``: one C pass per batch, no Python work per row). Lines are formatted by the
*encoder*, a child process (``encoder.py``) started with the writer: formatting a request's line
costs more CPU than all the rest of observing it, and a second Python *thread* doing it would
fight the serving thread for the GIL. The writer packs the queue into messages for it as rows
queue and sends each at once where the pipe has room, the rest every ``flush_interval_s`` from
a trio task of the emulator (``flush_loop``), without blocking (``encoder_feed.py``). Without the encoder (it could not
start, or it died) lines are formatted on the emulator's thread and written by a worker thread.

Whole lines only, whatever fails: every write goes through an ``Appender`` (``appender.py``),
which rolls a failed write (a full disk) back to the last whole line or gzip member and counts
its lines, in this process or in the encoder, which acknowledges every chunk it writes. So
``run_end`` knows how many lines reached the file: its ``dropped`` is every event that is not a
line of the file (``events - written``), ``dropped_disk`` those a failed write lost. An encoder
that dies (or is stuck past ``ENCODER_EXIT_TIMEOUT_S`` at the end of a run) is logged once, its
file cut back to the last chunk it acknowledged (``encoder_process.py``), and the run goes on
with the lines formatted here. A write error or the encoder dying is logged once; tracing never
stops serving. A process killed mid-run leaves a file whose every line is complete; with gzip
each write is its own gzip member, and concatenated members are one valid stream (RFC 1952).

Every event is written except ``ReplyEmitted`` (see ``sink``), which the writer tells the seam it
does not want, so the coordinator builds none while the trace is the only listener. The sink
runs on the emulator's trio thread, so it may read broker state: before an assignment goes out
it queues a ``topics_known`` snapshot (partition counts), from which a reader can tell which
subscribed partitions were left unassigned.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from operator import countOf
from pathlib import Path
from typing import Any

import trio

from ..broker.event_rows import event_row
from ..coordinator.events import AssignmentsDistributed, ReplyEmitted
from . import run_file
from .appender import Appender
from .encoder import TOPIC_NAMES_TAG, format_lines, whole_messages
from .encoder_feed import EncoderFeed, EncoderGone
from .encoder_process import ENCODER_MAIN, EncoderProcess
from .run_file import COMPRESSIONS, MIN_FREE_BYTES, TraceError, config_map, new_run_id, parse_labels

# (the run file's names too: callers import them from here)
__all__ = ["COMPRESSIONS", "ENCODER_EXIT_TIMEOUT_S", "ENCODER_MAIN", "MIN_FREE_BYTES", "PACK_ROWS",
           "TraceError", "TraceWriter", "config_map", "new_run_id", "parse_labels",
           "write_scenario_verdict"]

log = logging.getLogger("kafka_emu.trace")
_REPLY_EMITTED = ReplyEmitted.__name__  # the tag of its rows
_CHUNK = 5000  # events formatted at once without an encoder
# Rows marshal-ed together for the encoder as soon as that many have queued (and at each flush):
# enough that a message's fixed costs are negligible, few enough that the rows are still in the
# CPU's caches (encoder_feed.py).
PACK_ROWS = 256
ENCODER_EXIT_TIMEOUT_S = 60.0  # at the end of a run: for the encoder to take and write the rest


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
        self._feed: EncoderFeed | None = None  # while the encoder process runs
        self._orphans = b""  # messages packed for an encoder that died before they were sent

    # -- start -----------------------------------------------------------------------------
    def open(self) -> "TraceWriter":
        """Create the run's file (checking the directory and the disk). Raises TraceError."""
        self.path, self._fd = run_file.create(self.trace_dir, self.run_id, self.compress)
        self._file = Appender(self._fd, self.compress == "gzip", 0)
        return self

    def attach(self, broker: Any, nursery: trio.Nursery, config: Any = None) -> None:
        """Write ``run_start`` (synchronously: a failure raises TraceError), subscribe to the
        broker's observer seam and start ``flush_loop`` in the emulator's nursery."""
        if self._fd is None:
            self.open()
        start = run_file.run_start(
            self.run_id, broker.now_ms(), labels=self.labels,
            config=config_map(config if config is not None else broker.config),
            host=broker.bound_host, port=broker.bound_port, apis=run_file.advertised(broker))
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
        feed = self._feed
        # (replies=False: no ReplyEmitted is built for the trace alone; see ``sink``;
        # frames: Heartbeats and the like come as their frames, see "the sink" -- only with the
        # encoder process, which decodes them; without one a row is cheaper made where it is)
        self._unsubscribe = broker.observation.subscribe(
            self.sink, rows=True, many=self.sink_many, replies=False, frames=feed is not None,
            answers=feed.answers if feed is not None else None)
        nursery.start_soon(self.flush_loop)

    # -- the sink: on the emulator's thread, cheap ------------------------------------------
    #
    # The queue holds what the encoder takes: rows (tuples of plain values) and dicts. Rows the
    # request path emits are queued as they come; the few event objects (coordinator events) are
    # turned into rows here, once. ReplyEmitted is never queued. Once PACK_ROWS have queued they
    # are marshal-ed into one message for the encoder (``_pack``).

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
        a C pass over the batch counts its rows, comparing types by identity, no set made),
        else filtered by one comprehension;
        a batch holding an event object (the coordinator's) goes through ``sink`` one event
        at a time."""
        broker = self._broker
        if countOf(map(type, events), tuple) == len(events):
            if broker is not None and not broker.observation.replies:
                self._queue += events
            else:
                self._queue += [row for row in events if row[0] != _REPLY_EMITTED]
        else:  # (not by a TypeError caught: a commit's batch holds its OffsetsCommitted)
            sink = self.sink
            for event in events:
                sink(event)
        if len(self._queue) >= PACK_ROWS and self._feed is not None:
            self._pack()
            self._feed.send_ready()

    def _snapshot_topics(self, at_ms: int) -> None:
        topics = tuple(sorted((t.name, t.partitions) for t in self._broker.topics.all()))
        if topics != self._topics_seen:
            self._topics_seen = topics
            self._queue.append({"kind": "topics_known", "at_ms": at_ms, "topic_partitions": [
                {"topic": name, "count": count} for name, count in topics]})

    # -- flushing ------------------------------------------------------------------------------
    async def flush_loop(self) -> None:
        """Run as a task of the emulator's nursery: write what has queued, every interval. A bug
        in a flush is logged once and recorded as the server records its own (the test fixture
        re-raises it), and the next interval flushes again: out of this task it would end the
        emulator's loop, and tracing never stops serving."""
        reported = False
        while True:
            await trio.sleep(self.flush_interval_s)
            try:
                await self._flush()
            except Exception as exc:  # noqa: BLE001 - a bug: recorded, serving goes on
                if not reported:
                    reported = True
                    log.exception("trace %s: a flush failed; the run goes on", self.path)
                if self._broker is not None:
                    self._broker.record_unexpected(exc)

    async def _flush(self) -> None:
        """One interval's flush (``flush_loop``)."""
        self._drain()
        feed = self._feed
        if feed is not None:
            if not feed.encoder.read_acks():  # (one read: how far the encoder got)
                self._encoder_failed("it exited")
            else:
                self._log_errors(feed.encoder.acks.errors)
        if self._feed is None:
            for data, lines in self._formatted():  # formatted here, written by a thread
                await trio.to_thread.run_sync(self._write_bytes, data, lines)
            return
        if self._queue:
            self._pack()
        if feed.packed:
            try:
                await feed.send(self.flush_interval_s)
            except EncoderGone as exc:
                self._encoder_failed(str(exc))

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
        """The queue, as one message for the encoder (encoder_feed.py)."""
        self._feed.pack(*self._take(len(self._queue)))  # type: ignore[union-attr]

    def _formatted(self):
        """Without the encoder, chunks of (lines, their count) formatted here: the messages packed
        for an encoder that died before they were sent, then the queue."""
        if self._orphans:
            orphans, self._orphans = self._orphans, b""
            for first, items in whole_messages(bytearray(orphans))[0]:
                if first != TOPIC_NAMES_TAG:  # (names: learnt already, encoder_feed.py)
                    yield format_lines(first, items, self.run_id).encode(), len(items)
        while self._queue:
            first, items = self._take(_CHUNK)
            yield format_lines(first, items, self.run_id).encode(), len(items)

    def _drain(self) -> None:
        if self._broker is not None:
            self._broker.observation.drain()  # deferred events first (broker/observe.py)

    def flush(self) -> None:
        """Deliver everything queued now (synchronously; at the end of a run)."""
        self._drain()
        feed = self._feed
        if feed is not None:
            if self._queue:
                self._pack()
            try:
                feed.send_now(ENCODER_EXIT_TIMEOUT_S)  # (first the rest of a cut flush)
            except EncoderGone as exc:
                self._encoder_failed(str(exc))
        if self._feed is None:
            for data, lines in self._formatted():
                self._write_bytes(data, lines)

    # -- the encoder process ---------------------------------------------------------------------
    def _start_encoder(self) -> None:
        """Format lines in a child process (encoder.py) from now on; if it cannot be started,
        this process formats them (and says so once)."""
        try:
            encoder = EncoderProcess.start(self._fd, self.run_id, self.compress, self._file.end)
        except OSError as exc:
            log.warning("trace %s: cannot start the encoder process (%s); formatting lines in "
                        "the emulator's process", self.path, exc)
            return
        self._feed = EncoderFeed(encoder, self.run_id, self._broker)

    def _encoder_failed(self, why: str) -> None:
        """The encoder died (or is stuck): its file is settled and lines are formatted here from
        now on, what was packed but not sent first. What it had not written -- its pipe, the
        rest of a flush -- is not among the lines it acknowledged: ``run_end`` counts it as
        dropped."""
        feed, self._feed = self._feed, None
        if feed is None:
            return
        self._orphans += feed.take_packed()
        encoder = feed.kill(self._fd)
        self._adopt(encoder)
        log.error("trace %s: the encoder process is gone (%s, exit code %s); the run goes on "
                  "with the lines formatted in the emulator's process, and run_end counts the "
                  "events lost", self.path, why, encoder.process.returncode)

    def _stop_encoder(self) -> None:
        """Close its input, wait for it to write what it has, take over the file."""
        feed, self._feed = self._feed, None
        if feed is None:
            return
        encoder = feed.encoder
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

    def _in_flight(self) -> bool:
        """Whether anything is queued, packed or being sent (not yet the encoder's)."""
        feed = self._feed
        return bool(self._queue or self._orphans or (
            feed is not None and (feed.packed or feed.unsent)))

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
        error = self._file.append(run_file.json_lines(records), len(records))
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
                   "at_ms": run_file.wall_ms(), "events": events, "written": file.written,
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

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @property
    def written(self) -> int:
        """Lines in the file so far (run_start included), as far as the encoder acknowledged."""
        feed = self._feed
        return self._file.written + (feed.encoder.acks.written if feed is not None else 0)

    @property
    def dropped_disk(self) -> int:
        """Lines failed writes lost so far (as far as the encoder acknowledged)."""
        feed = self._feed
        return self._file.lost + (feed.encoder.acks.lost if feed is not None else 0)

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close("error" if exc[0] is not None else "stopped")


def write_scenario_verdict(trace_dir: str | os.PathLike, *, scenario: str, client: str,
                           client_version: str, verdict: str, reason: str = "",
                           seconds: float | None = None, run_id: str | None = None) -> Path:
    """Record one conformance verdict as a run of its own (run_start, scenario_verdict, run_end)
    in the trace layout, so ``kafka-emu report`` shows it in the conformance matrix."""
    writer = TraceWriter(trace_dir, labels={"client": client, "client_version": client_version,
                                            "scenario": scenario}, run_id=run_id).open()
    now = run_file.wall_ms()
    try:
        writer._write([
            run_file.run_start(writer.run_id, now, config={}, labels=writer.labels, host=None,
                               port=None, apis={}),
            {"kind": "scenario_verdict", "run": writer.run_id, "seq": 1, "at_ms": now,
             "scenario": scenario, "client": client, "client_version": client_version,
             "verdict": verdict, "reason": reason, "seconds": seconds}])
        writer._seq = 2
    except OSError as exc:
        writer._close_fd()
        raise TraceError(f"cannot write traces to {trace_dir}: {exc.strerror or exc}") from None
    writer.close()
    return writer.path  # type: ignore[return-value]
