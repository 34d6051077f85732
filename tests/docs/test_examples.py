"""Every code example in docs/ runs: each fenced block of docs/**/*.md is extracted and executed,
so a page cannot show an example that no longer works (#41).

The rules (docs/how-to/index.md's "Writing an example" says the same for authors):

- The language after the opening fence decides. ``python``: a block containing ``def test_`` runs
  as a pytest file (``python -m pytest`` on it, in a fresh directory: kafka-emu's fixtures come
  from its pytest plugin); any other python block runs as a program. ``sh``, ``bash``: run by
  ``bash -euo pipefail``. ``console``: the lines starting with ``$ `` run (the rest is the output
  it shows). ``js``, ``mjs``: run by ``node`` as an ES module, where ``import 'kafkajs'``
  resolves to tests/integration/node/node_modules (the repository's pinned Node packages).
  Every block runs with this interpreter's directory first on PATH (``kafka-emu``, ``pytest``),
  in an empty temporary working directory, and fails on a non-zero exit or a timeout.
- Any other language (``text``, ``json``, ``toml``, ``properties``, ...) is output or a fragment
  of configuration and is not run; a fence without a language, or a spelling of a runnable one
  the runner does not take (``py``, ``python3``, ``shell``, ``javascript``, ...), fails the page's
  audit test: name it as one of the above or as a non-runnable language.
- A comment on the line just before the opening fence changes how it runs:
  ``<!-- example: not-run (reason) -->`` skips the block, counted with its reason (a reason is
  required; one that names ``tests/....py`` says which test runs the block instead, and that
  file must exist and name this page, or the file the block includes); ``<!-- example: serve -->`` (or
  ``<!-- example: serve ARGS -->``, extra ``kafka-emu serve`` arguments) first starts
  ``kafka-emu serve --port 0 --control-port 0 ARGS`` and rewrites the block:
  ``127.0.0.1:9093`` / ``localhost:9093`` become the control endpoint, ``127.0.0.1:9092`` /
  ``localhost:9092`` the bootstrap servers, and the environment has ``KAFKA_EMU_CONTROL_TOKEN``,
  ``KAFKA_EMU_CONTROL`` (the control URL) and ``KAFKA_EMU_BOOTSTRAP``. The emulator is stopped
  after the block.
- An ``example:`` comment that is not directly followed by a fence, or that says anything else,
  fails the audit: a marker that silently does nothing would hide a skipped example.
- A line ``--8<-- "examples/file.py"`` inside a block (pymdownx.snippets) stands for that file of
  the repository, in the built page and here: the block runs the file's text.

Tests are ids ``<page>#<index>-<language>`` (index counts every fenced block of the page from 0),
plus one ``audit`` test per page.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
NODE_DIR = ROOT / "tests" / "integration" / "node"
BIN = Path(sys.executable).parent
TIMEOUT_S = 240

RUNNABLE = {"python": "python", "sh": "sh", "bash": "sh", "console": "console",
            "js": "js", "mjs": "js"}
# spellings that look runnable but are not the convention's: the audit asks for the right name
AMBIGUOUS = {"", "py", "python3", "pycon", "pytest", "shell", "zsh", "javascript", "node",
             "ts", "typescript", "cjs"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[^\s`{]*)")
MARKER = re.compile(r"^\s*<!--\s*example:(?P<body>.*?)-->\s*$")
NOT_RUN = re.compile(r"^not-run\s+\((?P<reason>.+)\)$", re.S)
SERVE = re.compile(r"^serve(?P<args>(\s+\S+)*)$")
SNIPPET = re.compile(r'^\s*--8<--\s+"(?P<path>[^"]+)"\s*$')


@dataclass(frozen=True)
class Block:
    page: str           # relative to docs/
    index: int          # among the page's fenced blocks
    line: int           # 1-based line of the opening fence
    lang: str
    code: str
    marker: str | None  # the text of an example: comment just before the fence
    includes: tuple[str, ...] = ()  # files its snippet lines stand for

    @property
    def id(self) -> str:
        return f"{self.page}#{self.index}-{self.lang or 'nolang'}"


def blocks(path: Path, root: Path = DOCS) -> tuple[list[Block], list[str]]:
    """The page's fenced blocks, and the problems of its example markers (stray or unclosed)."""
    page = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    problems: list[str] = []
    used_markers: set[int] = set()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m["indent"]), m["fence"], m["lang"].lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if close and close["fence"][0] == fence[0] and len(close["fence"]) >= len(fence) \
                    and not close["lang"] and lines[i].strip() == close["fence"]:
                break
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        else:
            problems.append(f"line {start + 1}: a fence that is never closed")
        marker = None
        if start > 0 and (mk := MARKER.match(lines[start - 1])):
            marker = mk["body"].strip()
            used_markers.add(start - 1)
        includes = tuple(m["path"] for b in body if (m := SNIPPET.match(b)))
        body = [line for b in body for line in _snippet(b)]
        found.append(Block(page, len(found), start + 1, lang, "\n".join(body) + "\n", marker,
                           includes))
        i += 1
    for n, line in enumerate(lines):
        if MARKER.match(line) and n not in used_markers:
            problems.append(f"line {n + 1}: an example marker not directly before a fence")
    return found, problems


