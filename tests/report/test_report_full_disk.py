"""A trace written onto a disk that fills and drains mid-run, then read whole by the report (issue
33, finding 3: run_end was appended to a torn line, and a torn gzip member hid everything after
it, so the report failed for every run in the directory).

The emulator serves a real client while its trace goes to a small tmpfs of the test's own; the
disk is filled while the client keeps sending, then emptied before the run ends. The report
then reads that directory: no line is skipped, the run is there with run_end's counts, and the
events the writer lost are reported as lost by the writer, not as damaged lines."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import trio

from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.report import job
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.wire import WireClient

API_VERSIONS = BY_NAME["ApiVersions"]


async def _requests(client: WireClient, n: int) -> None:
    for _ in range(n):
        await client.request(API_VERSIONS, 3, ApiVersionsRequest(
            client_software_name="full-disk", client_software_version="1"))


async def _write_a_run_through_a_full_disk(disk: Path, fill_disk, compress: str | None) -> int:
    """Serve a client through fill and drain; how many events the writer lost to the disk."""
    async with open_emulator(make_config(), trace_dir=disk, trace_compress=compress) as emu:
        writer = emu._bound.broker.observation.sinks[-1].__self__
        client = await WireClient.connect(emu.host, emu.port, "full-disk")
        await _requests(client, 200)
        filler = fill_disk(disk)
        with trio.fail_after(120):  # a hang guard: the writer flushes every 0.2 s
            while writer.dropped_disk == 0:
                await _requests(client, 500)
                await trio.sleep(0.25)
        filler.unlink()  # space returns before the run ends
        await _requests(client, 200)
        await client.aclose()
    return writer.dropped_disk


@pytest.mark.parametrize("compress", [None, "gzip"])
def test_a_trace_whose_disk_filled_and_drained_is_read_whole_by_the_report(
        spark, small_disk, fill_disk, compress, tmp_path):
    lost = trio.run(_write_a_run_through_a_full_disk, small_disk, fill_disk, compress)
    assert lost > 0
    said: list[str] = []
    results = job.run(spark, [str(small_disk)], tmp_path / "out", progress=said.append,
                      html_page=False)
    assert results["dropped_lines"] == []  # whole lines only: nothing torn, nothing hidden
    assert not [line for line in said if line.startswith("skipped ")]
    [run] = results["runs"]
    [lost_row] = results["writer_lost"]
    assert lost_row["run"] == run["run"] and lost_row["events_lost"] == lost
    # the report read every line the writer says it wrote, run_end included
    [trace] = small_disk.glob("date=*/run=*")
    opened = gzip.open(trace, "rt") if compress else trace.open()
    with opened as f:
        end = json.loads(f.read().splitlines()[-1])
    assert end["kind"] == "run_end" and end["dropped_disk"] == lost
    assert run["events"] == end["written"] + 1 and run["ended_cleanly"]
