"""Feeding the encoder process: queued rows packed into messages and sent through its pipe.

Theory of operation. The writer (``writer.py``) queues the request path's rows; formatting them
is the encoder process's work (``encoder.py``), so what the emulator's process does with them is
only this: ``pack`` marshals what has queued into one message (one C call per message, as soon
as ``writer.PACK_ROWS`` rows have queued and at each flush, so rows are freed while still in the
CPU's caches and a message holds a row in a quarter of the memory or less); ``send_ready``
writes a message packed on the request path to the encoder's pipe right away, while it is still
in the caches, as far as the pipe takes it and unless a flush is sending, and every
``flush_interval_s`` ``send`` writes what is still packed in one ``writev``, without blocking:
what the pipe cannot take at once is written when trio says it can take more, so a slow encoder
never stalls serving and no thread is involved. (The messages are never joined, nor a message's
header and body: a flush's worth, megabytes at full speed, joined into one bytes would
be memory the kernel hands out afresh and zeroes at every flush -- a page fault per 4 KiB, time
no instruction count shows.) A send cut short (the emulator stopping) leaves the rest in
``unsent``, which ``finish_unsent`` writes first at the end of a run: the encoder only ever sees
whole messages, in order.

A Fetch names its topics by id, and is recorded by its request frame (``broker/frame_rows.py``)
only while the encoder knows the names the catalogue gives those ids: after each message
``ship_topic_names`` sends the encoder the names of the topics live now, where the catalogue
changed since it last did (its ``version``), and gives the observer seam the Fetch's answer
reader (``answers``) once there is a catalogue. While the catalogue changed since, the request
path makes the row itself, so a line names a topic as it did when the request was served.

When the encoder is gone (died, stuck) the writer takes back what was packed but never sent
(``take_packed``) and formats it itself; what sat in the pipe, or in ``unsent``, is simply not
among the lines the encoder acknowledged, so ``run_end`` counts it as dropped.
"""

from __future__ import annotations

import os
import select
import time
from typing import Any

import trio

from .encoder import format_lines, message_parts, names_message
from .encoder_process import EncoderProcess

_IOV_MAX = 1024  # buffers per writev (IOV_MAX on Linux and macOS)


class EncoderGone(Exception):
    """The encoder process exited, or its pipe failed (message: why, for the log)."""


