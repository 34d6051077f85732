"""``kafka-emu ctl``: run control operations on a running kafka-emu over its HTTP endpoint.

    kafka-emu ctl --control HOST:PORT [--control-token TOKEN] list
    kafka-emu ctl --control HOST:PORT [--control-token TOKEN] OPERATION [--param value ...]
    kafka-emu ctl [--control HOST:PORT] OPERATION --help

Theory of operation. The subcommands are not written here: they are built from the OpenAPI
document the server publishes (``GET /openapi.json``), so this CLI drives any kafka-emu version,
including operations newer than itself. Without ``--control`` (nor ``$KAFKA_EMU_CONTROL``) it
describes the operations of the installed kafka-emu (``list`` and ``--help`` work; running one
needs a server). Each parameter is a flag named after it with dashes (``group_id`` is
``--group-id``); list parameters repeat the flag or take commas, booleans are ``--x``/``--no-x``,
free-form values are JSON. The server checks the values, so its error messages are the CLI's.
The endpoint's token (``kafka-emu serve`` prints it as ``control-token``) comes from
``--control-token`` or ``$KAFKA_EMU_CONTROL_TOKEN`` and is sent as ``Authorization: Bearer``.

Output is the operation's result as indented JSON (``-o json``, the default) or compact text
(``-o text``: tables for lists of objects, ``key: value`` lines for objects).

``--http-timeout`` (default 300 s) bounds the wait for an answer; an operation that waits takes
its own ``--timeout``.

Exit codes: 0 done; 1 the endpoint could not be reached or failed (5xx); 2 misuse: an unknown
operation or flag, or input the server refused (4xx) -- one line on stderr in every case.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import socket
import sys
import urllib.error
import urllib.request
from functools import partial
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

ENV_CONTROL = "KAFKA_EMU_CONTROL"
ENV_TOKEN = "KAFKA_EMU_CONTROL_TOKEN"  # as control/access.py (not imported: ctl stays light)
DEFAULT_TIMEOUT_S = 300.0  # above any wait an operation would reasonably be asked for
_METHODS = ("get", "post", "delete", "put", "patch")


class CtlError(Exception):
    """One line for stderr and the exit code that goes with it."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _control(text: str) -> str:
    """``HOST:PORT`` or ``http://HOST:PORT`` as a base URL."""
    url = text if "://" in text else f"http://{text}"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        port = None
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or port is None:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT of the control endpoint, got {text!r}")
    return f"{parts.scheme}://{parts.netloc}"


