"""One page section of plain tables, for the report's optional parts (transactions, share groups,
authentication): each module names its tables and titles, this draws them the same way -- folded,
sortable by the page's script (``data-table``), a section only when one of its tables has rows."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any


def plain_cell(column: str, value: Any) -> str:
    return "" if value is None else html.escape(str(value))


def tables_section(section_id: str, heading: str, titles: dict[str, str],
                   results: dict[str, list[dict]],
                   cell: Callable[[str, Any], str] = plain_cell) -> str:
    """``<section>`` with a folded table per non-empty result named in ``titles`` ('' if none)."""
    if not any(results.get(name) for name in titles):
        return ""
    parts = [f'<section id="{section_id}"><h2>{html.escape(heading)}</h2>']
    for name, title in titles.items():
        rows = results.get(name) or []
        if not rows:
            continue
        cols = list(rows[0])
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body = "".join("<tr>" + "".join(f"<td>{cell(c, r[c])}</td>" for c in cols) + "</tr>"
                       for r in rows)
        parts.append(f"<h3>{html.escape(title)}</h3><table class=\"folded\" "
                     f"data-table=\"{name}\"><thead><tr>{head}</tr></thead>"
                     f"<tbody>{body}</tbody></table>")
    parts.append("</section>")
    return "".join(parts)
