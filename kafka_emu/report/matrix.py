"""The conformance matrix on the report's page: scenario x client version, from ``matrix.jsonl``.

``kafka-emu conformance --matrix SPEC --trace-dir DIR`` writes ``DIR/matrix.jsonl``, one JSON
object per cell (``kafka_emu/conformance/matrix.py``: scenario, client, version,
group_protocol, column, verdict, reason, seconds, run, trace, client_logs; paths relative to
DIR), next to every cell's traces. ``kafka-emu report DIR ...`` reads the traces with Spark as
always; this module reads the summaries found under the same inputs directly on the driver --
a matrix is a few hundred small rows, one file per matrix, so there is nothing for Spark to do
-- and draws them: a row per scenario, a column per client version and group protocol, a red
cell carrying its failure reason (the first line on the page, all of it on hover), a link to the
scenario's run view (when the page carries that run's timeline) and the path of its trace file.
No Spark, no kafka-emu server code: plain JSON and HTML.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path

MATRIX_FILE = "matrix.jsonl"
REASON_CHARS = 240


def load(paths: Iterable[str | Path]) -> list[dict]:
    """Every cell of every ``matrix.jsonl`` under ``paths`` (files or directories given to
    ``kafka-emu report``; remote URLs are skipped), each with ``base``: the matrix's directory.
    A line that does not parse is skipped (a matrix still running writes cell by cell)."""
    cells: list[dict] = []
    for p in paths:
        if "://" in str(p):
            continue
        path = Path(p)
        found = [path] if path.is_file() and path.name == MATRIX_FILE else \
            sorted(path.rglob(MATRIX_FILE)) if path.is_dir() else []
        for f in found:
            with open(f, encoding="utf-8") as lines:
                for line in lines:
                    try:
                        cell = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(cell, dict) and "scenario" in cell and "column" in cell:
                        cells.append({**cell, "base": str(f.parent.resolve())})
    return cells


def section(cells: list[dict]) -> str:
    """The matrix as HTML ('' when there is none): one table per matrix directory."""
    if not cells:
        return ""
    parts = ["<h2>Conformance matrix</h2>"]
    by_base: dict[str, list[dict]] = {}
    for c in cells:
        by_base.setdefault(c["base"], []).append(c)
    for base, mine in by_base.items():
        parts.append(_table(base, mine))
    return "\n".join(parts)


def _table(base: str, cells: list[dict]) -> str:
    cols = list(dict.fromkeys(c["column"] for c in cells))
    rows = list(dict.fromkeys(c["scenario"] for c in cells))
    at = {(c["scenario"], c["column"]): c for c in cells}
    counts = []
    for col in cols:
        mine = [c for c in cells if c["column"] == col]
        n = {v: sum(c["verdict"] == v for c in mine) for v in ("pass", "fail", "skip")}
        counts.append(f"{n['pass']} pass, {n['fail']} fail, {n['skip']} skip")
    head = "<tr><th>scenario</th>" + "".join(
        f"<th>{html.escape(col)}<br><span class='note'>{html.escape(n)}</span></th>"
        for col, n in zip(cols, counts, strict=True)) + "</tr>"
    body = []
    for r in rows:
        tds = "".join(_cell(base, at.get((r, col))) for col in cols)
        body.append(f"<tr><td>{html.escape(r)}</td>{tds}</tr>")
    return (f"<p class='note'>{html.escape(base)}/{MATRIX_FILE}</p>"
            f"<table class='matrix'><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>")


def _cell(base: str, c: dict | None) -> str:
    if c is None:
        return "<td></td>"
    verdict = str(c.get("verdict", ""))
    reason = str(c.get("reason") or "")
    first = reason.splitlines()[0] if reason else ""
    if first.startswith("known ") and " -- " in first:
        # "known X bug: <evidence> -- <what broke>": what broke on the page, the evidence on hover
        first = f"{first.split(':', 1)[0]} (hover for it): {first.split(' -- ', 1)[1]}"
    shown = first if len(first) <= REASON_CHARS else first[:REASON_CHARS] + "..."
    bits = [f"<b>{html.escape(verdict)}</b>"]
    if verdict != "pass" and shown:
        bits.append(f"<div class='reason'>{html.escape(shown)}</div>")
    links = []
    if c.get("run"):
        links.append(f"<a class='view' data-open-run='{html.escape(str(c['run']), quote=True)}'"
                     ">run view</a>")
    if c.get("trace"):
        where = Path(base) / c["trace"]
        links.append(f"<a href='{html.escape(where.as_uri(), quote=True)}'>trace</a>")
    if verdict == "fail" and c.get("client_logs"):
        logs = Path(base) / c["client_logs"]
        links.append(f"<a href='{html.escape(logs.as_uri(), quote=True)}'>client logs</a>")
    if links:
        bits.append(f"<div class='note'>{' · '.join(links)}</div>")
    css = verdict if verdict in ("pass", "fail") else "skip"
    return (f"<td class='{css}' title='{html.escape(reason, quote=True)}'>"
            f"{''.join(bits)}</td>")
