"""Trace files that survive a full disk and a dead encoder: whole lines only, every event either a
line of the file or counted in run_end (issue 33, findings 3 and 4).

The disk is a small tmpfs mounted for the test (CI runs as root, as the house's containers do);
it is filled by a file of its own, leaving a few pages free so that the next chunk of the trace is
written only in part, then emptied so that space returns before the run ends."""

from __future__ import annotations

import errno
import gzip
import json
import os
import signal
from pathlib import Path

import pytest
import trio

from kafka_emu.broker.events import RequestHandled
from kafka_emu.broker.event_rows import row_index
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.wire import WireClient
from kafka_emu.trace import TraceWriter
from kafka_emu.trace.appender import Appender

API_VERSIONS = BY_NAME["ApiVersions"]
CORRELATION = row_index(RequestHandled, "correlation_id")
def read_whole(path: Path) -> list[dict]:
    """Every line, parsed: raises on a torn line, and (gzip) on a member that hides the rest."""
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as f:
            data = f.read()  # to the end, or it raises
    else:
        data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.splitlines()]


async def _a_real_row(emu) -> tuple:
    rows: list = []
    stop = emu._bound.broker.observation.subscribe(rows.append, rows=True)
    client = await WireClient.connect(emu.host, emu.port, "disk-test")
    await client.request(API_VERSIONS, 3, ApiVersionsRequest(
        client_software_name="disk-test", client_software_version="1"))
    await client.aclose()
    emu._bound.broker.observation.drain()
    stop()
    return next(r for r in rows if type(r) is tuple and r[0] == "RequestHandled")


def _inject(writer: TraceWriter, row: tuple, first: int, count: int) -> None:
    """``count`` request rows, correlation ids from ``first``, as the observer seam hands them."""
    for start in range(first, first + count, 500):
        writer.sink_many([row[:CORRELATION] + (i,) + row[CORRELATION + 1:]
                          for i in range(start, min(start + 500, first + count))])


def _settled(writer: TraceWriter) -> bool:
    """Every event handed out so far sent to the encoder, and acknowledged written or lost."""
    return (not writer._in_flight()
            and writer.written + writer.dropped_disk == writer._seq)


async def _until(predicate) -> None:
    with trio.fail_after(60):
        while not predicate():
            await trio.sleep(0.05)


def _check_accounting(records: list[dict]) -> dict:
    """run_end last, and every event before it either a line of the file or counted."""
    end = records[-1]
    assert end["kind"] == "run_end" and records[0]["kind"] == "run_start"
    assert not any(r["kind"] == "run_end" for r in records[:-1])
    seqs = [r["seq"] for r in records]
    assert seqs == sorted(set(seqs)) and end["seq"] == end["events"]
    assert end["written"] == len(records) - 1
    assert end["dropped"] + end["written"] == end["events"]
    return end


@pytest.mark.parametrize("compress", [None, "gzip"])
async def test_a_disk_that_fills_and_drains_mid_run_leaves_whole_lines_and_a_counted_run_end(
        small_disk, fill_disk, compress):
    """The disk fills while a chunk is being written (it lands in part): the chunk is rolled
    back, its events counted; once space returns the run writes again, and run_end is whole."""
    async with open_emulator(make_config(), trace_dir=small_disk,
                             trace_compress=compress) as emu:
        writer = emu._bound.broker.observation.sinks[-1].__self__
        assert isinstance(writer, TraceWriter) and writer._feed is not None
        row = await _a_real_row(emu)
        _inject(writer, row, 10_000, 1000)
        await _until(lambda: _settled(writer))
        filler = fill_disk(small_disk)
        _inject(writer, row, 20_000, 20_000)  # more than the disk keeps free, even gzip-ed
        await _until(lambda: _settled(writer))
        assert writer.dropped_disk > 0
        filler.unlink()  # space returns before the run ends
        _inject(writer, row, 50_000, 1000)
        await _until(lambda: _settled(writer))
    records = read_whole(next(small_disk.glob("date=*/run=*")))
    end = _check_accounting(records)
    assert end["write_failures"] >= 1 and end["dropped"] == end["dropped_disk"] > 0
    ids = {r["correlation_id"] for r in records if r["kind"] == "request_handled"}
    assert set(range(10_000, 11_000)) <= ids and set(range(50_000, 51_000)) <= ids
    if compress is None:  # the whole lines the short write landed are kept (a member is not)
        assert any(20_000 <= i < 40_000 for i in ids)


async def test_an_encoder_stopped_then_killed_loses_nothing_uncounted(tmp_path):
    """The encoder is stopped (SIGSTOP) while its pipe fills, then killed (SIGKILL): what sat
    in the pipe is counted in run_end, the run goes on with lines formatted in the emulator's
    process, and every event is a line of the file or counted."""
    async with open_emulator(make_config(), trace_dir=tmp_path) as emu:
        writer = emu._bound.broker.observation.sinks[-1].__self__
        assert isinstance(writer, TraceWriter) and writer._feed is not None
        row = await _a_real_row(emu)
        _inject(writer, row, 10_000, 500)
        await _until(lambda: _settled(writer))
        encoder = writer._feed.encoder.process
        encoder.send_signal(signal.SIGSTOP)
        try:  # one flush sent whole into the pipe, then one that waits for the full pipe
            _inject(writer, row, 20_000, 4000)
            await _until(lambda: not writer._in_flight())
            _inject(writer, row, 30_000, 15_000)  # more than the encoder's 1 MiB pipe holds
            await _until(lambda: bool(writer._feed.unsent))
        finally:
            encoder.send_signal(signal.SIGKILL)
        await _until(lambda: writer._feed is None)  # noticed: formatted here from now on
        _inject(writer, row, 50_000, 500)
    records = read_whole(next(tmp_path.glob("date=*/run=*")))
    end = _check_accounting(records)
    assert end["dropped"] == 4000 + 15_000 and end["dropped_disk"] == 0  # the pipe's, the flush's
    ids = {r["correlation_id"] for r in records if r["kind"] == "request_handled"}
    assert not any(20_000 <= i < 45_000 for i in ids)
    assert set(range(10_000, 10_500)) <= ids and set(range(50_000, 50_500)) <= ids


def _line(i: int) -> bytes:
    return json.dumps({"i": i, "pad": os.urandom(60).hex()}).encode() + b"\n"


@pytest.mark.parametrize("compress", [False, True])
def test_a_write_cut_short_by_a_full_disk_is_rolled_back_to_the_last_whole_line(
        small_disk, fill_disk, compress):
    """The appender alone (the emulator's own writes: run_start, run_end, lines formatted
    without the encoder): a short write is cut back, plain text keeping the whole lines it
    landed, and the next write after space returns goes on from there."""
    path = small_disk / "t.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        out = Appender(fd, compress, 0)
        assert out.append(b"".join(_line(i) for i in range(10)), 10) is None
        filler = fill_disk(small_disk)
        error = out.append(b"".join(_line(i) for i in range(10, 2010)), 2000)
        assert error is not None and error.errno == errno.ENOSPC
        assert out.failures == 1 and out.written + out.lost == 2010
        assert os.fstat(fd).st_size == out.end
        if not compress:
            assert out.written > 10  # the whole lines of the short write are kept
        filler.unlink()
        assert out.append(_line(9999), 1) is None
    finally:
        os.close(fd)
    data = gzip.decompress(path.read_bytes()) if compress else path.read_bytes()
    numbers = [json.loads(text)["i"] for text in data.splitlines()]
    assert numbers == list(range(out.written - 1)) + [9999]
