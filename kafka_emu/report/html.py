"""report.html: one self-contained page, from the small collected results of the job.

The charts are plotly.js (its library embedded whole in the page, so it opens from disk with
no network): the rebalance durations per client, the generations of each group, the error
codes per client x API and the API versions used against the broker's maximum -- each one
hovers, zooms and follows the filters at the top (client, client version, group, run); the
page's script and style are in page_js.py. Above them a summary says what to look at first
(violations with their runs and clients, failed scenarios, runs that did not end, the slowest
rebalance, the most frequent errors), each with a link to that run's view: its groups'
generations on a time axis with members, requests and errors, faults and violations. The
tables are rendered here (readable without the script), sortable, long ones folded. A table
longer than the page carries (job.MAX_COLLECT rows) is a uniform sample, and the page says so.
"""

from __future__ import annotations

import datetime
import html
import json
from collections import Counter
from pathlib import Path
from typing import Any

from . import auth, matrix, share, transactions
from .page_js import CSS, JS

ERROR_NAMES = {
    3: "UNKNOWN_TOPIC_OR_PARTITION", 7: "REQUEST_TIMED_OUT", 14: "COORDINATOR_LOAD_IN_PROGRESS",
    15: "COORDINATOR_NOT_AVAILABLE", 16: "NOT_COORDINATOR", 22: "ILLEGAL_GENERATION",
    23: "INCONSISTENT_GROUP_PROTOCOL", 25: "UNKNOWN_MEMBER_ID", 26: "INVALID_SESSION_TIMEOUT",
    27: "REBALANCE_IN_PROGRESS", 35: "UNSUPPORTED_VERSION", 69: "GROUP_ID_NOT_FOUND",
    79: "MEMBER_ID_REQUIRED", 81: "GROUP_MAX_SIZE_REACHED", 82: "FENCED_INSTANCE_ID",
}


