"""docs/reference/control-operations.md: every control operation, from the OpenAPI document.

The page reads the same document the endpoint serves at /openapi.json (``control/openapi.py``,
built from the operations table without the version string), so an operation, a parameter or a
result key cannot be added without the page changing. Each operation gets its parameters, its
result (a link to the result type, whose keys are listed at the end) and a request for curl,
Python (the fixture's handle method, found through the ops function it runs, and httpx) and
Node (fetch). The examples of ``RUNNABLE`` operations run as they are in make test (the
docs-example runner starts ``kafka-emu serve`` for them); the others are marked not-run: their
shape is generated, and they need a group or a topic the page does not set up.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

from ..control.openapi import openapi
from ..control.operations import all_operations, operation_of
from .common import anchor, cell, code, header, table

CONTROL = "http://127.0.0.1:9093"
TOKEN_ENV = "KAFKA_EMU_CONTROL_TOKEN"
# the operations whose examples run as they are (they need no group, topic or rule first)
RUNNABLE = ("clock", "advance", "deadlines", "groups", "list_topics")
NOT_RUN = ("<!-- example: not-run (generated shape; needs a group, topic or rule the page does "
           "not create, see the runnable examples of clock, advance, groups) -->")

# example values by parameter name; by JSON type for the rest
_SAMPLES: dict[str, Any] = {
    "group_id": "my-group", "member_id": "member-1", "group_instance_id": "instance-1",
    "topic": "orders", "name": "orders", "partition": 0, "partitions": 3, "node_id": 2, "to": 2,
    "rule_id": 1, "transactional_id": "my-txn", "ms": 1000, "action": "error",
    "error": "NOT_COORDINATOR",
}
# optional parameters an example needs all the same (an error rule names its error)
_EXTRA: dict[str, dict[str, Any]] = {
    "add_fault": {"api": "OffsetCommit", "error": "REBALANCE_IN_PROGRESS"},
}
_BY_TYPE = {"string": "text", "integer": 1, "number": 1.0, "boolean": True, "array": [],
            "object": {}}


def document() -> dict[str, Any]:
    return openapi(all_operations().values())


def handle_methods() -> dict[str, str]:
    """operation name -> the handle method that runs it (``Emulator.<method>``)."""
    from ..testing.handles import _Handle
    from ..testing.methods import handle_method

    found: dict[str, str] = {}
    for attr, value in vars(_Handle).items():
        if not isinstance(value, handle_method):
            continue
        build = value._build
        for module, fn in re.findall(r"\b(?:async_)?op\(\s*(\w+)\.(\w+)", inspect.getsource(build)):
            target = getattr(build.__globals__.get(module), fn, None)
            if target is not None:
                found.setdefault(operation_of(target).name, attr)
    return found


def type_anchor(name: str) -> str:
    """The explicit id of a result type's heading (an operation may share its name: clock)."""
    return f"type-{name.lower()}"


def _type(schema: dict[str, Any]) -> str:
    """A short reading of a JSON Schema: `string`, `list of [Name](#name)`, ..."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{type_anchor(name)})"
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    kind = schema.get("type", "any JSON")
    kinds = kind if isinstance(kind, list) else [kind]
    out = []
    for k in kinds:
        if k == "array":
            out.append(f"list of {_type(schema.get('items', {}))}")
        elif k == "object" and "additionalProperties" in schema and isinstance(
                schema["additionalProperties"], dict):
            out.append(f"object of {_type(schema['additionalProperties'])}")
        else:
            out.append(str(k))
    text = " or ".join(out)
    if "enum" in schema:
        text += ": " + ", ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    return text


def _bounds(schema: dict[str, Any]) -> str:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if lo is None and hi is None:
        return ""
    return f" ({lo if lo is not None else ''}..{hi if hi is not None else ''})"


def _params(op: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], bool]]:
    """(name, where, schema, required) of every parameter: path, query, then body."""
    out = [(p["name"], p["in"], p["schema"], p["required"]) for p in op.get("parameters", ())]
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body:
        required = set(body.get("required", ()))
        out += [(n, "body", s, n in required) for n, s in body["properties"].items()]
    return out


def _sample(name: str, schema: dict[str, Any]) -> Any:
    if name in _SAMPLES:
        return _SAMPLES[name]
    if "enum" in schema:
        return next(v for v in schema["enum"] if v is not None)
    kind = schema.get("type", "string")
    kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
    return _BY_TYPE.get(kind, "text")


def _request(path: str, op: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(path with its placeholders filled, query, body) of the example: required params only,
    and those of ``_EXTRA``."""
    query: dict[str, Any] = {}
    body: dict[str, Any] = {}
    extra = _EXTRA.get(op["operationId"], {})
    for name, where, schema, required in _params(op):
        if where == "path":
            path = path.replace("{" + name + "}", str(_sample(name, schema)))
        elif name in extra:
            (query if where == "query" else body)[name] = extra[name]
        elif required:
            (query if where == "query" else body)[name] = _sample(name, schema)
    return path, query, body


