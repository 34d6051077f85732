"""The documentation site (mkdocs.yml, docs/) builds strict and opens offline.

`mkdocs build --strict` turns every warning into an error: a nav entry without its page, a page
left out of the nav, a link to a page or anchor that does not exist, a snippet (CHANGELOG.md)
that cannot be included. The site is built once per module into a temporary directory; the
checks then read what was built:

- every page the nav names exists in docs/ and was built;
- no built page needs a resource from the network (scripts, styles, images, fonts, icons all
  local: Material's offline plugin, `theme.font: false`), and every local resource a page names
  exists on disk;
- the built index.html opens from disk in headless Chromium with no error and no request that
  is not a file, and its search finds pages (the search worker runs through
  docs/assets/javascripts/iframe-worker.js on file:// pages); skipped without Chromium, as the
  report page's tests are;
- a page with a broken link fails the strict build (so the first check can fail).

The build time is printed (pytest -s shows it); it is a figure for notes, never asserted.
"""

from __future__ import annotations

import html.parser
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = [sys.executable, "-m", "mkdocs"]
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


# The page map of #41 (notes: docs-map.md): every one of these pages is in the nav.
PAGE_MAP = [
    "index.md",
    *(f"tutorial/{p}.md" for p in ("index", "pytest-fixture", "kafka-python", "aiokafka",
                                   "confluent-kafka", "kafkajs")),
    *(f"how-to/{p}.md" for p in (
        "index", "control-the-clock", "inject-faults", "bounce-a-broker", "control-over-http",
        "traces-and-report", "conformance-your-client", "upgrade-to-consumer-protocol",
        "transactions", "share-groups", "security", "cluster", "asyncio",
        "timeline-and-waiters")),
    *(f"reference/{p}.md" for p in (
        "index", "configuration", "control-operations", "cli", "apis", "trace-schema",
        "timeline-events", "python-api", "conformance-scenarios")),
    *(f"explanation/{p}.md" for p in (
        "index", "how-the-coordinator-follows-kafka", "differences-from-kafka", "data-path",
        "consumer-protocol", "reliability")),
    "performance.md", "performance-history.md", "changelog.md",
]


def _build(config: Path, site: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MKDOCS, "build", "--strict", "-f", str(config), "-d", str(site)],
                          cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    started = time.perf_counter()
    done = _build(ROOT / "mkdocs.yml", out, ROOT)
    elapsed = time.perf_counter() - started
    print(f"\nmkdocs build --strict: {elapsed:.2f} s (exit {done.returncode})")
    assert done.returncode == 0, done.stderr[-4000:]
    return out


class _Loader(yaml.SafeLoader):
    """mkdocs.yml may carry MkDocs' !ENV / !relative tags; the nav never needs them."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def _nav_pages() -> list[str]:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_Loader)
    pages: list[str] = []

    def walk(entry: object) -> None:
        if isinstance(entry, str):
            pages.append(entry)
        elif isinstance(entry, list):
            for item in entry:
                walk(item)
        elif isinstance(entry, dict):
            for value in entry.values():
                walk(value)

    walk(config["nav"])
    return pages


def _html_files(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "assets" not in p.parts)


def _pages_read_from_disk(site: Path) -> list[Path]:
    # 404.html is for a web server, which answers it for any missing path: its links are
    # root-absolute by design and it is never opened from disk.
    return [p for p in _html_files(site) if p.name != "404.html"]


class _Resources(html.parser.HTMLParser):
    """What a page loads when it opens (not the links a reader may follow)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "audio", "video", "embed") and a.get("src"):
            self.found.append(a["src"] or "")
        if tag == "link" and a.get("href"):
            rel = (a.get("rel") or "").lower().split()
            if set(rel) & {"stylesheet", "preload", "icon", "manifest", "modulepreload",
                           "preconnect", "dns-prefetch"}:
                self.found.append(a["href"] or "")
        if tag == "object" and a.get("data"):
            self.found.append(a["data"] or "")

    def handle_data(self, data: str) -> None:
        # inline styles: @import and url(...) inside <style>
        self.found += re.findall(r"url\(\s*['\"]?([^'\")]+)", data)


def _resources(page: Path) -> list[str]:
    parser = _Resources()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.found


def _remote(url: str) -> bool:
    return bool(re.match(r"(?i)^(https?:)?//", url.strip()))


def test_the_site_builds_strict(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "search" / "search_index.js").is_file() or any(site.rglob("search_index*"))


def test_every_nav_page_exists_and_is_built(site: Path) -> None:
    pages = _nav_pages()
    assert sorted(set(PAGE_MAP) - set(pages)) == []       # every page of the map has its place
    missing = [p for p in pages if not (ROOT / "docs" / p).is_file()]
    assert missing == []
    unbuilt = [p for p in pages if not (site / p.replace(".md", ".html")).is_file()]
    assert unbuilt == []


