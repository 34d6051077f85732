"""The report page in headless Chromium, as a person uses it: it opens from disk with no
network request, its charts draw, a filter changes what is shown, and a rebalance opens its
run's view. On the fixture report (tests/report/traces.py), and on a page made from large
results (20,000 rebalances, 60,000 timeline rows: what a 10M-event report carries)."""

from __future__ import annotations

import json
import random
import shutil

import pytest

from kafka_emu.report import html as page_html

from .browser import browse, errors, requests

pytestmark = pytest.mark.skipif(shutil.which("chromium") is None
                                and not __import__("os").path.exists("/usr/bin/chromium"),
                                reason="no chromium")

CHARTS = ("chart-durations", "chart-generations", "chart-errors", "chart-versions")

DRAWN = """JSON.stringify(Array.from(document.querySelectorAll('.js-plotly-plot')).map(e => ({
    id: e.id, traces: (e.data || []).length,
    marks: e.querySelectorAll('.point, .bars path, .hm, .heatmaplayer image, .boxlayer path')
        .length,
    h: e.getBoundingClientRect().height})))"""

VISIBLE = """(id => Array.from(document.querySelectorAll('#' + id + ' tbody tr'))
    .filter(tr => tr.style.display !== 'none').map(tr => tr.cells[2].textContent))"""


def _charts(page) -> dict:
    return {c["id"]: c for c in json.loads(page.evaluate(DRAWN))}


def _offline_and_drawn(page) -> dict:
    assert page.evaluate("document.body.dataset.ready") == "1"
    assert errors(page.events) == []
    assert all(url.startswith(("file:", "data:")) for url in requests(page.events)), \
        requests(page.events)
    charts = _charts(page)
    for chart in CHARTS:
        assert charts[chart]["traces"] >= 1 and charts[chart]["marks"] >= 1, charts[chart]
        assert charts[chart]["h"] > 100
    return charts


def _select(page, select_id: str, value: str) -> None:
    page.evaluate(f"""(() => {{ const s = document.getElementById('{select_id}');
        s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()""")


def test_the_page_opens_offline_draws_filters_and_opens_a_run(report):
    results, out = report
    with browse(out / "report.html") as page:
        _offline_and_drawn(page)
        text = page.evaluate("document.body.innerText")
        assert "What to look at" in text
        # the summary names each violation kind with its run and client
        summary = page.evaluate("document.querySelector('.summary').innerText")
        assert "stale_after_rejoin: 1 in stale (1)" in summary and "aiokafka 0.12.0" in summary
        every = page.evaluate(VISIBLE.replace("cells[2]", "cells[2]") + "('violations')")
        assert len(every) == len(results["violations"])
        # a filter: only aiokafka's rows and bars
        _select(page, "f-client", "aiokafka")
        shown = page.evaluate(VISIBLE + "('violations')")
        assert shown and len(shown) < len(every)
        kinds = page.evaluate("""Array.from(document.querySelectorAll('#violations tbody tr'))
            .filter(tr => tr.style.display !== 'none').map(tr => tr.cells[1].textContent)""")
        assert set(kinds) == {"stale_after_rejoin"}
        ys = page.evaluate("document.getElementById('chart-errors').data[0].y")
        assert ys == ["aiokafka 0.12.0"]
        # drawn again, not only given new data (emptied under react, they once went blank)
        drawn = _charts(page)
        for chart in CHARTS:  # (aiokafka has no rebalance that reached Stable: a note says so)
            assert drawn[chart]["marks"] >= 1 if drawn[chart]["traces"] else page.evaluate(
                f"document.querySelector('#{chart} .note').textContent"), drawn[chart]
        assert drawn["chart-errors"]["traces"] == 1
        _select(page, "f-client", "")
        assert len(page.evaluate(VISIBLE + "('violations')")) == len(every)
        # the run view, from a rebalance of the clean run
        assert page.evaluate("document.getElementById('run-view').style.display") == "none"
        page.evaluate("""document.querySelector('#rebalances a[data-open-run="clean"]')
            .click()""")
        assert page.evaluate("document.getElementById('run-view').style.display") == ""
        assert page.evaluate("document.getElementById('run-title').textContent") == "Run clean"
        run = json.loads(page.evaluate("""JSON.stringify(document.getElementById('chart-run')
            .data.map(t => ({type: t.type, name: t.name || '', text: t.text})))"""))
        generations = [t for t in run if t["type"] == "bar"]
        assert [t["text"] for t in generations] == [["g1: 2 members"], ["g2: 1 members"]]
        names = {t["name"] for t in run}
        assert {"membership requests", "error answers", "state changes"} <= names
        rows = page.evaluate("document.querySelectorAll('#run-table tbody tr').length")
        assert rows >= 10
        # and a violation's run shows it where it happened
        page.evaluate("""document.querySelector('#violations a[data-open-run="stale"]')
            .click()""")
        run = json.loads(page.evaluate("""JSON.stringify(document.getElementById('chart-run')
            .data.map(t => t.name || ''))"""))
        assert "violations" in run
        assert _charts(page)["chart-run"]["marks"] >= 1  # the second run's view is drawn too
        assert errors(page.events) == []