def _query_string(query: dict[str, Any]) -> str:
    return ("?" + "&".join(f"{k}={v}" for k, v in query.items())) if query else ""


def _examples(name: str, method: str, path: str, op: dict[str, Any],
              handle: str | None) -> list[str]:
    url_path, query, body = _request(path, op)
    url = f"{CONTROL}{url_path}{_query_string(query)}"
    runnable = name in RUNNABLE
    marker = "<!-- example: serve -->" if runnable else NOT_RUN
    curl = f'curl -sf -X {method} -H "Authorization: Bearer ${TOKEN_ENV}"'
    if method != "GET":
        curl += f" -H 'Content-Type: application/json' -d '{json.dumps(body)}'"
    curl += f" {url}"
    lines = ["**curl**", "", marker, "```sh", curl, "```", ""]

    if handle is not None:
        params = inspect.signature(getattr(_handle_class(), handle)).parameters
        args = []
        samples = {n: _sample(n, s) for n, _, s, _ in _params(op)}
        for pname, param in list(params.items())[1:]:
            if param.default is inspect.Parameter.empty and param.kind not in (
                    param.VAR_POSITIONAL, param.VAR_KEYWORD):
                args.append(f"{pname}={samples.get(pname, _SAMPLES.get(pname, 'text'))!r}")
        args += [f"{k}={v!r}" for k, v in _EXTRA.get(name, {}).items()]
        call = f"emu.{handle}({', '.join(args)})"
        lines += ["**Python, the fixture's handle** (`kafka_emu`, or what `run_in_thread()` / "
                  "`open_emulator()` give back; `await` it on an `AsyncEmulator`)", ""]
        if runnable:
            lines += ["```python", "from kafka_emu.testing import run_in_thread", "",
                      "with run_in_thread() as emu:", f"    print({call})", "```", ""]
        else:
            lines += [NOT_RUN, "```python", f"result = {call}", "```", ""]
    else:
        lines += ["**Python, the fixture's handle**: no method of its own; use HTTP (below) "
                  "with the handle's `control_url`.", ""]

    send = "client.get" if method == "GET" else f"client.{method.lower()}"
    if method == "DELETE" and body:
        send_line = f'response = client.request("DELETE", "{url_path}", json={body!r})'
    else:
        arguments = [repr(url_path)]
        if query:
            arguments.append(f"params={query!r}")
        if method != "GET" and method != "DELETE":
            arguments.append(f"json={body!r}")
        send_line = f"response = {send}({', '.join(arguments)})"
    lines += ["**Python, httpx**", "", marker, "```python", "import os", "", "import httpx", "",
              f'client = httpx.Client(base_url="{CONTROL}", headers={{',
              f'    "Authorization": f"Bearer {{os.environ[\'{TOKEN_ENV}\']}}"}})',
              send_line, "response.raise_for_status()", 'print(response.json()["result"])',
              "```", ""]

    options = [f'method: "{method}"',
               f"headers: {{Authorization: `Bearer ${{process.env.{TOKEN_ENV}}}`"
               + (', "Content-Type": "application/json"' if method != "GET" else "") + "}"]
    if method != "GET":
        options.append(f"body: JSON.stringify({json.dumps(body)})")
    lines += ["**Node, fetch**", "", marker, "```js",
              f'fetch("{url}", {{{", ".join(options)}}})',
              "  .then((response) => {",
              "    if (!response.ok) throw new Error(`HTTP ${response.status}`);",
              "    return response.json();",
              "  })",
              "  .then((body) => console.log(body.result));", "```", ""]
    return lines