def _snippet(line: str) -> list[str]:
    """A ``--8<-- "path"`` line (pymdownx.snippets, base path the repository) is the file's text,
    as the built page shows it: an example kept in examples/ is shown and run from there."""
    m = SNIPPET.match(line)
    return (ROOT / m["path"]).read_text(encoding="utf-8").splitlines() if m else [line]


PAGES = sorted(DOCS.rglob("*.md")) if DOCS.is_dir() else []
ALL = [b for p in PAGES for b in blocks(p)[0]]


def _kind(block: Block) -> str:
    return RUNNABLE.get(block.lang, "")


def _not_run_reason(block: Block) -> str | None:
    if block.marker and (m := NOT_RUN.match(block.marker)):
        return m["reason"].strip()
    return None


RUN = [b for b in ALL if _kind(b) and _not_run_reason(b) is None]
SKIPPED = [b for b in ALL if _kind(b) and _not_run_reason(b) is not None]


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_audit(page: Path):
    """Each runnable-language block is run or marked not-run with a reason; markers are known,
    sit right before a fence and apply to a runnable block; a test named as running a block
    instead exists and reads this page."""
    found, problems = blocks(page)
    for b in found:
        where = f"line {b.line} ({b.lang or 'no language'})"
        if b.lang in AMBIGUOUS:
            problems.append(f"{where}: name the language python, sh, bash, console, js or mjs "
                            "(run) or text, json, ... (not run)")
        if b.marker is None:
            continue
        if not _kind(b):
            problems.append(f"{where}: an example marker on a block that never runs")
        elif (reason := _not_run_reason(b)) is not None:
            for named in re.findall(r"tests/[\w/.-]+\.py", reason):
                test = ROOT / named
                if not test.is_file():
                    problems.append(f"{where}: the reason names {named}, which does not exist")
                elif not any(name in test.read_text(encoding="utf-8")
                             for name in (b.page, *(Path(i).name for i in b.includes))):
                    problems.append(f"{where}: {named} does not read {b.page}"
                                    + "".join(f" or run {i}" for i in b.includes))
        elif not SERVE.match(b.marker):
            problems.append(f"{where}: unknown example marker {b.marker!r} (not-run (reason) "
                            "or serve [ARGS])")
    assert not problems, f"{page.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_the_docs_have_examples_to_run():
    assert DOCS.is_dir() and RUN, "no runnable example found under docs/"


