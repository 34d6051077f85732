"""docs/reference/index.md: what each reference page is (from the page modules' registry)."""

from __future__ import annotations

from . import PAGES, REGENERATE
from .common import header, table

WHAT = {
    "configuration.md": ("Configuration", "every `-c KEY=VALUE` setting: default, Kafka's "
                         "default where kafka-emu's differs, what it changes; group configs"),
    "control-operations.md": ("Control operations", "every control operation (HTTP, `ctl`, "
                              "the handle's methods): parameters, result, examples in curl, "
                              "Python and Node"),
    "cli.md": ("CLI", "every `kafka-emu` command and flag with its default"),
    "apis.md": ("APIs and versions", "every Kafka API served, its version range and notes"),
    "trace-schema.md": ("Trace schema", "every record kind of a trace file and its fields"),
    "timeline-events.md": ("Timeline events", "every event type the timeline records (the "
                           "names its filters take) and its fields"),
    "python-api.md": ("Python API", "`run_in_thread`, `open_emulator`, the handle's methods, "
                      "the pytest fixtures, the result types"),
    "conformance-scenarios.md": ("Conformance scenarios", "every scenario of the conformance "
                                 "kit and what it checks"),
}


def render() -> str:
    pages = [p for p in PAGES if p != "index.md"]
    missing = set(pages) - set(WHAT)
    if missing:
        raise KeyError(f"reference pages without a description: {sorted(missing)}")
    return "\n".join([
        header("index_page", "Reference",
               "Generated from the code, so they cannot drift: each page is rendered from the "
               "declaration it describes, and a test fails when a committed page differs from "
               f"what the code renders (`{REGENERATE}` rewrites them)."),
        table(["page", "what it holds"],
              [[f"[{WHAT[p][0]}]({p})", WHAT[p][1]] for p in pages]), ""])
