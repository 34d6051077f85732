"""The how-to guides' Time, Group operations and Timeline-and-waiters examples run as written
(taken from the pages, not copied here), with the outputs their comments promise. The pages mark
these blocks not-run for tests/docs/test_examples.py, which would only check the exit code."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
CLOCK = "how-to/control-the-clock.md"
TIMELINE = "how-to/timeline-and-waiters.md"


def section(page: str, heading: str) -> str:
    text = (DOCS / page).read_text(encoding="utf-8")
    assert f"\n{heading}\n" in text, f"docs/{page} lost its {heading!r} section"
    level = heading.split(" ", 1)[0]
    return re.split(rf"^#{{1,{len(level)}}} ", text.split(f"\n{heading}\n", 1)[1], maxsplit=1,
                    flags=re.M)[0]


def example(page: str, heading: str, containing: str) -> str:
    blocks = [b for b in re.findall(r"^```python\n(.*?)^```", section(page, heading),
                                    flags=re.S | re.M) if containing in b]
    assert len(blocks) == 1, f"{heading} of docs/{page}: one Python example with {containing!r}"
    return blocks[0]


def run(page: str, heading: str, containing: str) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example(page, heading, containing), str(DOCS / page), "exec"),
             {"__name__": "docs_example"})
    return out.getvalue().splitlines()


def test_time_example():
    assert run(CLOCK, "## Expire a crashed consumer's session now",
               "from confluent_kafka import Consumer") == [
        "True", "[True]", "heartbeat expiration", "a {'orders': [0, 1, 2, 3]}"]


def test_group_operations_example():
    lines = run(TIMELINE, "## Group operations", "set_offsets")
    assert lines[:3] == ["orders 0 2 5 3", "Stable 1 range", "['orders'] {'orders': [0, 1]}"]
    assert lines[3].startswith("404 group 'billing' has no member")


def test_timeline_and_waiters_example():
    lines = run(TIMELINE, "## Timeline and waiters", 'api="JoinGroup"')
    joins = [line.split() for line in lines if " JoinGroup " in line]
    assert [j[3] for j in joins] == ["79", "0"] and int(joins[0][0]) < int(joins[1][0])
    assert "CompletingRebalance -> Stable" in lines
    assert "MemberRemoved" in lines[-1]


@pytest.mark.parametrize("page", [CLOCK, TIMELINE])
def test_the_pages_are_in_the_site_navigation(page):
    # the guides moved out of the README (#41): a page the navigation forgot is not found
    mkdocs = DOCS.parent / "mkdocs.yml"
    if not mkdocs.exists():
        pytest.skip("no mkdocs.yml yet")
    assert page in mkdocs.read_text(encoding="utf-8")
