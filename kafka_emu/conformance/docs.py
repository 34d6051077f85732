"""The catalogue as Markdown, from the scenario declarations (``kafka-emu conformance --list
--markdown``): the README's scenario table is this output, never written by hand."""

from __future__ import annotations

from .profiles import CAPABILITIES
from .scenarios import CATALOGUE


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown() -> str:
    """One row per scenario: its name, what it checks (the first paragraph of its docstring),
    the Kafka system test it re-expresses, what a client must have for it to run (else it is
    skipped naming that), and the group protocol it means nothing on."""
    rows = ["| scenario | what it checks | Kafka test | needs | not on |",
            "|---|---|---|---|---|"]
    for sc in CATALOGUE.values():
        needs = ", ".join(CAPABILITIES.get(n, n) for n in sorted(sc.needs)) or "-"
        not_on = ", ".join(sorted(sc.not_on)) or "-"
        if sc.skip:
            not_on = f"always skipped: {sc.skip}"
        rows.append(f"| `{sc.name}` | {_cell(sc.summary)} | {_cell(sc.kafka_test)} | "
                    f"{_cell(needs)} | {_cell(not_on)} |")
    return "\n".join(rows)