def _handle_class() -> type:
    from ..testing.handles import Emulator
    return Emulator


def _operation_section(name: str, method: str, path: str, op: dict[str, Any],
                       handle: str | None) -> list[str]:
    lines = [f"### {name}", "", f"`{method} {path}`" + (
        f" -- `kafka-emu ctl {name.replace('_', '-')}`"), "", cell(op["summary"]), ""]
    if op.get("description"):
        lines += [op["description"], ""]
    params = _params(op)
    if params:
        rows = []
        for pname, where, schema, required in params:
            default = json.dumps(schema["default"]) if "default" in schema else ""
            rows.append([code(pname), where, cell(_type(schema) + _bounds(schema)),
                         "yes" if required else "", code(default),
                         cell(schema.get("description", ""))])
        lines += [table(["parameter", "in", "type", "required", "default", "meaning"], rows), ""]
    else:
        lines += ["No parameters.", ""]
    result = op["responses"]["200"]["content"]["application/json"]["schema"]["properties"]["result"]
    lines += [f"**Result**: {_type(result)}" + (
        "; a wait that times out answers 408." if "408" in op["responses"] else "."), ""]
    if handle is not None:
        lines += [f"**Handle method**: `emu.{handle}(...)`.", ""]
    lines += _examples(name, method, path, op, handle)
    return lines


def _schema_section(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### {name} {{ #{type_anchor(name)} }}", ""]
    if schema.get("description"):
        lines += [schema["description"].replace("``", "`"), ""]
    properties = schema.get("properties", {})
    if properties:
        required = set(schema.get("required", ()))
        rows = [[code(p), cell(_type(s)), "" if p in required else "optional",
                 cell(s.get("description", "").replace("``", "`"))]
                for p, s in properties.items()]
        lines += [table(["key", "type", "", "meaning"], rows), ""]
    else:
        lines += [f"Type: {_type(schema)}.", ""]
    return lines


def operations_in(doc: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(tag, method, path, operation) of every operation but the endpoint's own two."""
    out = []
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            if op["tags"] != ["endpoint"]:
                out.append((op["tags"][0], method.upper(), path, op))
    return sorted(out, key=lambda item: (item[0], item[3]["operationId"]))


def render() -> str:
    doc = document()
    handles = handle_methods()
    operations = operations_in(doc)
    parts = [header(
        "control_operations", "Control operations",
        "Every operation of the control plane: the HTTP endpoint (`kafka-emu serve "
        "--control-port PORT`, or `run_in_thread(control_port=0)`), `kafka-emu ctl OPERATION` "
        "and the methods of the fixture's handle run the same code with the same checks. "
        "Requests carry `Authorization: Bearer TOKEN` (serve prints the token as "
        "`control-token`; `--control-token` or `$KAFKA_EMU_CONTROL_TOKEN` sets it); GET "
        "operations take query parameters, the others a JSON body. Every answer is "
        "`{\"result\": ...}`, or a 4xx `{\"error\": {\"message\": ...}}` that changed nothing. "
        "The endpoint serves this same description as OpenAPI 3.1 at `/openapi.json` (`/health` "
        "needs no token)."),
        "The examples use the control endpoint at `127.0.0.1:9093` and the token in "
        f"`${TOKEN_ENV}`. Those of {', '.join(f'`{n}`' for n in RUNNABLE)} run as they are in "
        "make test; the others show the generated shape of the request.", ""]
    parts += ["## Operations", ""]
    rows = [[f"[{op['operationId']}](#{anchor(op['operationId'])})", tag,
             f"`{method} {path}`", cell(op["summary"])] for tag, method, path, op in operations]
    parts += [table(["operation", "family", "request", "what it does"], rows), ""]
    current = None
    for tag, method, path, op in operations:
        if tag != current:
            parts += [f"## {tag.capitalize()} operations", ""]
            current = tag
        parts += _operation_section(op["operationId"], method, path, op,
                                    handles.get(op["operationId"]))
    parts += ["## Result types", "",
              "The keys of each result, as the OpenAPI document's `components/schemas` declares "
              "them (a result never has a key that is not listed).", ""]
    for name, schema in doc["components"]["schemas"].items():
        parts += _schema_section(name, schema)
    return "\n".join(parts).rstrip("\n") + "\n"
