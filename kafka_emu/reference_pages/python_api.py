"""docs/reference/python-api.md: the Python API, from its docstrings (mkdocstrings renders them).

The page is a table of every method of the fixture's handle (read from the class, with the
first line of each docstring, so a new method appears here at once) followed by mkdocstrings
directives (``::: module.Name``) for the runners, the handles, the fixtures, the errors and the
result types; mkdocstrings' Python handler reads the docstrings when the site is built (its
plugin entry is in mkdocs.yml). Directives name each object by the module that defines it
(``kafka_emu.testing`` itself exports lazily, which static analysis does not follow).
"""

from __future__ import annotations

import inspect
import re

from .common import cell, code, header, table

# (heading, directive target, options) in page order
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("run_in_thread", "kafka_emu.testing.thread_runner.run_in_thread", ()),
    ("open_emulator", "kafka_emu.testing.trio_runner.open_emulator", ()),
    ("make_config", "kafka_emu.testing.config.make_config", ()),
    ("Emulator", "kafka_emu.testing.handles.Emulator",
     ("inherited_members: true", "members_order: source")),
    ("AsyncEmulator", "kafka_emu.testing.handles.AsyncEmulator",
     ("inherited_members: false", "members_order: source")),
    ("Errors", "kafka_emu.testing.startup.EmulatorError", ()),
    ("", "kafka_emu.control.operations.ControlError", ()),
    ("", "kafka_emu.control.waiters.WaitTimeout", ()),
)
FIXTURES = ("kafka_emu", "kafka_emu_session", "kafka_emu_shared", "kafka_emu_factory",
            "kafka_emu_trio")
RESULTS_MODULE = "kafka_emu.control.results"


def handle_members() -> list[tuple[str, str, str]]:
    """(name, signature, first docstring line) of every public member of ``Emulator``."""
    from ..testing.handles import Emulator

    out = []
    for name in dir(Emulator):
        if name.startswith("_"):
            continue
        value = inspect.getattr_static(Emulator, name)
        member = getattr(Emulator, name)
        if isinstance(value, property):
            signature = ""
        elif callable(member):
            signature = _parameters(member)
        else:
            continue
        doc = inspect.getdoc(value if isinstance(value, property) else member) or ""
        out.append((name, signature, " ".join(doc.split("\n\n")[0].split())))
    return out


_ATTRIBUTE = re.compile(r"^\s+self\.([a-z]\w*)\s*(?::[^=]*)?=")
_COMMENT = re.compile(r"^\s+#\s?(.*)$")
# what an attribute set in the handle's __init__ without a comment above it is
_ATTRIBUTE_NOTES = {"config": "The `BrokerConfig` it was started with.",
                    "host": "The (first) broker's bound host.",
                    "port": "The (first) broker's bound port."}


def handle_attributes() -> list[tuple[str, str]]:
    """(name, what it is) of each public attribute the handle's ``__init__`` sets: the comment
    above the assignment, else ``_ATTRIBUTE_NOTES``."""
    from ..testing.handles import _Handle

    out, above = [], []
    for line in inspect.getsource(_Handle.__init__).splitlines():
        comment = _COMMENT.match(line)
        if comment:
            above.append(comment.group(1))
            continue
        found = _ATTRIBUTE.match(line)
        if found:
            name = found.group(1)
            text = " ".join(above) or _ATTRIBUTE_NOTES.get(name, "")
            out.append((name, text[:1].upper() + text[1:]))
        above = []
    return out


def _parameters(member: object) -> str:
    """``(a, b=..., *, c=...)``: the parameters' names (the types are in the API below)."""
    try:
        params = list(inspect.signature(member).parameters.values())[1:]  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"
    shown, star = [], False
    for p in params:
        if p.kind is p.KEYWORD_ONLY and not star:
            shown.append("*")
            star = True
        if p.kind is p.VAR_POSITIONAL:
            star = True
            shown.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            shown.append(f"**{p.name}")
        else:
            shown.append(p.name if p.default is p.empty else f"{p.name}=...")
    return f"({', '.join(shown)})"


def _directive(target: str, options: tuple[str, ...]) -> list[str]:
    lines = [f"::: {target}"]
    if options:
        lines.append("    options:")
        lines += [f"      {option}" for option in options]
    return lines + [""]


def render() -> str:
    members = handle_members()
    attributes = handle_attributes()
    parts = [header(
        "python_api", "Python API",
        "`kafka_emu.testing` is the Python API: `run_in_thread()` (any code, any event loop) "
        "and `open_emulator()` (trio) start an emulator in-process and hand back a handle; the "
        "pytest fixtures hand back the same handle. The handle is the whole control plane: "
        "every control operation (time, groups, faults, the timeline and its waiters, the "
        "cluster) is a method of it, running the same code as the HTTP endpoint "
        "([Control operations](control-operations.md)). On an `AsyncEmulator` the same methods "
        "are awaited."),
        "## The handle's methods", "",
        f"`Emulator` has {len(members)} public members:", "",
        table(["member", "what it does"],
              [[code(f"{name}{signature}" if signature else name), cell(doc.replace("``", "`"))]
               for name, signature, doc in members]), "",
        "Attributes set when it starts:", "",
        table(["attribute", "what it is"],
              [[code(name), cell(text.replace("``", "`"))] for name, text in attributes]), ""]
    parts += ["The sections below are rendered from the docstrings. A handle method's signature "
              "there is its declaration, `-> Job[X]`: called on an `Emulator` it returns `X`, on "
              "an `AsyncEmulator` an awaitable of `X`.", ""]
    for heading, target, options in SECTIONS:
        if heading:
            parts += [f"## {heading}", ""]
        parts += _directive(target, options)
    parts += ["## pytest fixtures", "",
              "The plugin registers itself when kafka-emu is installed (`pytest11` entry point); "
              "configure it with the `kafka_emu_config` / `kafka_emu_topics` ini options and "
              "`@pytest.mark.kafka_emu(settings={...}, topics={...})`.", ""]
    for name in FIXTURES:
        parts += _directive(f"kafka_emu.testing.pytest_plugin.{name}",
                            ("show_root_heading: true", "heading_level: 3"))
    parts += ["## Result types", "",
              "What the handle's methods and the HTTP operations return: JSON-able dicts, "
              "declared as TypedDicts (the OpenAPI document's result schemas are built from "
              "them).", ""]
    parts += _directive(RESULTS_MODULE, ("show_root_heading: false", "heading_level: 3",
                                         "members_order: source", "show_if_no_docstring: true",
                                         "show_signature: false"))
    return "\n".join(parts).rstrip("\n") + "\n"
