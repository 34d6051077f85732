"""The reference pages of the documentation site, generated from the code so they cannot drift.

Theory of operation. Each page of ``docs/reference/`` has one small module here with a
``render() -> str`` that reads the page's declaration -- the config classes, the control
operations (through the OpenAPI document the endpoint serves), the argparse parsers, the
generated API index, the trace schema, the timeline's event classes, the conformance
catalogues -- and returns the whole Markdown page. Nothing here restates a table the code holds;
the only hand-written data is ``config_notes.py`` (what each configuration key changes), which a
test keeps in step with the declarations in both directions.

``python -m kafka_emu.reference_pages`` rewrites every page; ``--check`` writes nothing and
exits 1 naming each page that would change (tests/docs/test_reference_pages.py does the same in
memory). Rendering is deterministic: no version string, no clock, no environment.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

# page file name -> module (in this package) whose render() writes it, in the site's nav order
PAGES: dict[str, str] = {
    "index.md": "index_page",
    "configuration.md": "configuration",
    "control-operations.md": "control_operations",
    "cli.md": "cli_page",
    "apis.md": "apis",
    "trace-schema.md": "trace_schema",
    "timeline-events.md": "timeline_events",
    "python-api.md": "python_api",
    "conformance-scenarios.md": "conformance",
}

REGENERATE = "python -m kafka_emu.reference_pages"


def reference_dir() -> Path:
    """docs/reference of the checkout this package lives in."""
    return Path(__file__).resolve().parents[2] / "docs" / "reference"


def renderer(page: str) -> Callable[[], str]:
    return importlib.import_module(f"{__name__}.{PAGES[page]}").render  # type: ignore[no-any-return]


def render_all() -> dict[str, str]:
    """Every page's text, by file name."""
    return {page: renderer(page)() for page in PAGES}


def stale(directory: Path | None = None) -> list[str]:
    """The pages whose committed text differs from what the code renders now."""
    directory = directory or reference_dir()
    out = []
    for page, text in render_all().items():
        path = directory / page
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            out.append(page)
    return out


def write_all(directory: Path | None = None) -> list[Path]:
    """Rewrite the pages that changed; the paths written."""
    directory = directory or reference_dir()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for page, text in render_all().items():
        path = directory / page
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written
