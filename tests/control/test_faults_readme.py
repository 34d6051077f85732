"""The README's fault example runs as written (taken from the README, not copied here)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def faults_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("### Faults", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    # the first is the whole runnable example; later ones (logins) are fragments of a test
    assert blocks and "run_in_thread" in blocks[0], "the Faults section opens with its example"
    return blocks[0]


def test_readme_fault_example_runs():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(faults_example(), str(README), "exec"), {"__name__": "readme_example"})
    printed = out.getvalue()
    assert "first commit: REBALANCE_IN_PROGRESS" in printed
    assert "'fired': 1" in printed and "'matched': 1" in printed
