"""The fault guide's example runs as written (taken from docs/how-to/inject-faults.md, not copied
here), with the outputs its comments promise; the page marks the block not-run for
tests/docs/test_examples.py, which would only check the exit code."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "inject-faults.md"


def faults_example() -> str:
    blocks = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"),
                        flags=re.S | re.M)
    found = [b for b in blocks if "REBALANCE_IN_PROGRESS" in b and "run_in_thread" in b
             and "consumer.commit" in b]
    assert len(found) == 1, "docs/how-to/inject-faults.md has one commit-fault example"
    return found[0]


def test_the_fault_guides_example_runs():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(faults_example(), str(PAGE), "exec"), {"__name__": "docs_example"})
    printed = out.getvalue()
    assert "first commit: REBALANCE_IN_PROGRESS" in printed
    assert "'fired': 1" in printed and "'matched': 1" in printed
