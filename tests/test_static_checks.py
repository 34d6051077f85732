"""Static checks in make test: mypy --strict on the public API and ruff over the tree, both
configured in pyproject.toml ([tool.mypy] files, [tool.ruff.lint] rules)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *cmd], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def test_mypy_strict_on_the_public_api() -> None:
    result = run("mypy")
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]


def test_ruff() -> None:
    result = run("ruff", "check", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
