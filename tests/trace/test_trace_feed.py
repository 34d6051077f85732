"""The encoder feed writes the packed messages with writev, never joined: a pipe that takes a
send in pieces -- cutting a message anywhere, several times -- still gets every byte once, in
order (trace/encoder_feed.py)."""

from __future__ import annotations

import fcntl
import os
import threading
import types

from kafka_emu.trace.encoder import message, whole_messages
from kafka_emu.trace.encoder_feed import EncoderFeed


def _feed(pipe: int) -> EncoderFeed:
    encoder = types.SimpleNamespace(pipe=pipe, read_acks=lambda: True)
    return EncoderFeed(encoder, "run", broker=None)  # type: ignore[arg-type]


def test_a_send_the_pipe_takes_in_pieces_arrives_whole_and_in_order():
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # (Linux: a pipe of one page)
    except (AttributeError, OSError):
        pass
    feed = _feed(write_end)
    # messages of uneven sizes, so the pipe's pages cut them at varied places
    sent = [message(i * 10, [("Row", "x" * (i * 37 % 900), i)] * (1 + i % 7)) for i in range(300)]
    feed.unsent = list(sent)
    assert not feed._write_unsent()  # the pipe is full long before the end
    assert feed.unsent and feed._left() < sum(map(len, sent))
    received = bytearray()

    def drain() -> None:
        while True:
            chunk = os.read(read_end, 1000)  # (less than a page: many partial writes)
            if not chunk:
                return
            received.extend(chunk)
    reader = threading.Thread(target=drain)
    reader.start()
    feed.finish_unsent(30.0)
    assert not feed.unsent
    os.close(write_end)
    reader.join(30)
    os.close(read_end)
    assert bytes(received) == b"".join(sent)
    messages, used = whole_messages(received)
    assert used == len(received) and [first for first, _ in messages] == [i * 10 for i in range(300)]


def test_packed_messages_go_at_once_and_what_the_pipe_cannot_take_waits_in_order():
    """``send_ready`` (called as soon as a message is packed) writes what the pipe takes now;
    the rest stays packed, first, for the flush -- never sent twice, never reordered, and never
    while a flush's send is under way."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    except (AttributeError, OSError):
        pass
    feed = _feed(write_end)
    sent = [message(i, [("Row", "y" * (i * 53 % 700), i)] * 3) for i in range(200)]
    feed.packed = [sent[0]]
    feed.send_ready()
    assert feed.packed == [] and feed.unsent == []  # written at once: the pipe had room
    feed.packed = list(sent[1:])
    feed.send_ready()
    assert feed.packed and feed.unsent == []  # the pipe filled: the rest waits, packed
    feed.unsent = [b"?"]  # a flush's send under way: nothing goes past it
    before = list(feed.packed)
    feed.send_ready()
    assert feed.packed == before
    feed.unsent = []
    received = bytearray()

    def drain() -> None:
        while True:
            chunk = os.read(read_end, 1000)
            if not chunk:
                return
            received.extend(chunk)
    reader = threading.Thread(target=drain)
    reader.start()
    feed.send_now(30.0)
    os.close(write_end)
    reader.join(30)
    os.close(read_end)
    assert bytes(received) == b"".join(sent)