class EncoderFeed:
    def __init__(self, encoder: EncoderProcess, run_id: str, broker: Any) -> None:
        self.encoder = encoder
        self.run_id = run_id
        self.broker = broker
        self.pipe = encoder.pipe  # non-blocking
        self.unsent: list = []  # the rest of a send the pipe has not taken yet (buffers)
        # messages for the encoder (each as its header and its body), sent at the next flush
        self.packed: list[bytes] = []
        self.answers: dict = {}  # request class -> its answer reader, for the observer seam
        self._shipped: dict = {}  # topic id -> name, as shipped to the encoder
        self._shipped_version = [-1]  # the catalogue's version when they were

    # -- packing ---------------------------------------------------------------------------
    def pack(self, first: int, items: list) -> None:
        """``items`` (sequence numbers from ``first``) as one message, then the topic names the
        encoder's next records may need (after: records before a change name topics as
        before)."""
        try:
            self.packed += message_parts(first, items)  # (header and body: never joined)
        except ValueError:  # a value marshal cannot carry: format here, send the lines
            lines = format_lines(first, items, self.run_id).split("\n")[:-1]
            self.packed += message_parts(first, [line + "\n" for line in lines])  # (a line each)
        self.ship_topic_names()

    def ship_topic_names(self) -> None:
        """Ship the encoder the names of the topics live now, where the catalogue changed since
        it was last told, and record Fetch by its frame once there is a catalogue (see the
        module's doc)."""
        catalogue = self.broker.topics.__dict__.get("catalogue")
        if catalogue is None:  # (made on first use, not here)
            return
        shipped, seen = self._shipped, self._shipped_version
        if not self.answers:
            from ..broker.frame_rows import answer_reader
            from ..broker.handlers.fetch import VOUCHED
            from ..protocol.messages.fetch import FetchRequest, FetchResponse
            read = answer_reader(FetchRequest, FetchResponse, catalogue, seen, VOUCHED)
            if read is not None:
                self.answers[FetchRequest] = read
        if catalogue.version == seen[0]:
            return
        from ..broker.frame_rows import learn_topic_names
        # (an id a test's uuid_factory gives again, to another topic, is shipped again)
        new = {topic_id: topic.name for topic_id, topic in catalogue._by_id.items()
               if shipped.get(topic_id) != topic.name}
        if new:
            learn_topic_names(new)  # (here too: lines formatted here if the encoder dies)
            self.packed.append(names_message({t.bytes: name for t, name in new.items()}))
            shipped.update(new)
        seen[0] = catalogue.version

    def send_ready(self) -> None:
        """Write the packed messages now, as far as the pipe takes them, unless a send is under
        way; what is left waits for the next flush (``send``; a failing pipe is its to
        find)."""
        if self.unsent or not self.packed:
            return
        self.unsent, self.packed = self.packed, []
        try:
            if self._write_unsent():
                return
        except OSError:
            pass
        self.packed, self.unsent = self.unsent, []  # (the rest, first: cut where written)

    def take_packed(self) -> bytes:
        """The messages packed since the last send, in one piece."""
        data = b"".join(self.packed)
        self.packed = []
        return data

    # -- sending -----------------------------------------------------------------------------
    async def send(self, interval_s: float) -> None:
        """The packed messages to the encoder, waiting (not blocking) while its pipe is full.
        Raises EncoderGone."""
        self.unsent, self.packed = self.packed, []
        try:
            while not self._write_unsent():
                # (its acknowledgements are read meanwhile: an encoder blocked writing them to a
                # full pipe would take no more input -- a deadlock)
                with trio.move_on_after(interval_s):
                    await trio.lowlevel.wait_writable(self.pipe)
                self.encoder.read_acks()
        except OSError as exc:
            raise EncoderGone(exc.strerror or str(exc)) from None

    def finish_unsent(self, timeout_s: float) -> None:
        """``send``'s loop for the end of a run: blocks until the pipe has taken it all, or
        raises EncoderGone once the encoder has taken nothing for ``timeout_s`` (stuck)."""
        deadline = time.monotonic() + timeout_s
        try:
            while self.unsent:
                left = self._left()
                if self._write_unsent():
                    break
                if self._left() < left:
                    deadline = time.monotonic() + timeout_s
                elif time.monotonic() > deadline:
                    raise EncoderGone(f"it took nothing for {timeout_s:g} s")
                select.select([], [self.pipe], [], 0.2)
                self.encoder.read_acks()  # (see ``send``)
        except OSError as exc:
            raise EncoderGone(exc.strerror or str(exc)) from None

    def send_now(self, timeout_s: float) -> None:
        """What a cut send left, then every packed message, blocking (the end of a run)."""
        self.finish_unsent(timeout_s)
        if self.packed:
            self.unsent, self.packed = self.packed, []
            self.finish_unsent(timeout_s)

    def _write_unsent(self) -> bool:
        """Write as much of ``unsent`` as the pipe takes now; True once all is written."""
        unsent = self.unsent
        while unsent:
            try:
                done = os.writev(self.pipe, unsent[:_IOV_MAX])
            except BlockingIOError:
                return False
            whole = 0  # the buffers written whole go, the one written in part is cut
            while whole < len(unsent) and done >= len(unsent[whole]):
                done -= len(unsent[whole])
                whole += 1
            del unsent[:whole]
            if done:
                unsent[0] = memoryview(unsent[0])[done:]
        return True

    def _left(self) -> int:
        return sum(map(len, self.unsent))

    def kill(self, fd: int) -> EncoderProcess:
        """The encoder died or is stuck: killed, its file settled (``encoder_process.py``);
        whatever was not sent yet is dropped."""
        self.unsent = []
        self.encoder.kill(fd)
        return self.encoder