def _timeout(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid timeout {text!r}") from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError("timeout must be positive")
    return seconds


def add_commands(sub) -> None:
    ctl = sub.add_parser(
        "ctl", help="run a control operation (time, faults, groups) on a running kafka-emu",
        description="Run a control operation on a running kafka-emu over its HTTP endpoint "
                    "(kafka-emu serve --control-port PORT). `ctl list` shows the operations; "
                    "`ctl OPERATION --help` shows one's flags.")
    ctl.add_argument("--control", type=_control, default=os.environ.get(ENV_CONTROL) or None,
                     metavar="HOST:PORT",
                     help=f"the control endpoint (default ${ENV_CONTROL})")
    ctl.add_argument("--control-token", dest="token", default=os.environ.get(ENV_TOKEN) or None,
                     metavar="TOKEN",
                     help=f"the endpoint's token, printed by serve as control-token "
                          f"(default ${ENV_TOKEN})")
    ctl.add_argument("-o", "--output", choices=["json", "text"], default="json",
                     help="indented JSON (default) or compact text")
    # not --timeout: operations that wait have a parameter of that name (after OPERATION)
    ctl.add_argument("--http-timeout", dest="http_timeout", type=_timeout,
                     default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                     help=f"how long to wait for an answer (default {DEFAULT_TIMEOUT_S:g})")
    ctl.add_argument("operation", nargs="?", metavar="OPERATION",
                     help="`list`, or an operation's name (dashes or underscores)")
    ctl.add_argument("args", nargs=argparse.REMAINDER, metavar="...",
                     help="the operation's flags")
    ctl.set_defaults(run=partial(run_ctl, ctl))


# -- the operations, as the OpenAPI document describes them ------------------------------------

def _operations(document: dict) -> dict[str, dict]:
    """operationId -> {method, path, summary, tag, params: [{name, in, required, schema}]}."""
    found = {}
    for path, item in (document.get("paths") or {}).items():
        for method in _METHODS:
            spec = item.get(method)
            if not spec or "operationId" not in spec:
                continue
            params = [{"name": p["name"], "in": p.get("in", "query"),
                       "required": bool(p.get("required")), "schema": p.get("schema") or {}}
                      for p in spec.get("parameters", []) if p.get("in") in ("path", "query")]
            body = (((spec.get("requestBody") or {}).get("content") or {})
                    .get("application/json") or {}).get("schema") or {}
            required = set(body.get("required", []))
            for name, schema in (body.get("properties") or {}).items():
                params.append({"name": name, "in": "body", "required": name in required,
                               "schema": schema})
            found[spec["operationId"]] = {
                "method": method.upper(), "path": path, "summary": spec.get("summary", ""),
                "description": spec.get("description", ""),
                "body": (spec.get("requestBody") or {}).get("description", ""),
                "returns": _returns(document, spec),
                "tag": (spec.get("tags") or [""])[0], "params": params}
    return found


def _returns(document: dict, spec: dict) -> str:
    """"Returns GroupView: {group_id, state, ...}" from the operation's documented result
    (control/results.py on the server's side); "" when the document does not say."""
    answer = ((((spec.get("responses") or {}).get("200") or {}).get("content") or {})
              .get("application/json") or {}).get("schema") or {}
    result = (answer.get("properties") or {}).get("result") or {}
    outline = _outline(document, result)
    return f"Returns {outline}." if outline else ""


def _outline(document: dict, schema: dict) -> str:
    if schema.get("type") == "array":
        inner = _outline(document, schema.get("items") or {})
        return f"a list of {inner}" if inner else "a list"
    ref = schema.get("$ref", "")
    if ref.startswith("#/components/schemas/"):
        name = ref.rpartition("/")[2]
        target = ((document.get("components") or {}).get("schemas") or {}).get(name) or {}
        keys = list(target.get("properties") or {})
        return f"{name}: {{{', '.join(keys)}}}" if keys else name
    kind = schema.get("type")
    return kind if isinstance(kind, str) else ""


def _local_document() -> dict:
    from .openapi import openapi
    from .operations import all_operations
    return openapi(all_operations().values())


def _request(base: str, method: str, path: str, timeout: float, *, token: str | None = None,
             query: str = "", body: bytes | None = None) -> Any:
    url = base + path + (f"?{query}" if query else "")
    request = urllib.request.Request(url, data=body, method=method,
                                     headers={"Accept": "application/json"})
    if body is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            raw = exc.read()
        if exc.code == 401:
            said = ("refused the token given" if token else "needs its token")
            raise CtlError(f"the control endpoint {base} {said}: pass --control-token TOKEN or "
                           f"set ${ENV_TOKEN} (kafka-emu serve prints it as control-token)",
                           2) from None
        try:
            error = json.loads(raw)["error"]
            message = error["message"]
            operation = error.get("operation")
            if operation and not message.startswith(operation):
                message = f"{operation}: {message}"
        except (ValueError, KeyError, TypeError):
            message = f"HTTP {exc.code} {exc.reason}"
        raise CtlError(message, 2 if 400 <= exc.code < 500 else 1) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise CtlError(f"no answer from the control endpoint {base} within {timeout:g} s",
                           1) from None
        reason = getattr(reason, "strerror", None) or reason
        raise CtlError(f"cannot reach the control endpoint {base}: {reason}", 1) from None
    try:
        return json.loads(raw)
    except ValueError:
        raise CtlError(f"{base}{path} did not answer JSON", 1) from None


def _document(args) -> dict:
    if args.control is None:
        return _local_document()
    document = _request(args.control, "GET", "/openapi.json", args.http_timeout,
                        token=args.token)
    if not isinstance(document, dict) or "paths" not in document:
        raise CtlError(f"{args.control}/openapi.json is not an OpenAPI document", 1)
    return document


# -- one operation's flags --------------------------------------------------------------------

def _kinds(schema: dict) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, list):
        return kind
    if kind:
        return [kind]
    return [k for option in schema.get("anyOf", []) for k in _kinds(option)]