def plotly_js() -> str:
    """plotly.js from the plotly package (the `report` extra), to embed whole."""
    try:
        import plotly
    except ImportError:
        from .spark import ReportError
        raise ReportError("kafka-emu report's page needs plotly: pip install 'kafka-emu[report]'"
                          ) from None
    return (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text()


def _client(row: Any) -> str:
    return f"{row['client_name']} {row['client_version']}"


def _when(ms: int | None) -> str | None:
    if ms is None:
        return None
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S")


FOLD_ROWS = 15  # a longer table is folded (a click opens it)
PAGE_ROWS = 2000  # rows of one table drawn on the page; the Parquet table has them all
FILTER_KEYS = ("run", "client_name", "client_version", "group_id")


def _cell(value: Any, column: str) -> str:
    cls = " class='num'" if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else ""
    if column == "verdict":
        cls = f" class='{'pass' if value == 'pass' else 'fail'}'"
    if isinstance(value, float):
        value = f"{value:.3g}"
    if isinstance(value, (list, dict)):
        value = json.dumps(value, separators=(", ", ": "))
    return f"<td{cls}>{html.escape('' if value is None else str(value))}</td>"


def _table(rows: list, columns: list[str], limit: int = PAGE_ROWS, *, table_id: str = "",
           filtered: bool = True, view: bool = False, fold: bool = True) -> str:
    """A sortable table; with ``filtered`` each row carries its run, client and group for the
    page's filters, with ``view`` a link to its run's view; folded beyond FOLD_ROWS rows."""
    if not rows:
        return "<p class='note'>none</p>"
    head = ("<th>run view</th>" if view else "") + \
        "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows[:limit]:
        attrs = ""
        if filtered:
            keys = {k: r[k] for k in FILTER_KEYS if k in r}
            attrs = f" data-row='{html.escape(json.dumps(keys), quote=True)}'"
        link = (f"<td><a class='view' data-open-run='{html.escape(str(r['run']), quote=True)}'"
                f">view</a></td>") if view else ""
        body.append(f"<tr{attrs}>{link}" + "".join(_cell(r.get(c), c) for c in columns)
                    + "</tr>")
    more = (f"<p class='note'>the first {limit} of {len(rows)} rows; the Parquet table has "
            "them all</p>" if len(rows) > limit else "")
    table_id = table_id or f"t{abs(hash(tuple(columns))) % 10**8}"
    count = f"<span class='note' data-count='{table_id}'></span>" if filtered else ""
    table = (f"<table class='sortable' id='{table_id}'><thead><tr>{head}</tr></thead>"
             f"<tbody>{''.join(body)}</tbody></table>")
    if fold and len(rows) > FOLD_ROWS:
        table = (f"<details><summary>{len(rows)} rows (click to open) </summary>{table}"
                 "</details>")
    return f"{count}{table}{more}"


def _conformance_matrix(rows: list) -> str:
    if not rows:
        return "<p class='note'>no scenario verdicts in these traces</p>"
    # (a verdict line without its scenario or client: shown blank, not a failed page)
    rows = [{**r, **{k: r[k] or "" for k in ("scenario", "client", "client_version")}}
            for r in rows]
    clients = sorted({f"{r['client']} {r['client_version']}" for r in rows})
    scenarios = sorted({r["scenario"] for r in rows})
    cell = {(r["scenario"], f"{r['client']} {r['client_version']}"): r for r in rows}
    head = "<tr><th>scenario</th>" + "".join(f"<th>{html.escape(c)}</th>" for c in clients)
    body = []
    for s in scenarios:
        tds = []
        for c in clients:
            r = cell.get((s, c))
            if r is None:
                tds.append("<td></td>")
            else:
                title = html.escape(r["a_reason"] or "", quote=True)
                tds.append(f"<td class='{r['verdict']}' title='{title}'>{r['verdict']} "
                           f"({r['passed']}/{r['runs']})</td>")
        body.append(f"<tr><td>{html.escape(s)}</td>{''.join(tds)}</tr>")
    return f"<table>{head}</tr>{''.join(body)}</table>"


def sampled(results: dict[str, list], name: str) -> str:
    """'' for a table collected whole, else how much of it the collected rows are."""
    rows = {r["table"]: r["rows"] for r in results["table_rows"]}.get(name, 0)
    got = len(results[name])
    return "" if got >= rows else f"a uniform sample of {got} of {rows} rows"


def _skipped(drops: list) -> list[str]:
    """The lines the report could not use, per file and reason (nothing when none)."""
    if not drops:
        return []
    total = sum(r["lines"] for r in drops)
    return ["<h2>Skipped lines</h2>",
            f"<p class='note'>{total} line{'s' * (total != 1)} of the traces could not be "
            "used and are in no table below: unparsable (not a JSON object, or cut short), "
            "wrong type (a value of another type than the trace schema's in a field the report "
            "reads), torn gzip tail (a compressed file that stops decompressing: read up to "
            "there, the rest counted as one), no kind or run.</p>",
            _table(drops, ["file", "reason", "lines"], limit=len(drops), filtered=False,
                   fold=False)]


def _link(run: str, text: str | None = None) -> str:
    return (f"<a class='view' data-open-run='{html.escape(run, quote=True)}'>"
            f"{html.escape(text or run)}</a>")


def with_clients(results: dict[str, list]) -> list[dict]:
    """The violations, each with the client that showed it: the client on its request's
    connection, else the client of its group's first JoinGroup, else the run's label."""
    on_connection = {(r["run"], r["connection_id"]): r for r in results.get("connections", [])}
    of_group = {(r["run"], r["group_id"]): r for r in results["rebalances"]}
    labels = {r["run"]: (r.get("labels") or {}) for r in results["runs"]}
    out = []
    for v in results["violations"]:
        c = on_connection.get((v["run"], v["connection_id"])) or of_group.get(
            (v["run"], v["group_id"]))
        if c is not None:
            name, version = c["client_name"], c["client_version"]
        else:
            name = labels.get(v["run"], {}).get("client") or "unknown"
            version = labels.get(v["run"], {}).get("client_version") or "unknown"
        out.append(v | {"client_name": name, "client_version": version})
    return out


def _summary(results: dict[str, list], violations: list[dict]) -> str:
    """What went wrong, and where: the page's first section."""
    items = []
    kinds = {r["kind"]: r["count"] for r in results["violation_kinds"]}
    by_kind: dict[str, list[dict]] = {}
    for v in violations:
        by_kind.setdefault(v["kind"], []).append(v)
    for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]):
        rows = by_kind.get(kind, [])
        runs = Counter(v["run"] for v in rows).most_common(3)
        clients = sorted({f"{v['client_name']} {v['client_version']}" for v in rows})
        where = ", ".join(_link(run, f"{run} ({c})") for run, c in runs)
        more = len({v["run"] for v in rows}) - len(runs)
        items.append(f"<li><b>{html.escape(kind)}</b>: {n} in {where}"
                     + (f" and {more} more runs" if more > 0 else "")
                     + f" &mdash; {html.escape(', '.join(clients))}</li>")
    failed = [r for r in results["conformance"] if r["verdict"] != "pass"]
    for r in failed[:5]:
        items.append(f"<li><b>scenario {html.escape(r['scenario'])}</b> failed for "
                     f"{html.escape(str(r['client']))} {html.escape(str(r['client_version']))}"
                     f" ({r['failed']} of {r['runs']} runs): "
                     f"{html.escape(r['a_reason'] or '')}</li>")
    unfinished = [r["run"] for r in results["runs"] if not r.get("ended_cleanly")]
    if unfinished:
        items.append(f"<li><b>{len(unfinished)} runs did not end cleanly</b> (no run_end: "
                     "killed or crashed): " + ", ".join(_link(r) for r in unfinished[:5])
                     + (" ..." if len(unfinished) > 5 else "") + "</li>")
    slow = [r for r in results["rebalances"] if r["duration_ms"] is not None]
    if slow:
        worst = max(slow, key=lambda r: r["duration_ms"])
        items.append(f"<li>slowest rebalance: {worst['duration_ms']} ms, "
                     f"{_link(worst['run'])} / group {html.escape(str(worst['group_id']))} "
                     f"generation {worst['generation']} "
                     f"({html.escape(worst['reason'] or 'reason unknown')})</li>")
    errors = sorted(results["client_errors"], key=lambda r: -r["responses"])[:3]
    if errors:
        items.append("<li>most frequent error answers: " + "; ".join(
            f"{html.escape(_client(r))} {html.escape(r['api'])} "
            f"{ERROR_NAMES.get(r['error_code'], r['error_code'])} x{r['responses']}"
            for r in errors) + "</li>")
    drops = results.get("dropped_lines", [])
    if drops:
        items.append(f"<li>{sum(r['lines'] for r in drops)} trace lines could not be read "
                     "(see Skipped lines)</li>")
    lost = results.get("writer_lost", [])
    if lost:
        items.append("<li>events lost by the writer in " + ", ".join(
            f"{_link(r['run'])} ({r['events_lost']})" for r in lost[:5]) + "</li>")
    if not kinds and not failed:
        items.insert(0, "<li>no protocol violation and no failed scenario</li>")
    return "<div class='summary'><h2>What to look at</h2><ul>" + "".join(items) + \
        "</ul></div>"


