"""The README is the landing page (#41): what it shows runs, what it links to exists, and it
lists every deviation from Kafka.

- Its python blocks run as written, read from README.md here (not copied): a block defining
  ``test_`` functions (the "One test") runs under pytest as a user's test file, the others as
  programs. The tutorial's snippets, which the README's Quickstart used to hold, are run by
  tests/docs/test_examples.py with every other example of the site.
- Every relative link resolves to a file of the repository, and a link's ``#anchor`` into a docs
  page names one of that page's headings (GitHub and MkDocs make the same slugs of them).
- The house rule: every deviation from Kafka is listed in the README. Its "Differences from
  Apache Kafka" list has one line per bullet of docs/explanation/differences-from-kafka.md, each
  linking into that page.
- It reads in two minutes: at most 160 lines.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DIFFERENCES = ROOT / "docs" / "explanation" / "differences-from-kafka.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _text() -> str:
    return README.read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def _slug(heading: str) -> str:
    """A heading's anchor as MkDocs' toc and GitHub both make it for plain-text headings."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"\s+", "-", text)


def _anchors(page: Path) -> set[str]:
    anchors, fenced = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            anchors.add(_slug(line.lstrip("#")))
    anchors.update(re.findall(r'<a id="([^"]+)"', page.read_text(encoding="utf-8")))
    return anchors


SNIPPETS = [m.group(1) for m in FENCE.finditer(_text())]


def test_the_readme_shows_one_runnable_test():
    assert any("def test_" in s for s in SNIPPETS)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.splitlines()[0][:40] for s in SNIPPETS])
def test_readme_snippet_runs(snippet, tmp_path):
    if "def test_" in snippet:
        path = tmp_path / "test_readme_snippet.py"
        path.write_text(snippet)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)]
    else:
        path = tmp_path / "snippet.py"
        path.write_text(snippet)
        cmd = [sys.executable, str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_every_relative_link_resolves():
    broken = []
    for target in LINK.findall(_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path, _, anchor = target.partition("#")
        file = ROOT / path
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(target)
    assert broken == []


def test_the_readme_lists_every_deviation_from_kafka():
    text = _differences_list()
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    bullets = [line for line in DIFFERENCES.read_text(encoding="utf-8").splitlines()
               if line.startswith("- **")]
    assert len(bullets) >= 30
    assert len(lines) == len(bullets), (
        f"the README lists {len(lines)} deviations, the differences page {len(bullets)}: "
        "give each bullet of docs/explanation/differences-from-kafka.md its line")
    assert all("docs/explanation/differences-from-kafka.md#" in line for line in lines)


def _differences_list() -> str:
    return _section(_text(), "## Differences from Apache Kafka")


def test_the_readme_reads_in_two_minutes():
    assert len(_text().splitlines()) <= 160