def _value(schema: dict, text: str) -> Any:
    """A flag's text as the JSON value the schema asks for; text the server will refuse is
    sent as it is, so the server's message names the problem."""
    kinds = _kinds(schema)
    if not kinds:  # free-form: JSON if it parses, else the text itself
        try:
            return json.loads(text)
        except ValueError:
            return text
    # "27" for a ``str | int`` is the number: text is the last resort
    order = ["integer", "number", "boolean", "object", "string"]
    for kind in sorted(kinds, key=lambda k: order.index(k) if k in order else len(order)):
        try:
            if kind == "integer":
                return int(text)
            if kind == "number":
                return float(text)
            if kind == "boolean" and text.lower() in ("true", "false"):
                return text.lower() == "true"
            if kind == "object":
                value = json.loads(text)
                if isinstance(value, dict):
                    return value
            if kind == "string":
                return text
        except ValueError:
            continue
    return text


def _items(schema: dict, text: str) -> list:
    """The list items one flag of a list parameter holds: a JSON array or object as written
    (``--offsets '{"topic": "t", "partition": 0, "offset": 5}'``), else comma-separated values."""
    if text.lstrip()[:1] in ("[", "{"):
        try:
            value = json.loads(text)
        except ValueError:
            pass
        else:
            return value if isinstance(value, list) else [value]
    return [_value(schema, t) for t in text.split(",") if t]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _operation_parser(parent: argparse.ArgumentParser, name: str, op: dict):
    parser = type(parent)(prog=f"kafka-emu ctl {name.replace('_', '-')}",
                          description=f"{op['description'] or op['summary']} "
                                      f"({op['method']} {op['path']})",
                          epilog=" ".join(filter(None, [op.get("returns"), op["body"]])) or None)
    parser.add_argument("-o", "--output", choices=["json", "text"], default=None,
                        help="indented JSON (default) or compact text")
    for param in op["params"]:
        schema = param["schema"]
        kinds = _kinds(schema)
        notes = [schema.get("description", "")]
        if schema.get("default") is not None:
            notes.append(f"default {json.dumps(schema['default'])}")
        if schema.get("enum"):
            notes.append("one of " + ", ".join(map(str, schema["enum"])))
        help_text = "; ".join(n for n in notes if n) or None
        if param["required"]:
            help_text = f"{help_text} (required)" if help_text else "required"
        # required is checked in _call, after unknown flags: argparse would name the missing
        # flag first and never the misspelt one
        options: dict[str, Any] = {"dest": param["name"], "default": argparse.SUPPRESS,
                                   "help": help_text}
        if kinds == ["boolean"]:
            parser.add_argument(_flag(param["name"]), action=argparse.BooleanOptionalAction,
                                **options)
        elif "array" in kinds:
            parser.add_argument(_flag(param["name"]), action="append", metavar="VALUE[,VALUE]",
                                **options)
        else:
            shown = [k for k in kinds if k != "null"]
            parser.add_argument(_flag(param["name"]), metavar=(shown[0].upper() if len(shown) == 1
                                                               else "VALUE"), **options)
    return parser


