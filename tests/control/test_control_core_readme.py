"""The README's Time, Group operations and Timeline-and-waiters examples run as written (taken
from the README, not copied here), with the outputs their comments promise."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def example(heading: str) -> str:
    text = README.read_text(encoding="utf-8")
    assert f"\n{heading}\n" in text, f"README lost its {heading!r} section"
    section = re.split(r"^#{2,3} ", text.split(f"\n{heading}\n", 1)[1], maxsplit=1, flags=re.M)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, f"{heading} should have exactly one Python example"
    return blocks[0]


def run(heading: str) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example(heading), str(README), "exec"), {"__name__": "readme_example"})
    return out.getvalue().splitlines()


def test_time_example():
    assert run("### Time") == ["True", "[True]", "heartbeat expiration",
                               "a {'orders': [0, 1, 2, 3]}"]


def test_group_operations_example():
    lines = run("### Group operations")
    assert lines[:3] == ["orders 0 2 5 3", "Stable 1 range", "['orders'] {'orders': [0, 1]}"]
    assert lines[3].startswith("404 group 'billing' has no member")


def test_timeline_and_waiters_example():
    lines = run("### Timeline and waiters")
    joins = [line.split() for line in lines if " JoinGroup " in line]
    assert [j[3] for j in joins] == ["79", "0"] and int(joins[0][0]) < int(joins[1][0])
    assert "CompletingRebalance -> Stable" in lines
    assert "MemberRemoved" in lines[-1]


@pytest.mark.parametrize("heading", ["### Time", "### Group operations",
                                     "### Timeline and waiters"])
def test_each_example_is_under_its_heading_in_controlling_the_emulator(heading):
    text = README.read_text(encoding="utf-8")
    control = text.split("\n## Controlling the emulator\n", 1)[1].split("\n## ", 1)[0]
    assert f"\n{heading}\n" in control
