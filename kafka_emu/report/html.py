"""report.html: one self-contained page (inline SVG plots drawn with matplotlib, inline CSS, no
script and no network), from the small collected results of the job.

Plots: rebalance durations per client (box plot with the points), generations over time for the
groups of the worst runs, error codes per client x API (heat map), and the highest API version
each client version used against the broker's maximum (matrix). Above them, when the traces
had lines the report could not use, a table of them per file and reason; in the run table, the
events each run's writer said it lost (run_end), when one did.
"""

from __future__ import annotations

import datetime
import html
import io
from collections import defaultdict
from typing import Any

ERROR_NAMES = {
    3: "UNKNOWN_TOPIC_OR_PARTITION", 7: "REQUEST_TIMED_OUT", 14: "COORDINATOR_LOAD_IN_PROGRESS",
    15: "COORDINATOR_NOT_AVAILABLE", 16: "NOT_COORDINATOR", 22: "ILLEGAL_GENERATION",
    23: "INCONSISTENT_GROUP_PROTOCOL", 25: "UNKNOWN_MEMBER_ID", 26: "INVALID_SESSION_TIMEOUT",
    27: "REBALANCE_IN_PROGRESS", 35: "UNSUPPORTED_VERSION", 69: "GROUP_ID_NOT_FOUND",
    79: "MEMBER_ID_REQUIRED", 81: "GROUP_MAX_SIZE_REACHED", 82: "FENCED_INSTANCE_ID",
}

CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}th{background:#f3f3f3}
td.num{text-align:right}.pass{background:#dff0d8}.fail{background:#f2dede}
.plot svg{max-width:100%;height:auto}.note{color:#666;font-size:.85em}
"""


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9})
    return plt


def load_plotting() -> None:
    """Import the plotting library now (the job does it in the background)."""
    _plt()


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    _plt().close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _client(row: Any) -> str:
    return f"{row['client_name']} {row['client_version']}"


def plot_rebalance_durations(rebalances: list) -> str | None:
    by_client: dict[str, list[float]] = defaultdict(list)
    for r in rebalances:
        if r["duration_ms"] is not None:
            by_client[_client(r)].append(r["duration_ms"])
    if not by_client:
        return None
    plt = _plt()
    names = sorted(by_client)
    fig, ax = plt.subplots(figsize=(9, 0.6 + 0.45 * len(names)))
    ax.boxplot([by_client[n] for n in names], vert=False, showfliers=False)
    for i, n in enumerate(names, start=1):
        ys = [i + (j % 7 - 3) * 0.03 for j in range(len(by_client[n]))]
        ax.scatter(by_client[n], ys, s=8, alpha=0.6, color="tab:blue")
    ax.set_yticks(range(1, len(names) + 1), names)
    ax.set_xlabel("PreparingRebalance -> Stable (ms)")
    ax.set_title("Rebalance durations per client")
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def plot_generation_timeline(rebalances: list, worst_runs: list[str]) -> str | None:
    rows = [r for r in rebalances if r["run"] in worst_runs and r["started_ms"] is not None]
    if not rows:
        return None
    plt = _plt()
    lanes = sorted({(r["run"], r["group_id"]) for r in rows})
    starts = {run: min(r["started_ms"] for r in rows if r["run"] == run) for run in worst_runs
              if any(r["run"] == run for r in rows)}
    fig, ax = plt.subplots(figsize=(9, 0.8 + 0.45 * len(lanes)))
    for y, (run, group) in enumerate(lanes):
        gens = sorted((r for r in rows if (r["run"], r["group_id"]) == (run, group)),
                      key=lambda r: r["generation"])
        for g in gens:
            x0 = (g["started_ms"] - starts[run]) / 1000
            end = g["stable_ms"] if g["stable_ms"] is not None else g["started_ms"]
            width = max((end - g["started_ms"]) / 1000, 0.01)
            ax.broken_barh([(x0, width)], (y - 0.35, 0.7), color="tab:orange", alpha=0.8)
            ax.text(x0 + width, y, f" g{g['generation']} ({g['members_after']})", va="center",
                    fontsize=7)
    ax.set_yticks(range(len(lanes)), [f"{run[-6:]} / {group}" for run, group in lanes])
    ax.set_xlabel("seconds since the run's first rebalance (bars: PreparingRebalance -> Stable;"
                  " label: generation (members))")
    ax.set_title("Generations per group, worst runs")
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def plot_error_heatmap(errors: list) -> str | None:
    if not errors:
        return None
    plt = _plt()
    clients = sorted({_client(r) for r in errors})
    apis = sorted({r["api"] for r in errors})
    grid = [[0] * len(apis) for _ in clients]
    codes: dict[tuple[int, int], list[str]] = defaultdict(list)
    for r in errors:
        i, j = clients.index(_client(r)), apis.index(r["api"])
        grid[i][j] += r["responses"]
        codes[i, j].append(ERROR_NAMES.get(r["error_code"], str(r["error_code"])))
    fig, ax = plt.subplots(figsize=(1.5 + 1.1 * len(apis), 1 + 0.5 * len(clients)))
    im = ax.imshow(grid, cmap="Reds", aspect="auto")
    ax.set_xticks(range(len(apis)), apis, rotation=30, ha="right")
    ax.set_yticks(range(len(clients)), clients)
    top = max(max(row) for row in grid) or 1
    for (i, j), names in codes.items():
        label = "\n".join(sorted(set(names))[:3])
        ax.text(j, i, f"{grid[i][j]}\n{label}", ha="center", va="center", fontsize=6,
                color="white" if grid[i][j] > top / 2 else "black")
    fig.colorbar(im, ax=ax, label="error responses")
    ax.set_title("Error codes received, client x API")
    return _svg(fig)


def plot_api_versions(versions: list) -> str | None:
    if not versions:
        return None
    plt = _plt()
    used: dict[tuple[str, str], int] = {}
    broker: dict[str, int] = {}
    for r in versions:
        key = (_client(r), r["api"])
        used[key] = max(used.get(key, -1), r["version"])
        if r["broker_max"] is not None:
            broker[r["api"]] = r["broker_max"]
    clients = sorted({c for c, _ in used})
    apis = sorted({a for _, a in used})
    grid = [[(used[c, a] / broker[a] if broker.get(a) else 0.0) if (c, a) in used
             else float("nan") for a in apis] for c in clients]
    fig, ax = plt.subplots(figsize=(1.5 + 0.75 * len(apis), 1 + 0.5 * len(clients)))
    im = ax.imshow(grid, cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(apis)), [f"{a} (max {broker.get(a, '?')})" for a in apis],
                  rotation=40, ha="right")
    ax.set_yticks(range(len(clients)), clients)
    for i, c in enumerate(clients):
        for j, a in enumerate(apis):
            if (c, a) in used:
                ax.text(j, i, f"v{used[c, a]}", ha="center", va="center", fontsize=7,
                        color="white" if grid[i][j] < 0.6 else "black")
    fig.colorbar(im, ax=ax, label="highest version used / broker's highest")
    ax.set_title("API versions used per client version, against the broker's maximum")
    return _svg(fig)


def _when(ms: int | None) -> str | None:
    if ms is None:
        return None
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S")


def _table(rows: list, columns: list[str], limit: int = 200) -> str:
    if not rows:
        return "<p class='note'>none</p>"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows[:limit]:
        cells = []
        for c in columns:
            v = r[c]
            cls = " class='num'" if isinstance(v, (int, float)) else ""
            if c == "verdict":
                cls = f" class='{'pass' if v == 'pass' else 'fail'}'"
            if isinstance(v, float):
                v = f"{v:.3g}"
            cells.append(f"<td{cls}>{html.escape('' if v is None else str(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = (f"<p class='note'>{len(rows) - limit} more rows in the Parquet table</p>"
            if len(rows) > limit else "")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>{more}"


def _conformance_matrix(rows: list) -> str:
    if not rows:
        return "<p class='note'>no scenario verdicts in these traces</p>"
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
            _table(drops, ["file", "reason", "lines"], limit=len(drops))]


def render(results: dict[str, list], *, worst_runs: list[str], sources: list[str]) -> str:
    made = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    plots = [
        ("Rebalance durations", plot_rebalance_durations(results["rebalances"])),
        ("Generations of the worst runs",
         plot_generation_timeline(results["worst_run_rebalances"], worst_runs)),
        ("Error codes", plot_error_heatmap(results["client_errors"])),
        ("API versions", plot_api_versions(results["api_versions"])),
    ]
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>kafka-emu report</title><style>{CSS}</style></head><body>",
             "<h1>kafka-emu report</h1>",
             f"<p class='note'>{results['run_events'][0]['runs']} runs from "
             f"{html.escape(', '.join(sources))}; made {made}</p>",
             *_skipped(results.get("dropped_lines", [])),
             "<h2>Clients</h2>",
             _table(results["client_matrix"], ["client_name", "client_version", "runs",
                                               "connections", "requests", "error_responses",
                                               "throttled_share", "faulted_share"]),
             "<h2>Rebalances</h2>",
             _table(results["rebalance_percentiles"], ["client_name", "client_version",
                                                       "rebalances", "p50_ms", "p95_ms",
                                                       "p99_ms", "max_ms"])]
    for title, svg in plots:
        parts.append(f"<h2>{title}</h2>")
        if title == "Rebalance durations" and sampled(results, "rebalances"):
            parts.append(f"<p class='note'>{sampled(results, 'rebalances')}</p>")
        parts.append(f"<div class='plot'>{svg}</div>" if svg else
                     "<p class='note'>nothing to plot</p>")
    lost = {r["run"]: r["events_lost"] for r in results.get("writer_lost", [])}
    vio_note = sampled(results, "violations")
    parts += ["<h2>Violations</h2>",
              f"<p class='note'>{vio_note}</p>" if vio_note else "",
              _table(results["violations"], ["kind", "run", "group_id", "member_id", "api",
                                             "seq", "detail"]),
              "<h2>Conformance</h2>", _conformance_matrix(results["conformance"]),
              "<h2>Runs</h2>",
              _table([r | {"started (UTC)": _when(r["started_ms"]),
                           "events lost by the writer": lost.get(r["run"])}
                      for r in results["runs"]],
                     ["run", "started (UTC)", "emu_version", "events", "ended_cleanly"] +
                     (["events lost by the writer"] if lost else [])),
              "</body></html>"]
    return "\n".join(parts)
