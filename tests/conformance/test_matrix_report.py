"""The report's conformance matrix (kafka_emu/report/matrix.py) over a recorded matrix summary:
a red cell shows its failure reason and links to the scenario's run; uninstallable versions and
passes render as such; the terminal table says the same."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from urllib.parse import unquote

from kafka_emu.conformance import matrix as kit_matrix
from kafka_emu.report import matrix

# three cells as `kafka-emu conformance --matrix` wrote them (reasons trimmed)
RECORDED = [
    {"scenario": "group_consumption", "client": "confluent-kafka", "version": "2.6.1",
     "group_protocol": "consumer", "column": "confluent-kafka 2.6.1 (consumer)",
     "verdict": "fail", "reason": "timed out after 30s waiting for a valid assignment over 3 "
     "consumer(s); also overlapping-assignment: [c3] group_consumption-topic-2 assigned to c3 "
     "while c2 still owned it (30029 ms)\nsecond line", "seconds": 33.21,
     "run": "20261129T033814-9c090f",
     "trace": "confluent-kafka-2.6.1-consumer/traces/date=2026-11-29/"
              "run=20261129T033814-9c090f.jsonl",
     "client_logs": "confluent-kafka-2.6.1-consumer/client-logs/group_consumption"},
    {"scenario": "group_consumption", "client": "confluent-kafka", "version": "2.16.1",
     "group_protocol": "consumer", "column": "confluent-kafka 2.16.1 (consumer)",
     "verdict": "pass", "reason": "", "seconds": 2.88, "run": "20261129T033852-dcfc80",
     "trace": "confluent-kafka-2.16.1-consumer/traces/date=2026-11-29/"
              "run=20261129T033852-dcfc80.jsonl",
     "client_logs": "confluent-kafka-2.16.1-consumer/client-logs/group_consumption"},
    {"scenario": "group_consumption", "client": "aiokafka", "version": "0.1.0",
     "group_protocol": "classic", "column": "aiokafka 0.1.0", "verdict": "skip",
     "reason": "not installable: cannot install aiokafka==0.1.0 for Python 3.11: no wheel",
     "seconds": 0.0, "run": None, "trace": None, "client_logs": None},
]


class _Cells(HTMLParser):
    """Each <td>'s class, text and links (data-open-run / href)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict] = []
        self._in = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td":
            self.cells.append({"class": a.get("class"), "text": "", "runs": [], "hrefs": []})
            self._in += 1
        elif tag == "a" and self._in:
            if "data-open-run" in a:
                self.cells[-1]["runs"].append(a["data-open-run"])
            if "href" in a:
                self.cells[-1]["hrefs"].append(a["href"])

    def handle_endtag(self, tag):
        if tag == "td":
            self._in -= 1

    def handle_data(self, data):
        if self._in:
            self.cells[-1]["text"] += data


def _recorded(tmp_path):
    where = tmp_path / "m"
    where.mkdir()
    lines = [json.dumps(c) for c in RECORDED] + ["{torn"]  # a matrix still being written
    (where / "matrix.jsonl").write_text("\n".join(lines))
    return where


def test_a_red_cell_shows_its_reason_and_links_to_the_scenario_run(tmp_path):
    where = _recorded(tmp_path)
    cells = matrix.load([tmp_path])
    assert len(cells) == 3 and {c["base"] for c in cells} == {str(where.resolve())}
    page = matrix.section(cells)
    parsed = _Cells()
    parsed.feed(page)
    scenario, red, green, skipped = parsed.cells
    assert scenario["text"] == "group_consumption"
    assert red["class"] == "fail"
    assert "overlapping-assignment: [c3] group_consumption-topic-2 assigned to c3" in red["text"]
    assert "second line" not in red["text"]  # the first line on the page, all of it on hover
    assert red["runs"] == ["20261129T033814-9c090f"]
    hrefs = [unquote(h) for h in red["hrefs"]]
    assert str(where.resolve() / RECORDED[0]["trace"]) in [h.removeprefix("file://")
                                                          for h in hrefs]
    assert any(h.endswith("client-logs/group_consumption") for h in hrefs)
    assert green["class"] == "pass" and "timed out" not in green["text"]
    assert green["runs"] == ["20261129T033852-dcfc80"]
    assert skipped["class"] == "skip" and "not installable" in skipped["text"]
    for col in ("confluent-kafka 2.6.1 (consumer)", "confluent-kafka 2.16.1 (consumer)",
                "aiokafka 0.1.0"):
        assert col in page
    assert "0 pass, 1 fail, 0 skip" in page


def test_no_matrix_no_section(tmp_path):
    assert matrix.load([tmp_path, "s3://bucket/traces"]) == []
    assert matrix.section([]) == ""


def test_the_summary_file_itself_can_be_given(tmp_path):
    where = _recorded(tmp_path)
    assert len(matrix.load([where / "matrix.jsonl"])) == 3


def test_the_terminal_table_names_each_failure_with_its_reason():
    text = kit_matrix.table(RECORDED)
    assert "FAIL group_consumption on confluent-kafka 2.6.1 (consumer): timed out" in text
    assert "#2 confluent-kafka 2.16.1 (consumer): 1 pass, 0 fail, 0 skip" in text
    assert "aiokafka 0.1.0: not installable" in text


def test_the_report_page_carries_the_matrix_found_under_its_inputs(tmp_path):
    from kafka_emu.report import html as page_html
    from tests.report.test_report_page import large_results
    where = _recorded(tmp_path)
    page = page_html.render(large_results(rebalances=30, timeline=30), worst_runs=[],
                            sources=[str(where)])
    assert "<h2>Conformance matrix</h2>" in page
    assert "data-open-run='20261129T033814-9c090f'" in page
    assert "overlapping-assignment: [c3] group_consumption-topic-2" in page
    assert "Conformance matrix" not in page_html.render(
        large_results(rebalances=30, timeline=30), worst_runs=[], sources=[str(tmp_path / "x")])


def test_a_known_bug_cell_shows_what_broke_and_keeps_the_evidence_on_hover():
    cell = {**RECORDED[0], "reason": "known aiokafka bug: a long story of evidence -- "
            "consumed-behind-commit: [c1] t-0: consumed from 135, but 140 was already committed"}
    parsed = _Cells()
    parsed.feed(matrix.section([{**cell, "base": "/m"}]))
    red = parsed.cells[1]
    assert red["text"].startswith("fail")
    assert "known aiokafka bug (hover for it): consumed-behind-commit: [c1]" in red["text"]
    assert "long story" not in red["text"]
    assert "long story of evidence" in matrix.section([{**cell, "base": "/m"}])  # the title
