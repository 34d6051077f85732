"""The report over damaged traces says what it skipped -- per file, how many lines and why, on
the terminal and on the page -- and a damaged file costs only its own bad part (issue 33,
finding 5: wrong-typed lines were dropped without a word, and one torn .jsonl.gz failed the
whole job). Both readers: the report's own and Spark's JSON reader."""

from __future__ import annotations

import gzip
import html
import io
import json
import re
import zlib

import pytest

from kafka_emu.report import job, trace_jar
from kafka_emu.report.load import gzip_tails, read_json_lines

from . import traces

WRONG_TYPE_EVERY = 10  # every tenth request line of fasthb gets a latency that is no number
GZIP_MEMBER_LINES = 10  # clean's lines as the trace writer writes gzip: a member per write
LOST = 7784  # events fasthb's writer says it lost


@pytest.fixture(scope="module")
def damaged(tmp_path_factory) -> dict:
    """The fixture runs, two of them damaged: fasthb (plain) with wrong-typed and unparsable
    lines, clean as gzip members whose last one is torn (a writer killed mid-write)."""
    root = tmp_path_factory.mktemp("damaged")
    files = traces.build(root)
    fasthb = files["fasthb"]
    lines = fasthb.read_text().splitlines()
    wrong = 0
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record["kind"] == "request_handled" and i % WRONG_TYPE_EVERY == 0:
            lines[i] = json.dumps(record | {"latency_ms": "slow"})
            wrong += 1
    lines[5:5] = ["not json at all", '{"kind": "request_handled", "run": "fas']
    # and its writer lost events it says so of in run_end (an encoder that died)
    lines.append(json.dumps({"kind": "run_end", "run": "fasthb", "seq": len(lines),
                             "at_ms": traces.T0 + 60_000, "events": len(lines) + LOST,
                             "written": len(lines) - 2, "dropped": LOST, "reason": "stopped"}))
    fasthb.write_text("\n".join(lines) + "\n")
    clean = files["clean"].read_text().splitlines(keepends=True)
    members = [gzip.compress("".join(clean[i:i + GZIP_MEMBER_LINES]).encode())
               for i in range(0, len(clean), GZIP_MEMBER_LINES)]
    torn = root / "date=2026-11-18" / "run=clean.jsonl.gz"
    half = members[-1][:len(members[-1]) // 2]
    torn.write_bytes(b"".join(members[:-1]) + half)
    files["clean"].unlink()
    # what the torn member's half decompresses to holds a few whole lines: they are read too
    whole = GZIP_MEMBER_LINES * (len(members) - 1) + zlib.decompressobj(31).decompress(
        half).count(b"\n")
    return {"root": root, "fasthb": str(fasthb), "clean": str(torn), "crashed":
            str(files["crashed"]), "wrong": wrong, "fasthb_events": len(lines) - 2 - wrong,
            "clean_events": whole}


def expected_drops(d: dict) -> list[dict]:
    return sorted([
        {"file": d["clean"], "reason": "torn gzip tail", "lines": 1},
        {"file": d["crashed"], "reason": "unparsable", "lines": 1},  # (its torn last line)
        {"file": d["fasthb"], "reason": "unparsable", "lines": 2},
        {"file": d["fasthb"], "reason": "wrong type", "lines": d["wrong"]},
    ], key=lambda r: (r["file"], r["reason"]))


def check_report(results: dict, whole: dict, d: dict) -> None:
    """The drops are counted, and every line of the good files and the good part of the
    damaged ones is in the tables."""
    assert d["wrong"] > 100
    assert results["dropped_lines"] == expected_drops(d)
    events = {r["run"]: r["events"] for r in results["runs"]}
    assert events == {r["run"]: r["events"] for r in whole["runs"]} | {
        "fasthb": d["fasthb_events"], "clean": d["clean_events"]}
    requests = {(r["client_name"], r["client_version"]): r["requests"]
                for r in results["client_matrix"]}
    before = {(r["client_name"], r["client_version"]): r["requests"]
              for r in whole["client_matrix"]}
    assert sum(requests.values()) < sum(before.values())  # (fasthb and clean lost some)
    assert results["writer_lost"] == [{"run": "fasthb", "events_lost": LOST}]


def test_a_report_over_damaged_traces_counts_what_it_skipped_per_file_and_why(
        spark, report, damaged, tmp_path):
    whole, _ = report
    said: list[str] = []
    results = job.run(spark, [str(damaged["root"])], tmp_path, progress=said.append)
    check_report(results, whole, damaged)
    # on the terminal: one line per file with drops
    skipped = [line for line in said if line.startswith("skipped ")]
    assert skipped == [
        f"skipped 1 line of {damaged['clean']}: 1 torn gzip tail",
        f"skipped 1 line of {damaged['crashed']}: 1 unparsable",
        f"skipped {damaged['wrong'] + 2} lines of {damaged['fasthb']}: 2 unparsable, "
        f"{damaged['wrong']} wrong type"]
    text = io.StringIO()
    job.summary(results, tmp_path, text)
    assert (f"skipped lines: {damaged['wrong'] + 4} in 3 files (torn gzip tail 1, "
            f"unparsable 3, wrong type {damaged['wrong']})\n") in text.getvalue()
    assert f"events lost by the writer (run_end): fasthb {LOST}\n" in text.getvalue()
    # on the page: a table of file, reason, lines
    page = (tmp_path / "report.html").read_text()
    section = page.split("<h2>Skipped lines</h2>", 1)[1].split("<h2>", 1)[0]
    rows = [[html.unescape(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", section) if "<td" in row]
    assert rows == [[r["file"], r["reason"], str(r["lines"])] for r in expected_drops(damaged)]
    runs = page.split("<h2>Runs</h2>", 1)[1]
    assert "<th>events lost by the writer</th>" in runs
    assert re.search(rf"<td>fasthb</td>.*?<td class='num'>{LOST}</td></tr>", runs)


def test_sparks_json_reader_counts_the_same_drops_and_reads_a_torn_gzip_up_to_its_tear(
        spark, report, damaged, tmp_path, monkeypatch):
    whole, _ = report
    monkeypatch.setenv(trace_jar.READER_ENV, "json")
    results = job.run(spark, [str(damaged["root"])], tmp_path, html_page=False)
    check_report(results, whole, damaged)


def test_the_fixture_reports_torn_last_line_is_counted(report, fixture_traces):
    results, _ = report
    assert results["dropped_lines"] == [
        {"file": str(fixture_traces / "date=2026-11-18" / "run=crashed.jsonl"),
         "reason": "unparsable", "lines": 1}]


def test_a_gzip_padded_with_zeros_after_its_whole_members_loses_only_the_padding(
        spark, tmp_path):
    """A full disk can leave zeros after the last write: every line before them is read, and
    the padding is counted, by our reader and by the check made for Spark's."""
    lines = traces.build(tmp_path / "source")["clean"].read_text()
    day = tmp_path / "traces"
    day.mkdir()
    padded = day / "run=clean.jsonl.gz"
    padded.write_bytes(gzip.compress(lines.encode()) + bytes(512))
    rows = read_json_lines(spark, [str(day)], drops=True).select("kind", "_dropped").collect()
    assert sum(r["kind"] is not None for r in rows) == len(lines.splitlines())
    assert [r["_dropped"] for r in rows if r["_dropped"]] == ["torn gzip tail"]
    assert gzip_tails([str(day)]) == [{"file": str(padded), "reason": "torn gzip tail",
                                       "lines": 1}]
    padded.write_bytes(gzip.compress(lines.encode()) * 2)  # whole members only
    assert gzip_tails([str(day)]) == []
