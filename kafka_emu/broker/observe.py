"""The one observer seam: every event the emulator emits reaches its sinks through here.

Theory of operation. The coordinator emits its events (``coordinator/events.py``) and the server
emits its own (``broker/events.py``: connections, requests, faults) through ONE callable,
``Observation.emit``. Sinks -- the control plane's timeline, the trace writer, the log lines, a
user's observer -- subscribe and unsubscribe at any time; ``emit`` is rebuilt on each change and
is ``None`` while nobody listens, so emitting code pays one attribute check and builds no event
when observation is off. The coordinator is told of every change (``Coordinator.set_observer``),
so its own ``observing`` flag stays in step.

A sink is called synchronously, in emission order, possibly in the middle of a coordinator
operation: it must not call back into the coordinator or block. A sink that raises is reported
(``on_error``) and the others still get the event: observation never breaks serving.

Events travel as objects or as *rows* (plain tuples of the same content, cheaper to make),
by reference or by their frames: ``event_rows.py`` says how, and holds what makes and reads
them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .event_rows import BY_FRAME, BY_REFERENCE, as_event

Sink = Callable[[Any], None]
_NOTHING: frozenset[type] = frozenset()  # what a sink that takes no references or frames gets
_NO_FRAMES: dict[type, int] = {}  # (never written: by_frame's value when no sink takes frames)


class Observation:
    def __init__(self, *, on_change: Callable[[Sink | None], None] | None = None,
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        # (sink, rows, many, refs, replies, frames, answers): as ``subscribe`` was told
        self._sinks: list[tuple[Sink, bool, Callable[[list], None] | None, bool, bool, bool,
                                dict]] = []
        self._on_change = on_change
        self._on_error = on_error
        self.emit: Sink | None = None
        self._free_emit: Sink | None = None  # ``emit`` outside and inside a held batch
        self._held_emit: Sink | None = None
        # told of ``emit`` swapped for a held batch, nothing else changed (the coordinator's
        # ``swap_observer``; every other change goes to ``on_change``)
        self.on_swap: Callable[[Sink], None] | None = None
        # False while no sink wants ReplyEmitted (``subscribe(replies=False)``): the coordinator
        # then builds none (it is told with the observer, Coordinator.set_observer)
        self.replies = True
        # The request classes the request path records by reference (``REQUEST_REFS``): those
        # of ``BY_REFERENCE`` while every sink takes such records, none otherwise.
        self.by_reference: set[type] | frozenset[type] = _NOTHING
        self.all_refs = False
        # The same classes, recorded by their frames instead (``REQUEST_FRAME``), while every
        # sink takes such records (the trace writer alone); none otherwise.
        self.by_frame: dict[type, int] = _NO_FRAMES  # request class -> newest version by frames
        # Request classes recorded by their request frame and ``read(request, response)``
        # (frame_rows.answer_reader: a Fetch, whose answer holds records) while the one sink
        # gave them (``subscribe(answers=...)``, the trace writer); none otherwise.
        self.by_answer: dict[type, Callable[[Any, Any], Any]] = _NO_FRAMES  # type: ignore
        self._pending: list = []  # deferred events (see ``deliver_deferred``)
        # When the request being served started (perf_now): the request path keeps it here,
        # one clock reading per observed request (broker/connection.py); None while the batch
        # it belongs to began unobserved.
        self.mark: float | None = None
        # The clock reading of the commit the request being served made, while the coordinator
        # left its OffsetsCommitted to the request's record by frames (``tell``, the trace alone:
        # dispatch.py records both, event_rows.COMMIT_FRAME); None otherwise.
        self.commit_at: int | None = None
        # True while a connection's task serves a batch of requests: it delivers what the batch
        # emits itself, by ``release()`` before it next waits (Connection.flush), so deferred
        # events do not wake the delivery task meanwhile
        self.held = False
        self._deferring = False
        self._waiting: Any = None  # the delivery task while it waits to be woken
        self._trio: Any = None  # (imported by the delivery task: observation needs no trio)

    @property
    def sinks(self) -> tuple[Sink, ...]:
        return tuple(entry[0] for entry in self._sinks)

    def subscribe(self, sink: Sink, *, rows: bool = False,
                  many: Callable[[list], None] | None = None,
                  refs: bool = False, replies: bool = True,
                  frames: bool = False, answers: dict | None = None) -> Callable[[], None]:
        """Start delivering events to ``sink``; returns the function that stops it. With
        ``rows=True`` the sink also accepts events in their row form (see the module doc);
        ``many(events)``, if given, takes a list of them at once (deferred delivery). With
        ``refs=True`` (implies ``rows``) it also accepts RequestHandled as a record of
        references (``REQUEST_REFS``; ``row_of`` makes the row). With ``replies=False`` it does
        not want the coordinator's ReplyEmitted: while no sink wants them none is built (while
        one does, every sink gets them, as any event). With ``frames=True`` (implies ``rows``)
        it also accepts RequestHandled as a record of the request's and the response's frames
        (``REQUEST_FRAME``; ``row_of`` makes the row). With ``answers`` (and ``frames``) too, the
        request classes it maps are recorded by their request frame and what the reader it maps
        them to returns (a dict the sink may fill later), while it is the only sink."""
        self.drain()  # a new sink sees nothing emitted before it came
        entry = (sink, rows or refs or frames, many, refs, replies, frames,
                 answers if answers is not None and frames else _NO_FRAMES)
        self._sinks.append(entry)
        self._rebuild()

        def unsubscribe() -> None:
            self.drain()  # nor does it miss what was emitted while it listened
            if entry in self._sinks:
                self._sinks.remove(entry)
                self._rebuild()
        return unsubscribe

    def tell(self, coordinator: Any) -> None:
        """Hand the coordinator the emitting callable and what the sinks take: rows; no
        ReplyEmitted while none wants them; ReplyEmitted by reference while every sink takes
        references (``REPLY_REFS``); while every sink takes frames, the place a commit
        recorded by its frames notes its clock reading (``commit_at``)."""
        coordinator.set_observer(self.emit, rows=True, replies=self.replies,
                                 reply_refs=self.all_refs,
                                 frame_commits=self if self.by_frame is BY_FRAME else None)

    def _failed(self, exc: Exception) -> None:  # a broken sink must not break serving
        if self._on_error is not None:
            self._on_error(exc)

    def _rebuild(self) -> None:
        row_sinks = tuple(sink for sink, rows, *_ in self._sinks if rows)
        object_sinks = tuple(sink for sink, rows, *_ in self._sinks if not rows)
        failed = self._failed
        # every sink takes references (BY_REFERENCE fills as the request path meets classes)
        self.all_refs = bool(self._sinks) and all(e[3] for e in self._sinks)
        self.by_reference = BY_REFERENCE if self.all_refs else _NOTHING
        self.by_frame = (BY_FRAME if self._sinks and all(e[5] for e in self._sinks)
                         else _NO_FRAMES)
        self.by_answer = (self._sinks[0][6] if len(self._sinks) == 1 and self.by_frame is BY_FRAME
                          else _NO_FRAMES)
        self.replies = any(e[4] for e in self._sinks)
        held_emit = None
        if self._deferring and row_sinks and not object_sinks:
            pending, append, wake = self._pending, self._pending.append, self._wake
            held_emit = append  # while ``held``: no Python frame per event (see ``hold``)

            def emit(event: Any) -> None:
                if not pending and not self.held:
                    wake()
                append(event)
        elif len(row_sinks) == 1 and not object_sinks:  # the usual case: the timeline alone
            (only,) = row_sinks

            def emit(event: Any) -> None:
                try:
                    only(event)
                except Exception as exc:
                    failed(exc)
        elif not object_sinks:
            def emit(event: Any) -> None:
                for sink in row_sinks:
                    try:
                        sink(event)
                    except Exception as exc:
                        failed(exc)
        else:
            def emit(event: Any) -> None:
                for sink in row_sinks:
                    try:
                        sink(event)
                    except Exception as exc:
                        failed(exc)
                if type(event) is tuple:
                    event = as_event(event)
                for sink in object_sinks:
                    try:
                        sink(event)
                    except Exception as exc:
                        failed(exc)

        self._free_emit = emit if self._sinks else None
        self._held_emit = held_emit if self._sinks else None
        self.emit = (self._held_emit if self.held and self._held_emit is not None
                     else self._free_emit)
        if self._on_change is not None:
            self._on_change(self.emit)

    # -- deferred delivery ---------------------------------------------------------------------
    #
    # While only row sinks listen and ``deliver_deferred`` runs (the server starts it), emitting
    # is appending to a list: the sinks get the events in one batch when that task next runs --
    # right after the emitting task yields to trio's scheduler -- or sooner, whenever anybody
    # calls ``drain()``: a reader of the timeline, a waiter, a (un)subscribing sink, the trace
    # writer before it writes. A connection serving a batch of requests ``hold()``s delivery:
    # it calls ``release()`` before it next waits, which delivers at the same moment without
    # waking the task, and meanwhile ``emit`` is the list's own append (the coordinator is told
    # too, ``on_swap``): nothing to wake, so no Python call per event. Order is kept; an object sink makes
    # delivery immediate again.

    def _wake(self) -> None:
        task = self._waiting
        if task is not None:  # (else it is running, or already woken)
            self._waiting = None
            self._trio.lowlevel.reschedule(task)

    def _abort(self, raise_cancel: Any) -> Any:
        self._waiting = None
        return self._trio.lowlevel.Abort.SUCCEEDED

    def hold(self) -> None:
        """A serving task starts a batch: deliver what it emits when it ``release()``s."""
        self.held = True
        held = self._held_emit
        if held is not None and self.emit is not held:
            self.emit = held
            swap = self.on_swap
            if swap is not None:
                swap(held)

    def release(self) -> None:
        """The serving task that ``held`` delivery is about to wait: deliver what it emitted."""
        self.held = False
        free = self._free_emit
        if self.emit is not free:
            self.emit = free
            swap = self.on_swap
            if swap is not None:
                swap(free)
        if self._pending:
            self.drain()

    def drain(self) -> None:
        """Deliver every deferred event now."""
        pending = self._pending
        if not pending:
            return
        batch = pending.copy()
        pending.clear()
        for sink, _, many, *_ in self._sinks:
            try:
                if many is not None:
                    many(batch)
                else:
                    for event in batch:
                        sink(event)
            except Exception as exc:
                self._failed(exc)

    async def deliver_deferred(self, *, task_status: Any = None) -> None:
        """Run for as long as the broker serves (server.serve starts it): defer delivery."""
        import trio
        self._trio = trio
        self._deferring = True
        self._rebuild()
        try:
            if task_status is not None:
                task_status.started()
            while True:
                # one step of this task per wake: parked (no Event to make and set) until the
                # first deferred event, then it delivers and parks again
                if self._pending:
                    await trio.lowlevel.checkpoint()  # a steady stream must not starve others
                else:
                    self._waiting = trio.lowlevel.current_task()
                    await trio.lowlevel.wait_task_rescheduled(self._abort)
                self.drain()
        finally:
            self._deferring = False
            self._waiting = None
            self.drain()
            self._rebuild()


# -- rows: an event as a tuple of its class's name and its fields -----------------------------
#
# A row holds plain values only -- the class by name, enum fields by value -- so a row the
# timeline or the trace queue keeps is a tuple of atomic values, which CPython's collector stops
# tracking after one look, instead of walking it again in every collection while it is kept.