def test_a_table_sorts_by_its_heading(report):
    _, out = report
    with browse(out / "report.html") as page:
        page.evaluate("document.querySelectorAll('#runs th')[4].click()")  # events
        first = page.evaluate("Array.from(document.querySelectorAll('#runs tbody tr'))"
                              ".map(tr => Number(tr.cells[4].textContent))")
        assert first == sorted(first)
        page.evaluate("document.querySelectorAll('#runs th')[4].click()")
        again = page.evaluate("Array.from(document.querySelectorAll('#runs tbody tr'))"
                              ".map(tr => Number(tr.cells[4].textContent))")
        assert again == sorted(first, reverse=True)


def large_results(rebalances: int = 20000, timeline: int = 60000) -> dict:
    """Results shaped as a 10M-event report's (tables sampled to what the page carries)."""
    rnd = random.Random(7)
    clients = [("kafka-python", "2.0.2"), ("aiokafka", "0.14.0"), ("confluent-kafka", "2.16.1")]
    runs = [f"run-{i:04d}" for i in range(500)]
    reb = []
    for i in range(rebalances):
        name, version = clients[i % 3]
        start = 1_795_000_000_000 + i * 1000
        reb.append({"run": runs[i % 500], "group_id": f"g{i % 7}", "generation": i // 3500 + 1,
                    "reason": "Adding new member", "started_ms": start,
                    "stable_ms": start + rnd.randint(10, 5000), "duration_ms": None,
                    "members_before": 2, "members_after": 3, "joined": ["m3"], "left": [],
                    "removed": None, "client_name": name, "client_version": version})
        reb[-1]["duration_ms"] = reb[-1]["stable_ms"] - start
    tl = []
    for i in range(timeline):
        run = runs[i // 600]
        kind = ("generation_changed", "state_changed", "request")[i % 3]
        tl.append({"run": run, "seq": i, "at_ms": 1_795_000_000_000 + i * 50, "kind": kind,
                   "group_id": f"g{i % 7}", "member_id": "m1", "generation": i % 40,
                   "state": "Stable" if kind == "state_changed" else None, "reason": None,
                   "members": ["m1", "m2"] if kind == "generation_changed" else None,
                   "api": "Heartbeat" if kind == "request" else None,
                   "err": 27 if kind == "request" else None, "connection_id": 1,
                   "action": None, "client_name": None, "client_version": None})
    violations = [{"kind": "stale_after_rejoin", "run": runs[i % 500], "group_id": "g1",
                   "member_id": "m1", "seq": i, "at_ms": 1_795_000_000_000 + i, "api":
                   "Heartbeat", "correlation_id": i, "connection_id": 1, "detail": "x"}
                  for i in range(20000)]
    return {
        "runs": [{"run": r, "started_ms": 1_795_000_000_000, "emu_version": "0.1", "labels": {},
                  "events": 20000, "ended_cleanly": True} for r in runs],
        "client_matrix": [{"client_name": n, "client_version": v, "runs": 500,
                           "connections": 9, "requests": 10**6, "error_responses": 5,
                           "throttled_share": 0.0, "faulted_share": 0.0} for n, v in clients],
        "api_versions": [{"client_name": n, "client_version": v, "api": "Heartbeat",
                          "version": 4, "requests": 10**6, "broker_max": 4} for n, v in clients],
        "client_errors": [{"client_name": n, "client_version": v, "api": "Heartbeat",
                           "error_code": 27, "responses": 9} for n, v in clients],
        "rebalances": reb, "rebalance_percentiles": [], "violations": violations,
        "conformance": [], "table_rows": [{"table": "rebalances", "rows": 90000},
                                          {"table": "violations", "rows": 250000}],
        "run_events": [{"runs": 500, "events": 10**7}],
        "violation_kinds": [{"kind": "stale_after_rejoin", "count": 250000}],
        "worst_runs": [{"run": runs[0]}], "worst_run_rebalances": reb[:40],
        "dropped_lines": [], "writer_lost": [], "timeline": tl, "connections": [],
    }


def test_a_page_of_large_results_opens_says_it_is_sampled_and_opens_a_run(tmp_path):
    path = tmp_path / "report.html"
    path.write_text(page_html.render(large_results(), worst_runs=["run-0000"],
                                     sources=["traces"]))
    with browse(path) as page:
        charts = _offline_and_drawn(page)
        text = page.evaluate("document.body.innerText")
        assert "rebalances: a uniform sample of 20000 of 90000 rows" in text
        assert "run views: 100 of 500 runs" in text
        assert "the first 2000 of 20000 rows" in text
        assert charts["chart-generations"]["traces"] == 1
        _select(page, "f-run", "run-0003")
        assert page.evaluate("document.getElementById('chart-generations').data[0].y.length") \
            == 40  # run-0003's rows, one lane per group
        page.evaluate("kafkaEmuOpenRun('run-0001')")
        assert page.evaluate("document.getElementById('run-title').textContent") == \
            "Run run-0001"
        assert page.evaluate("document.getElementById('chart-run').data.length") > 10
        assert errors(page.events) == []


def test_the_page_of_a_generated_trace_draws_and_opens_a_rebalances_run(spark, tmp_path):
    """bench/trace_gen.py's synthetic runs (six client versions, rebalances, errors, fast
    heartbeats), 30,000 events through the job: the page draws, filters, opens a run."""
    import sys
    from pathlib import Path

    from kafka_emu.report import job
    sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
    import trace_gen
    trace_gen.generate(tmp_path / "traces", 30_000)
    results = job.run(spark, [str(tmp_path / "traces")], tmp_path / "out")
    assert len({r["run"] for r in results["timeline"]}) == len(results["runs"])
    with browse(tmp_path / "out" / "report.html") as page:
        _offline_and_drawn(page)
        run = results["rebalances"][-1]["run"]
        _select(page, "f-run", run)
        lanes = page.evaluate("document.getElementById('chart-generations').data[0].y")
        assert lanes and {lane.split(" / ")[0] for lane in lanes} == {run}
        page.evaluate(f"""document.querySelector('#rebalances a[data-open-run="{run}"]')
            .click()""")
        assert page.evaluate("document.getElementById('run-title').textContent") == f"Run {run}"
        bars = page.evaluate("""document.getElementById('chart-run').data
            .filter(t => t.type === 'bar').length""")
        assert bars == sum(1 for r in results["timeline"]
                           if r["run"] == run and r["kind"] == "generation_changed")
        assert errors(page.events) == []


def test_a_verdict_without_its_scenario_or_client_is_a_blank_cell_not_a_failed_page():
    """(A trace line of kind scenario_verdict and nothing else made the page fail.)"""
    rows = [{"scenario": None, "client": None, "client_version": None, "runs": 1, "passed": 0,
             "failed": 1, "a_reason": None, "verdict": "fail"},
            {"scenario": "join", "client": "aiokafka", "client_version": "0.14", "runs": 2,
             "passed": 2, "failed": 0, "a_reason": None, "verdict": "pass"}]
    matrix = page_html._conformance_matrix(rows)
    assert "<th>aiokafka 0.14</th>" in matrix and "fail (0/1)" in matrix
    assert "<tr><td></td><td class='fail'" in matrix


def test_a_burst_of_generations_is_labelled_once_and_no_labels_overlap(tmp_path):
    """Fifteen generations of a group within 45 ms (a rebalance storm) drew fifteen labels on
    top of each other: the burst's first bar now names the range, the others stay unlabelled
    (their hover says all), and no two labels of a lane overlap as drawn."""
    results = large_results(rebalances=0, timeline=0)
    t0 = 1_795_000_000_000

    def generation(group: str, number: int, start: int, took: int) -> dict:
        return {"run": "run-0000", "group_id": group, "generation": number,
                "reason": "Adding new member", "started_ms": t0 + start,
                "stable_ms": t0 + start + took, "duration_ms": took, "members_before": 2,
                "members_after": 3, "joined": ["m3"], "left": [], "removed": None,
                "client_name": "aiokafka", "client_version": "0.14.0"}
    storm = [generation("g1", n + 1, n * 3, 2) for n in range(15)]
    later = [generation("g1", 16, 5000, 40), generation("g1", 17, 8000, 30)]
    steady = [generation("g2", n + 1, 2000 + n * 1000, 100) for n in range(3)]
    results["rebalances"] = results["worst_run_rebalances"] = storm + later + steady
    results["runs"] = results["runs"][:1]
    path = tmp_path / "report.html"
    path.write_text(page_html.render(results, worst_runs=["run-0000"], sources=["traces"]))
    with browse(path) as page:
        _offline_and_drawn(page)
        drawn = page.evaluate("""Array.from(document.querySelectorAll(
            '#chart-generations text.bartext')).filter(t => t.textContent).map(t => {
              const b = t.getBoundingClientRect();
              return [t.textContent, b.left, b.right, Math.round(b.top)]; })""")
        assert sorted(text for text, *_ in drawn) == sorted([
            "g1\u201315 (3)", "g16 (3)", "g17 (3)", "g1 (3)", "g2 (3)", "g3 (3)"])
        for lane in {top for *_, top in drawn}:
            boxes = sorted((left, right) for _, left, right, top in drawn if top == lane)
            assert all(right <= next_left for (_, right), (next_left, _) in
                       zip(boxes, boxes[1:])), boxes
        hovers = page.evaluate("document.getElementById('chart-generations').data[0]"
                               ".hovertemplate.length")
        assert hovers == len(storm + later + steady)  # every bar keeps its hover
        assert errors(page.events) == []
