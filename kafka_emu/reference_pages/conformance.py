"""docs/reference/conformance-scenarios.md: every conformance scenario and what it checks.

The tables are the catalogues' own Markdown (``kafka-emu conformance --list --markdown`` and
``--transactions --list --markdown``, from the scenario declarations); this page splits the
first by the kind of group a scenario runs (consumer groups, share groups) and adds a count.
"""

from __future__ import annotations

import re

from ..conformance.docs import markdown as consumer_markdown
from ..conformance.scenarios import CATALOGUE
from ..conformance.txn_scenarios import TXN_CATALOGUE
from ..conformance.txn_scenarios import markdown as txn_markdown
from .common import header

_NAME = re.compile(r"\|\s*`([^`]+)`")


def _split(text: str) -> dict[str, list[str]]:
    """The table's head and its rows by the scenario's kind."""
    lines = text.strip().splitlines()
    out: dict[str, list[str]] = {}
    for line in lines[2:]:
        match = _NAME.match(line)
        kind = CATALOGUE[match.group(1)].kind if match else "consumer"
        out.setdefault(kind, list(lines[:2])).append(line)
    return out


def render() -> str:
    by_kind = _split(consumer_markdown())
    consumer = [sc for sc in CATALOGUE.values() if sc.kind != "share"]
    share = [sc for sc in CATALOGUE.values() if sc.kind == "share"]
    parts = [header(
        "conformance", "Conformance scenarios",
        "The scenarios of the conformance kit (`kafka-emu conformance`): Kafka's own system "
        "tests re-expressed against the emulator, each run with a client's verifiable "
        "programs and judged by the same verdict rules. How to run them against your own "
        "client: [Conformance-test your client](../how-to/conformance-your-client.md)."),
        f"## Consumer groups ({len(consumer)} scenarios)", "",
        "`kafka-emu conformance --client NAME` (or `--consumer CMD`) runs them; each runs on "
        "the classic protocol and, with `--group-protocol consumer`, on KIP-848's, except "
        "where *not on* says otherwise.", "",
        "\n".join(by_kind.get("consumer", [])), "",
        f"## Share groups ({len(share)} scenarios)", "",
        "Kafka's ShareConsumerTest, run with a client's share consumer (KIP-932) in the "
        "classic run.", "",
        "\n".join(by_kind.get("share", [])), "",
        f"## Transactions ({len(TXN_CATALOGUE)} scenarios)", "",
        "`kafka-emu conformance --transactions --client NAME` (or `--copier CMD`): Kafka's "
        "TransactionsTest, copiers reading and writing in transactions while clients or "
        "brokers bounce.", "",
        txn_markdown(), ""]
    return "\n".join(parts).rstrip("\n") + "\n"