def _page_data(results: dict[str, list], worst: list[str], violations: list[dict]) -> dict:
    """What the script draws from, as lean as the charts need."""
    keys = ("run", "group_id", "generation", "reason", "started_ms", "stable_ms", "duration_ms",
            "members_before", "members_after", "client_name", "client_version")
    seen, reb = set(), []
    # the worst runs' generations first (counted over the whole table), then the rest
    for r in sorted(results["worst_run_rebalances"], key=lambda r: worst.index(r["run"])
                    if r["run"] in worst else len(worst)) + results["rebalances"]:
        key = (r["run"], r["group_id"], r["generation"])
        if key not in seen:
            seen.add(key)
            reb.append({k: r[k] for k in keys})
    timeline = results.get("timeline", [])
    clients = [r for table in ("client_matrix", "api_versions") for r in results[table]]
    return {
        "rebalances": reb, "client_errors": results["client_errors"],
        "api_versions": results["api_versions"], "violations": violations,
        "timeline": timeline, "timeline_runs": sorted({r["run"] for r in timeline}),
        "worst_runs": worst, "error_names": {str(k): v for k, v in ERROR_NAMES.items()},
        "filters": {"client": sorted({r["client_name"] for r in clients}),
                    "version": sorted({r["client_version"] for r in clients}),
                    "group": sorted({r["group_id"] for r in reb if r["group_id"]}),
                    "run": sorted(r["run"] for r in results["runs"])},
    }


def _json_for_script(data: Any) -> str:
    # (inside <script>, "</" would end it)
    return json.dumps(data, separators=(",", ":"), default=str).replace("</", "<\\/")


