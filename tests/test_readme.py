"""The README's quickstart snippets run as written: they are read from README.md here (not
copied), so an edit that breaks one fails the suite. A snippet defining ``test_`` functions is
run by pytest as a user's test file; the others run as Python programs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def quickstart_snippets() -> list[str]:
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## Quickstart")
    end = text.index("\n## ", start + 1)
    return [m.group(1) for m in FENCE.finditer(text[start:end])
            if "..." not in m.group(1)]  # placeholders (`...`) are shapes, not programs


SNIPPETS = quickstart_snippets()


def test_the_quickstart_has_runnable_snippets():
    assert any("def test_" in s for s in SNIPPETS)
    assert any("run_in_thread" in s for s in SNIPPETS)
    assert any("open_emulator" in s for s in SNIPPETS)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.splitlines()[0][:40] for s in SNIPPETS])
def test_quickstart_snippet_runs(snippet, tmp_path):
    if "def test_" in snippet:
        path = tmp_path / "test_readme_snippet.py"
        path.write_text("import pytest\n" + snippet)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)]
    else:
        path = tmp_path / "snippet.py"
        path.write_text(snippet)
        cmd = [sys.executable, str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
