"""``kafka-emu groups`` and ``kafka-emu versions``: admin tools for any Kafka-compatible broker.

    kafka-emu groups --bootstrap-server HOST:PORT --list [--state [STATE ...]]
    kafka-emu groups --bootstrap-server HOST:PORT --describe --group G [--group G2 ...]
    kafka-emu versions --bootstrap-server HOST:PORT

Exit codes: 0 done; 1 the broker could not be reached or refused (one line on stderr, as is a
group that does not exist); 2 a bad flag (one line, from the parser).
"""

from __future__ import annotations

import argparse
import sys
from functools import partial

from ..errors import ErrorCode
from . import format as fmt
from .client import DEFAULT_TIMEOUT, AdminClient, AdminError, parse_bootstrap
from .model import GroupDescription, api_rows, canonical_state
from .offsets import group_offsets


def _bootstrap(text: str) -> str:
    try:
        parse_bootstrap(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _states(text: str) -> list[str]:
    # kafka-consumer-groups.sh takes "--state Stable,Empty"; we also take "--state Stable Empty".
    try:
        return [canonical_state(s) for s in text.split(",") if s.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _timeout_ms(text: str) -> float:
    try:
        ms = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid timeout {text!r}") from None
    if ms <= 0:
        raise argparse.ArgumentTypeError("timeout must be positive")
    return ms / 1000


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", required=True, type=_bootstrap,
                        metavar="HOST:PORT", help="the broker to connect to")
    parser.add_argument("--timeout", type=_timeout_ms, default=DEFAULT_TIMEOUT, metavar="MS",
                        help=f"socket and retry timeout in ms (default {DEFAULT_TIMEOUT * 1000:g})")


def add_commands(sub) -> None:
    groups = sub.add_parser("groups", help="list or describe consumer groups")
    _common(groups)
    mode = groups.add_mutually_exclusive_group(required=True)
    mode.add_argument("--list", action="store_true", help="list group ids")
    mode.add_argument("--describe", action="store_true", help="describe groups and members")
    groups.add_argument("--state", nargs="*", type=_states, metavar="STATE",
                        help="with --list: show states; with values, only groups in them")
    groups.add_argument("--group", dest="groups", action="append", default=[],
                        metavar="GROUP", help="with --describe: the group (repeatable)")
    groups.set_defaults(run=partial(run_groups, groups))

    versions = sub.add_parser("versions", help="API versions of a broker vs kafka-emu (KIP-35)")
    _common(versions)
    versions.set_defaults(run=run_versions)


def _error(message: object) -> int:
    print(f"kafka-emu: error: {message}", file=sys.stderr)
    return 1


def run_groups(parser: argparse.ArgumentParser, args) -> int:
    if args.list and args.groups:
        parser.error("--group goes with --describe, not --list")
    if args.describe and args.state is not None:
        parser.error("--state goes with --list, not --describe")
    if args.describe and not args.groups:
        parser.error("--describe needs --group")
    try:
        with AdminClient(args.bootstrap_server, timeout=args.timeout) as client:
            if args.list:
                return _list(client, args.state)
            return _describe(client, args.groups)
    except AdminError as exc:
        return _error(exc)


def _list(client: AdminClient, state_args: list[list[str]] | None) -> int:
    if state_args is None:
        _print(fmt.group_ids(client.list_groups()))
        return 0
    states = [s for chunk in state_args for s in chunk]
    _print(fmt.group_states(client.list_groups(states=states)))
    return 0


def _describe(client: AdminClient, group_ids: list[str]) -> int:
    status, first = 0, True
    for group in client.describe_groups(group_ids):
        if not group.exists:
            status = _error(_missing(group))
            continue
        if not first:
            print()
        first = False
        _print(fmt.description(group, group_offsets(client, group)))
    return status


def _missing(group: GroupDescription) -> str:
    if group.error_code in (0, ErrorCode.GROUP_ID_NOT_FOUND):
        return f"consumer group {group.group_id!r} does not exist"
    try:
        name = ErrorCode(group.error_code).name
    except ValueError:
        name = f"error {group.error_code}"
    return f"group {group.group_id!r}: {name}" + (f" ({group.error_message})"
                                                 if group.error_message else "")


def run_versions(args) -> int:
    try:
        with AdminClient(args.bootstrap_server, timeout=args.timeout) as client:
            conn = client.bootstrap
            rows = api_rows(client.api_versions())
            _print(fmt.versions(conn.address, conn.api_versions_version, rows))
    except AdminError as exc:
        return _error(exc)
    return 0


def _print(lines: list[str]) -> None:
    for line in lines:
        print(line)
