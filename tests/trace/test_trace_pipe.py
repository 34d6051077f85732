"""The writer's pipe to the encoder: messages packed as rows queue, a full pipe that never stalls
serving, a flush cut short by the emulator stopping, and an encoder that turns whatever whole
messages it could read at once into one write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import trio

from kafka_emu.broker.events import RequestHandled
from kafka_emu.broker.event_rows import row_index
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.wire import WireClient
from kafka_emu.trace import TraceWriter
from kafka_emu.trace.appender import Acks
from kafka_emu.trace.encoder import format_lines, message
from kafka_emu.trace.writer import ENCODER_MAIN, PACK_ROWS

API_VERSIONS = BY_NAME["ApiVersions"]
CORRELATION = row_index(RequestHandled, "correlation_id")


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def _a_real_row(emu) -> tuple:
    """The RequestHandled row of one real ApiVersions request."""
    rows: list = []
    stop = emu._bound.broker.observation.subscribe(rows.append, rows=True)
    client = await WireClient.connect(emu.host, emu.port, "pipe-test")
    await client.request(API_VERSIONS, 3, ApiVersionsRequest(
        client_software_name="pipe-test", client_software_version="1"))
    await client.aclose()
    emu._bound.broker.observation.drain()
    stop()
    return next(r for r in rows if type(r) is tuple and r[0] == "RequestHandled")


async def test_a_full_pipe_does_not_stall_serving_and_a_cut_flush_is_finished_at_close(tmp_path):
    """The encoder is stopped, so its pipe fills: the emulator still answers, and when it stops
    in the middle of writing a flush, close() writes the rest once the encoder runs again --
    every line arrives, whole and in order."""
    count = 30_000  # rows of about 100 marshal-ed bytes: about three times the pipe's 1 MiB
    async with open_emulator(make_config(), trace_dir=tmp_path) as emu:
        writer = emu._bound.broker.observation.sinks[-1].__self__
        assert isinstance(writer, TraceWriter) and writer._feed is not None
        row = await _a_real_row(emu)
        encoder = writer._feed.encoder.process
        encoder.send_signal(signal.SIGSTOP)
        try:
            for start in range(0, count, 500):  # as the observer seam delivers: in batches
                writer.sink_many([row[:CORRELATION] + (10_000 + i,) + row[CORRELATION + 1:]
                                  for i in range(start, start + 500)])
            assert len(writer._queue) < PACK_ROWS + 500  # packed as they queued
            with trio.fail_after(60):
                while not writer._feed.unsent:  # a flush is waiting for the pipe
                    await trio.sleep(0.05)
            client = await WireClient.connect(emu.host, emu.port, "meanwhile")
            with trio.fail_after(30):
                answer = await client.request(API_VERSIONS, 3, ApiVersionsRequest(
                    client_software_name="meanwhile", client_software_version="1"))
            assert answer.error_code == 0
            await client.aclose()
            assert writer._feed.unsent  # still waiting: the emulator stops in the middle of it
        finally:  # the emulator stops with the flush cut short; the encoder runs again later
            threading.Timer(1.0, encoder.send_signal, (signal.SIGCONT,)).start()
    records = _lines(writer.path)
    assert [r["seq"] for r in records] == list(range(len(records)))
    assert records[-1]["kind"] == "run_end" and records[-1]["dropped"] == 0
    injected = [r["correlation_id"] for r in records
                if r["kind"] == "request_handled" and r["client_id"] == "pipe-test"
                and r["correlation_id"] >= 10_000]
    assert injected == list(range(10_000, 10_000 + count))
    assert any(r["kind"] == "request_handled" and r["client_id"] == "meanwhile" for r in records)


def test_the_encoder_writes_what_it_reads_at_once_in_one_write_and_drops_a_cut_message(
        tmp_path):
    """Three messages and the first half of a fourth (the emulator died writing it): the lines
    of the three, in order, and nothing of the fourth."""
    rows = [("RequestHandled", 5, 1, "127.0.0.1:1", "Heartbeat", 12, 4, seq, "c", None, None,
             "g", "m", None, 1, 0.25, 0, (), 0, (), None, None) for seq in range(8)]
    data = message(0, rows[:3]) + message(3, rows[3:5]) + message(5, rows[5:7])
    cut = message(7, rows[7:])
    out = tmp_path / "out.jsonl"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        done = subprocess.run([sys.executable, "-c", ENCODER_MAIN, str(fd), "r", ""],
                              input=data + cut[:len(cut) // 2], pass_fds=(fd,),
                              capture_output=True, timeout=120)
    finally:
        os.close(fd)
    acks = Acks(0)  # what it acknowledged (trace/appender.py): 7 lines, to the file's end
    acks.feed(done.stdout)
    assert done.returncode == 0 and (acks.written, acks.lost) == (7, 0), done.stderr
    assert acks.end == out.stat().st_size
    assert out.read_text() == format_lines(0, rows[:7], "r")
    assert [r["seq"] for r in _lines(out)] == list(range(7))