def _call(args, parser: argparse.ArgumentParser, name: str, op: dict) -> Any:
    known, extra = parser.parse_known_args(args.args)
    if extra:
        flags = [a.split("=", 1)[0] for a in extra if a.startswith("-")]
        names = [_flag(p["name"]) for p in op["params"]] + ["--output"]
        if flags:
            close = difflib.get_close_matches(flags[0], names, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            parser.error(f"unknown flag {flags[0]} for {name.replace('_', '-')}{hint}; its "
                         f"flags: {', '.join(names[:-1]) or 'none'}")
        parser.error(f"unexpected argument(s) {' '.join(extra)}: every value follows its flag")
    given = vars(known)
    missing = [_flag(p["name"]) for p in op["params"]
               if p["required"] and p["name"] not in given]
    if missing:
        parser.error(f"{name.replace('_', '-')} needs {', '.join(missing)}")
    output = given.pop("output") or args.output
    path, query, body = op["path"], [], {}
    for param in op["params"]:
        if param["name"] not in given:
            continue
        value = given[param["name"]]
        schema = param["schema"]
        if isinstance(value, list):  # a repeated flag
            items = schema.get("items") or {}
            value = [item for text in value for item in _items(items, text)]
        elif isinstance(value, str):
            value = _value(schema, value)
        if param["in"] == "path":
            path = path.replace("{" + param["name"] + "}", quote(str(value), safe=""))
        elif param["in"] == "query":
            query.extend((param["name"], v) for v in (value if isinstance(value, list) else [value]))
        else:
            body[param["name"]] = value
    encoded = urlencode([(k, json.dumps(v) if not isinstance(v, str) else v) for k, v in query])
    data = json.dumps(body).encode() if op["method"] != "GET" else None
    answer = _request(args.control, op["method"], path, args.http_timeout, token=args.token,
                      query=encoded, body=data)
    return (answer.get("result") if isinstance(answer, dict) and "result" in answer
            else answer), output


# -- output -----------------------------------------------------------------------------------

def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def text(result: Any) -> str:
    """A compact rendering: a table for a list of objects, ``key: value`` lines for an object."""
    if result is None:
        return ""
    if isinstance(result, list):
        if not result:
            return "(none)"
        if all(isinstance(r, dict) for r in result):
            columns: list[str] = []
            for row in result:
                columns.extend(k for k in row if k not in columns)
            rows = [columns] + [[_cell(row.get(c)) for c in columns] for row in result]
            widths = [max(len(r[i]) for r in rows) for i in range(len(columns))]
            return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip()
                             for r in rows)
        return "\n".join(_cell(r) for r in result)
    if isinstance(result, dict):
        return "\n".join(f"{k}: {_cell(v)}" for k, v in result.items())
    return _cell(result)


def _print(result: Any, output: str) -> None:
    rendered = text(result) if output == "text" else json.dumps(result, indent=2)
    if rendered:
        print(rendered)


def _listing(operations: dict[str, dict]) -> list[dict]:
    return [{"operation": name.replace("_", "-"), "method": op["method"], "path": op["path"],
             "summary": op["summary"]}
            for name, op in sorted(operations.items(), key=lambda kv: (kv[1]["tag"], kv[0]))]


def run_ctl(parser: argparse.ArgumentParser, args) -> int:
    if args.operation is None:
        parser.error("name an OPERATION (`kafka-emu ctl list` shows them)")
    wants_help = any(a in ("-h", "--help") for a in args.args)
    if args.control is None and args.operation != "list" and not wants_help:
        parser.error(f"--control HOST:PORT (or ${ENV_CONTROL}) is needed to run an operation")
    try:
        operations = _operations(_document(args))
        if args.operation == "list":
            if args.args:
                parser.error(f"list takes no arguments, got {' '.join(args.args)}")
            _print(_listing(operations), args.output)
            return 0
        name = args.operation.replace("-", "_")
        if name not in operations:
            close = difflib.get_close_matches(name, list(operations), n=1)
            hint = f" (did you mean {close[0].replace('_', '-')}?)" if close else ""
            parser.error(f"unknown operation {args.operation!r}{hint}; `kafka-emu ctl list` "
                         f"shows them")
        op_parser = _operation_parser(parser, name, operations[name])
        result, output = _call(args, op_parser, name, operations[name])
    except CtlError as exc:
        print(f"kafka-emu: error: {exc}", file=sys.stderr)
        return exc.code
    _print(result, output)
    return 0