def test_no_page_needs_the_network(site: Path) -> None:
    remote: dict[str, list[str]] = {}
    for page in _html_files(site):
        found = [u for u in _resources(page) if _remote(u)]
        if found:
            remote[str(page.relative_to(site))] = found
    for css in site.rglob("*.css"):
        found = [u for u in re.findall(r"(?:url\(\s*['\"]?|@import\s+['\"])([^'\")]+)",
                                       css.read_text(encoding="utf-8", errors="replace"))
                 if _remote(u)]
        if found:
            remote[str(css.relative_to(site))] = found
    assert remote == {}


def test_every_local_resource_a_page_loads_exists(site: Path) -> None:
    missing: list[str] = []
    for page in _pages_read_from_disk(site):
        for url in _resources(page):
            parts = urlsplit(url)
            if parts.scheme in ("data", "blob", "javascript", "about") or not parts.path:
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if not target.exists():
                missing.append(f"{page.relative_to(site)}: {url}")
    assert missing == []


def test_the_changelog_page_includes_the_changelog(site: Path) -> None:
    first = next(line for line in (ROOT / "CHANGELOG.md").read_text().splitlines()
                 if line.startswith("## "))
    heading = re.sub(r"[\[\]]", "", first[3:]).strip()
    built = (site / "changelog.html").read_text(encoding="utf-8")
    assert heading.split()[0] in built


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    work = tmp_path / "copy"
    shutil.copytree(ROOT / "docs", work / "docs")
    shutil.copy(ROOT / "mkdocs.yml", work / "mkdocs.yml")
    shutil.copy(ROOT / "CHANGELOG.md", work / "CHANGELOG.md")
    index = work / "docs" / "index.md"
    index.write_text(index.read_text() + "\n\nSee [nowhere](explanation/no-such-page.md).\n")
    done = _build(work / "mkdocs.yml", tmp_path / "site", work)
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr


def _browser():
    spec = importlib.util.spec_from_file_location(
        "_docs_site_browser", ROOT / "tests" / "report" / "browser.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(shutil.which("chromium") is None and not os.path.exists("/usr/bin/chromium"),
                    reason="no chromium")
def test_the_built_index_opens_from_disk(site: Path) -> None:
    browser = _browser()
    with browser.browse(site / "index.html") as page:
        title = page.evaluate("document.title")
        nav = page.evaluate(
            "Array.from(document.querySelectorAll('.md-nav__link')).map(a => a.textContent.trim())")
        styled = page.evaluate(
            "getComputedStyle(document.querySelector('.md-header')).position")
        # Material starts its search worker on file:// pages when the search opens
        page.evaluate("document.querySelector('label[for=__search]').click()")
        hits = 0
        deadline = time.monotonic() + 60
        while hits == 0 and time.monotonic() < deadline:
            time.sleep(0.3)
            hits = page.evaluate("""(() => {
                const q = document.querySelector('[data-md-component=search-query]');
                q.value = 'differences';
                q.dispatchEvent(new Event('input', {bubbles: true}));
                q.dispatchEvent(new KeyboardEvent('keyup', {key: 's', bubbles: true}));
                return document.querySelectorAll('.md-search-result__item').length;
            })()""")
        events = page.events
    assert hits > 0                            # the search worker ran from disk
    assert "kafka-emu" in title
    assert "Tutorial" in " ".join(nav) and "Reference" in " ".join(nav)
    assert styled in ("sticky", "fixed")       # Material's stylesheet loaded from disk
    assert browser.errors(events) == []
    assert [u for u in browser.requests(events) if not u.startswith(("file:", "data:"))] == []


# -- the answers a newcomer could not find (#41), each on one page --------------------------------

def test_the_fixture_page_lists_every_member_of_the_handle():
    """tutorial/pytest-fixture.md lists the handle's members by purpose: a member added to
    Emulator without a place there fails here."""
    from kafka_emu.testing import Emulator

    page = (ROOT / "docs" / "tutorial" / "pytest-fixture.md").read_text(encoding="utf-8")
    members = {name for name in dir(Emulator) if not name.startswith("_")}
    members |= {"host", "port", "config", "control_url", "control_token"}   # instance attributes
    assert len(members) >= 40
    missing = sorted(m for m in members if f"`{m}" not in page)
    assert missing == []


def test_each_newcomer_answer_is_on_its_page():
    fixture = (ROOT / "docs" / "tutorial" / "pytest-fixture.md").read_text(encoding="utf-8")
    assert "../reference/timeline-events.md" in fixture            # the event types
    assert "../how-to/asyncio.md" in fixture                       # the waiters under asyncio
    assert "../reference/python-api.md" in fixture                 # every signature
    delay = fixture[fixture.index("## A manual clock"):]
    assert "re-arms" in delay and 'kind="initial_delay"' in delay  # the manual clock's delay
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = readme[readme.index("## Two commands"):readme.index("## One test")]
    assert ".ci/run" in commands and "does not install system tools" in commands
