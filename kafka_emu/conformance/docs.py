"""The catalogue as Markdown, from the scenario declarations (``kafka-emu conformance --list
--markdown``): the documentation's scenario tables are this output (and the transactions
catalogue's, ``txn_scenarios.markdown``), never written by hand. They live in ``PAGE``, the
reference page kafka_emu/reference_pages/ generates; tests/conformance/test_scenario_tables_in_docs.py
fails when a row there differs from the declarations."""

from __future__ import annotations

from pathlib import Path

from .profiles import CAPABILITIES
from .scenarios import CATALOGUE

# where the tables are published (a source checkout's docs/; not shipped in the wheel)
PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "conformance-scenarios.md"


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