class Served:
    """`kafka-emu serve --port 0 --control-port 0 ARGS` for one block."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kafka_emu", "serve", "--port", "0", "--control-port", "0",
             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = [self.proc.stdout.readline().strip() for _ in range(3)]
        if not first[1].startswith("control: http://"):
            self.stop()
            pytest.fail(f"kafka-emu serve {' '.join(args)} did not start: {first} "
                        f"{self.proc.stderr.read()[-2000:]}", pytrace=False)
        self.bootstrap = first[0]
        self.control_url = first[1].removeprefix("control: ")
        self.token = first[2].removeprefix("control-token: ")

    def rewrite(self, code: str) -> str:
        control = self.control_url.removeprefix("http://")
        for host in ("127.0.0.1", "localhost"):
            code = code.replace(f"{host}:9093", control).replace(f"{host}:9092", self.bootstrap)
        return code

    def env(self) -> dict[str, str]:
        return {"KAFKA_EMU_CONTROL_TOKEN": self.token, "KAFKA_EMU_CONTROL": self.control_url,
                "KAFKA_EMU_BOOTSTRAP": self.bootstrap}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)


def _command(block: Block, code: str, work: Path) -> list[str]:
    kind = _kind(block)
    if kind == "python":
        if re.search(r"^\s*(async\s+)?def test_", code, re.M):
            (work / "test_example.py").write_text(code)
            return [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p",
                    "no:cacheprovider", "test_example.py"]
        (work / "example.py").write_text(code)
        return [sys.executable, "example.py"]
    if kind == "js":
        # Node resolves a module's imports from node_modules in its own or a parent directory
        (work / "node_modules").symlink_to(NODE_DIR / "node_modules")
        (work / "example.mjs").write_text(code)
        return ["node", "example.mjs"]
    if kind == "console":
        code = "\n".join(line[2:] for line in code.splitlines() if line.startswith("$ ")) + "\n"
    (work / "example.sh").write_text(code)
    return ["bash", "-euo", "pipefail", "example.sh"]


@pytest.mark.parametrize("block", RUN + SKIPPED, ids=[b.id for b in RUN + SKIPPED])
def test_example(block: Block, tmp_path: Path, request: pytest.FixtureRequest):
    reason = _not_run_reason(block)
    if reason is not None:
        pytest.skip(f"not run: {reason}")
    if _kind(block) == "js":  # the repository's pinned Node packages, npm ci on a fresh clone
        request.getfixturevalue("node_modules")
    tool = {"js": "node", "sh": "bash", "console": "bash"}.get(_kind(block))
    if tool and shutil.which(tool) is None:
        pytest.fail(f"{tool} is not on PATH", pytrace=False)
    served = None
    if block.marker and (m := SERVE.match(block.marker)):
        served = Served(m["args"].split())
    try:
        code = served.rewrite(block.code) if served else block.code
        env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                   **(served.env() if served else {}))
        env.pop("PYTEST_ADDOPTS", None)
        cmd = _command(block, code, tmp_path)
        try:
            done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"{block.id} (docs/{block.page} line {block.line}) did not finish in "
                        f"{TIMEOUT_S} s\nstdout: {exc.stdout!r}\nstderr: {exc.stderr!r}",
                        pytrace=False)
    finally:
        if served:
            served.stop()
    assert done.returncode == 0, (
        f"{block.id} (docs/{block.page} line {block.line}) exited {done.returncode}\n"
        f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}")


def test_the_runner_reads_markers_indented_fences_and_fails_a_failing_example(
        tmp_path, request):
    """The runner itself: a marker applies to the fence right after it, a tabbed (indented)
    block loses its indentation, a stray marker is a problem, and a block that exits non-zero
    fails its test (a runner that passed everything would hide every broken example)."""
    text = ("<!-- example: not-run (a reason) -->\n```python\nprint(1)\n```\n\n"
            '=== "tab"\n\n    ```sh\n    exit 3\n    ```\n\n<!-- example: serve -->\n\ntext\n'
            '```python\n--8<-- "examples/test_share_group_redelivery.py"\n```\n')
    page = tmp_path / "page.md"
    page.write_text(text)
    found, problems = blocks(page, root=tmp_path)
    assert [(b.lang, b.marker, b.code) for b in found[:2]] == [
        ("python", "not-run (a reason)", "print(1)\n"), ("sh", None, "exit 3\n")]
    included = (ROOT / "examples" / "test_share_group_redelivery.py").read_text()
    assert found[2].code == included and found[2].includes == (
        "examples/test_share_group_redelivery.py",)
    assert _not_run_reason(found[0]) == "a reason"
    assert problems == ["line 12: an example marker not directly before a fence"]
    with pytest.raises(AssertionError, match="exited 3"):
        test_example(found[1], tmp_path, request)
