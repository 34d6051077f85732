"""docs/reference/cli.md: every `kafka-emu` command and flag, from the argparse parsers.

The page walks ``cli.build_parser()`` (which gathers every command module's ``add_commands``)
and, for ``ctl``, the per-operation parsers ``kafka-emu ctl`` builds from the OpenAPI document
(the local one, as ``ctl list`` without a server does). Defaults that read the environment
(``$KAFKA_EMU_CONTROL_TOKEN``, ``$KAFKA_EMU_CONTROL``) are taken with those variables unset, so the
page is the same wherever it is generated; their help says which variable sets them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator

from .common import cell, code, header, table

_ENVIRONMENT = ("KAFKA_EMU_CONTROL_TOKEN", "KAFKA_EMU_CONTROL")


@contextlib.contextmanager
def _clean_environment() -> Iterator[None]:
    saved = {name: os.environ.pop(name) for name in _ENVIRONMENT if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help_of(parser: argparse.ArgumentParser, name: str) -> str:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.dest == name:
                    return choice.help or ""
    return ""


def _flag(action: argparse.Action) -> str:
    if action.option_strings:
        names = ", ".join(action.option_strings)
        if action.nargs == 0:
            return names
        metavar = action.metavar or (action.dest.upper() if not action.choices else
                                     "{" + ",".join(map(str, action.choices)) + "}")
        return f"{names} {metavar if isinstance(metavar, str) else ' '.join(metavar)}"
    return str(action.metavar or action.dest)


def _default(action: argparse.Action) -> str:
    value = action.default
    if value in (None, argparse.SUPPRESS, False, [], ()) or action.nargs == 0:
        return ""
    if "default" in (action.help or ""):  # the help words it (a value after its type's
        return ""                         # conversion, e.g. seconds for an "ms" flag, would not)
    return code(value)


def _rows(parser: argparse.ArgumentParser) -> list[list[str]]:
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if isinstance(action, argparse._VersionAction):
            rows.append([code(_flag(action)), "", "print the version and exit"])
            continue
        text = action.help or ""
        if action.required and action.option_strings:
            text = f"{text} (required)".strip()
        if getattr(action, "container", None) is not None and _group_of(parser, action):
            text = f"{text} ({_group_of(parser, action)})".strip()
        rows.append([code(_flag(action)), _default(action), cell(text)])
    return rows


def _group_of(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    for group in parser._mutually_exclusive_groups:
        if action in group._group_actions:
            others = [a.option_strings[0] for a in group._group_actions
                      if a is not action and a.option_strings]
            return "not with " + ", ".join(others) if others else ""
    return ""


def _section(prog: str, parser: argparse.ArgumentParser, level: int, help_text: str) -> list[str]:
    lines = [f"{'#' * level} {prog}", ""]
    description = parser.description or help_text
    if description:
        lines += [cell(description), ""]
    rows = _rows(parser)
    if rows:
        lines += [table(["flag", "default", "meaning"], rows), ""]
    if parser.epilog:
        lines += [cell(parser.epilog), ""]
    return lines


def _ctl_operations(ctl: argparse.ArgumentParser) -> list[str]:
    from ..control import cli as control_cli

    operations = control_cli._operations(control_cli._local_document())
    lines = ["### kafka-emu ctl OPERATION", "",
             "Each control operation is a subcommand of `ctl`, its parameters flags "
             "(underscores become dashes); `kafka-emu ctl list` lists them and `kafka-emu ctl "
             "OPERATION --help` shows one's flags. What each operation does and returns: "
             "[Control operations](control-operations.md).", ""]
    for name in sorted(operations):
        parser = control_cli._operation_parser(ctl, name, operations[name])
        about = (f"[{name}](control-operations.md#{name})" if operations[name]["tag"] != "endpoint"
                 else cell(operations[name]["summary"]))
        lines += [f"#### {parser.prog}", "", about, ""]
        lines += [table(["flag", "default", "meaning"], _rows(parser)), ""]
    return lines


def render() -> str:
    from ..cli import build_parser

    with _clean_environment():
        parser = build_parser()
        commands = _subparsers(parser)
        parts = [header(
            "cli_page", "CLI",
            "The `kafka-emu` command (also `python -m kafka_emu`): every command and flag, as "
            "the parsers declare them. A bad flag or value is one line on stderr and exit code "
            "2; `kafka-emu COMMAND --help` prints the same."),
            "## kafka-emu", "", table(["flag", "default", "meaning"], _rows(parser)), "",
            table(["command", "what it does"],
                  [[f"[{code(name)}](#kafka-emu-{name})", cell(_help_of(parser, name))]
                   for name in commands]), ""]
        for name, sub in commands.items():
            parts += _section(f"kafka-emu {name}", sub, 2, _help_of(parser, name))
            if name == "ctl":
                parts += _ctl_operations(sub)
    return "\n".join(parts).rstrip("\n") + "\n"