FILTERS = """<div id='filters'>Filter: <label>client <select id='f-client' data-key='client'>
<option value=''>all</option></select></label><label>version <select id='f-version'
data-key='version'><option value=''>all</option></select></label><label>group <select
id='f-group' data-key='group'><option value=''>all</option></select></label><label>run
<select id='f-run' data-key='run'><option value=''>all</option></select></label>
<button id='f-reset'>reset</button></div>"""

RUN_VIEW = """<div id='run-view' style='display:none'><h2 id='run-title'>Run</h2>
<p class='note' id='run-note'></p><div id='chart-run' class='chart'></div>
<details><summary>the run's events</summary><table class='sortable' id='run-table'><thead><tr>
<th>seq</th><th>at_ms</th><th>kind</th><th>group</th><th>member</th><th>generation</th>
<th>what</th></tr></thead><tbody></tbody></table></details></div>"""


def render(results: dict[str, list], *, worst_runs: list[str], sources: list[str]) -> str:
    made = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    violations = with_clients(results)
    data = _page_data(results, worst_runs, violations)
    lost = {r["run"]: r["events_lost"] for r in results.get("writer_lost", [])}
    notes = [f"{name}: {sampled(results, name)}" for name in ("rebalances", "violations",
                                                              "client_errors", "api_versions")
             if sampled(results, name)]
    runs_with_view = len(data["timeline_runs"])
    total_runs = results["run_events"][0]["runs"]
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>kafka-emu report</title><style>{CSS}</style>"
             f"<script>{plotly_js()}</script></head><body>",
             "<h1>kafka-emu report</h1>",
             f"<p class='note'>{total_runs} runs, {results['run_events'][0]['events']} events "
             f"from {html.escape(', '.join(sources))}; made {made}</p>",
             *(f"<p class='note'>sampled for the page: {html.escape(n)} (counts and the "
               "summary are over the whole tables)</p>" for n in notes),
             *([f"<p class='note'>run views: {runs_with_view} of {total_runs} runs carry their "
                "timeline (the worst runs and those with violations first)</p>"]
               if runs_with_view < total_runs else []),
             _summary(results, violations), FILTERS, RUN_VIEW,
             *_skipped(results.get("dropped_lines", [])),
             "<h2>Clients</h2>",
             _table(results["client_matrix"], ["client_name", "client_version", "runs",
                                               "connections", "requests", "error_responses",
                                               "throttled_share", "faulted_share"]),
             "<h2>Rebalances</h2>",
             _table(results["rebalance_percentiles"], ["client_name", "client_version",
                                                       "rebalances", "p50_ms", "p95_ms",
                                                       "p99_ms", "max_ms"]),
             "<div id='chart-durations' class='chart'></div>",
             "<div id='chart-generations' class='chart'></div>",
             "<details><summary>every rebalance</summary>",
             _table(results["rebalances"], ["run", "group_id", "generation", "reason",
                                            "duration_ms", "members_before", "members_after",
                                            "client_name", "client_version"],
                    table_id="rebalances", view=True, fold=False),
             "</details>",
             "<h2>Error codes</h2><div id='chart-errors' class='chart'></div>",
             "<h2>API versions</h2><div id='chart-versions' class='chart'></div>",
             "<h2>Violations</h2>",
             _table(violations, ["kind", "run", "client_name", "client_version", "group_id",
                                 "member_id", "api", "seq", "detail"],
                    table_id="violations", view=True),
             "<h2>Conformance</h2>", _conformance_matrix(results["conformance"]),
             matrix.section(matrix.load(sources)),  # `conformance --matrix` summaries
             transactions.section(results), share.section(results), auth.section(results),
             "<h2>Runs</h2>",
             _table([r | {"started (UTC)": _when(r["started_ms"]),
                          "events lost by the writer": lost.get(r["run"])}
                     for r in results["runs"]],
                    ["run", "started (UTC)", "emu_version", "events", "ended_cleanly"] +
                    (["events lost by the writer"] if lost else []), table_id="runs",
                    view=True),
             f"<script type='application/json' id='report-data'>{_json_for_script(data)}"
             "</script>",
             f"<script>{JS}</script></body></html>"]
    return "\n".join(parts)
