"""The OpenAPI 3.1 document of the control endpoint, derived from the operations table.

Theory of operation. Each operation's params class is an attrs class whose field types are what
``operations.parse_params`` accepts; ``json_schema`` turns those same types into JSON Schema
(OpenAPI 3.1 uses JSON Schema 2020-12 as is), so the document cannot drift from what the server
checks. Placeholders in an operation's path are path parameters; the other fields are query
parameters of a GET, and the properties of the JSON body of a POST or DELETE.

Each operation's answer ``{"result": ...}`` is described by ``result_schema`` from the result
type the operation declares (``Operation.result``, the TypedDicts of ``control/results.py``):
every TypedDict becomes a named schema under ``components/schemas`` with its required keys and
no others, so a result that grows a key without its declaration fails the schemathesis test.

``kafka-emu ctl`` reads this document (fetched from the server it talks to) to build its
subcommands, so the few ``x-kafka-emu-*`` extensions below carry what a CLI needs beyond plain
OpenAPI (the operation's family, and whether a field's type is free-form JSON).
"""

from __future__ import annotations

import enum
import re
import types
import typing
from collections.abc import Iterable
from typing import Any

import attrs

from .operations import Operation, _hints
from .results import JsonSchema

OPENAPI_VERSION = "3.1.0"
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}


def path_params(op: Operation) -> list[str]:
    """The names of ``op.path``'s placeholders, in order."""
    return _PLACEHOLDER.findall(op.path)


def json_schema(tp: Any) -> dict[str, Any]:
    """JSON Schema for a params field type, as ``parse_params`` reads it."""
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        options = [json_schema(a) for a in args if a is not type(None)]
        nullable = type(None) in args
        if all(set(o) == {"type"} and isinstance(o["type"], str) for o in options):
            kinds = [o["type"] for o in options] + (["null"] if nullable else [])
            return {"type": kinds[0] if len(kinds) == 1 else kinds}
        return {"anyOf": options + ([{"type": "null"}] if nullable else [])}
    if origin is typing.Literal:
        kinds = sorted({_SCALARS.get(type(a), "null" if a is None else "string") for a in args})
        return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": list(args)}
    if origin in (tuple, list) or tp in (tuple, list):
        element = args[0] if args and args[0] is not Ellipsis else Any
        return {"type": "array", "items": json_schema(element)}
    if origin is dict or tp is dict:
        return {"type": "object"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"type": "string", "enum": [m.name for m in tp]}
    return {}  # Any (or a type parse_params passes through): any JSON value


def result_schema(tp: Any, components: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema for a declared result type; each TypedDict is added to ``components`` (by
    its class name) and referred to."""
    if typing.get_origin(tp) is typing.Annotated:
        for meta in getattr(tp, "__metadata__", ()):
            if isinstance(meta, JsonSchema):
                return dict(meta.schema)
        tp = typing.get_args(tp)[0]
    if tp is type(None) or tp is None:
        return {"type": "null"}
    if typing.is_typeddict(tp):
        name = tp.__name__
        if name not in components:
            components[name] = {}  # claimed first: a TypedDict may refer to itself
            hints = typing.get_type_hints(tp, include_extras=True)
            schema: dict[str, Any] = {
                "type": "object",
                "properties": {key: result_schema(hint, components) for key, hint in hints.items()},
                "required": [key for key in hints if key in tp.__required_keys__],
                "additionalProperties": False,
            }
            if _prose(tp):
                schema["description"] = _prose(tp)
            components[name] = schema
        return {"$ref": f"#/components/schemas/{name}"}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        options = [result_schema(a, components) for a in args]
        if all(set(o) == {"type"} and isinstance(o["type"], str) for o in options):
            return {"type": [o["type"] for o in options]}
        return {"anyOf": options}
    if origin in (list, tuple):
        element = args[0] if args and args[0] is not Ellipsis else Any
        return {"type": "array", "items": result_schema(element, components)}
    if origin is dict:
        values = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": result_schema(values, components)}
    return json_schema(tp)  # scalars, Literal, Any


def _json_default(value: Any) -> tuple[bool, Any]:
    if value is None or isinstance(value, (str, int, float, bool)):
        return True, value
    if isinstance(value, (tuple, list)):
        items = [_json_default(v) for v in value]
        return all(ok for ok, _ in items), [v for _, v in items]
    return False, None


def _field_schema(field: attrs.Attribute, tp: Any) -> dict[str, Any]:
    schema = json_schema(tp)
    doc = field.metadata.get("doc") or field.metadata.get("description")
    if doc:
        schema["description"] = " ".join(str(doc).split())
    for bound in ("minimum", "maximum"):  # operations.bounded: what parse_params enforces
        if field.metadata.get(bound) is not None:
            schema[bound] = field.metadata[bound]
    if field.default is not attrs.NOTHING and not isinstance(field.default, attrs.Factory):
        ok, value = _json_default(field.default)
        if ok:
            schema["default"] = value
    return schema


def _prose(obj: Any) -> str:
    """A docstring as one paragraph per blank-line-separated block; "" for none (attrs classes
    without a docstring of their own get a generated signature, which says nothing)."""
    doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    if not doc or (isinstance(obj, type) and doc.startswith(f"{obj.__name__}(")):
        return ""
    import inspect
    blocks = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(" ".join(block.split()) for block in blocks)


def _family(op: Operation) -> str:
    return getattr(op.run, "__module__", "").rpartition(".")[2] or "control"


def _error_response(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def _operation(op: Operation, components: dict[str, Any]) -> dict[str, Any]:
    hints = _hints(op.params)
    fields = {f.name: f for f in attrs.fields(op.params)}
    in_path = path_params(op)
    parameters = []
    for name in in_path:
        parameters.append({"name": name, "in": "path", "required": True,
                           "schema": _field_schema(fields[name], hints.get(name, Any))})
    rest = {n: f for n, f in fields.items() if n not in in_path}
    required = [n for n, f in rest.items() if f.default is attrs.NOTHING]
    doc: dict[str, Any] = {
        "operationId": op.name,
        "summary": op.summary or op.name.replace("_", " "),
        "tags": [_family(op)],
    }
    description = _prose(op.run)
    if description and description != doc["summary"]:
        doc["description"] = description
    if op.method == "GET":
        for name, field in rest.items():
            schema = _field_schema(field, hints.get(name, Any))
            param = {"name": name, "in": "query", "required": name in required, "schema": schema}
            if schema.get("type") == "array":
                param.update(style="form", explode=True)
            parameters.append(param)
    elif rest:
        body: dict[str, Any] = {
            "type": "object", "additionalProperties": False,
            "properties": {n: _field_schema(f, hints.get(n, Any)) for n, f in rest.items()},
        }
        if required:
            body["required"] = required
        doc["requestBody"] = {"required": bool(required),
                              "content": {"application/json": {"schema": body}}}
        if _prose(op.params):
            doc["requestBody"]["description"] = _prose(op.params)
    if parameters:
        doc["parameters"] = parameters
    doc["responses"] = {
        "200": {"description": "the operation's result",
                "content": {"application/json": {"schema": {
                    "type": "object", "required": ["result"],
                    "properties": {"result": result_schema(op.result, components)}}}}},
        "4XX": _error_response("refused, nothing was changed: 400 bad input, 401 no or a "
                               "wrong token, 403 a request from a web page (Origin), 404 an "
                               "unknown group, member, rule, ..., 405 another method, 408 a "
                               "wait that timed out, 409 a conflict with the emulator's state, "
                               "415 a body that is not application/json, 421 a Host that is "
                               "not the endpoint's address"),
        "500": _error_response("a bug in kafka-emu (recorded as an unexpected error)"),
    }
    if op.is_async:  # waiters
        doc["responses"]["408"] = _error_response("the wait timed out; nothing was changed")
    return doc


def openapi(operations: Iterable[Operation], *, version: str = "") -> dict[str, Any]:
    """The OpenAPI 3.1 document describing ``operations`` plus /health and /openapi.json."""
    paths: dict[str, dict[str, Any]] = {
        "/health": {"get": {"operationId": "health", "summary": "Whether the endpoint is up",
                            "tags": ["endpoint"], "security": [],  # the one open route
                            "responses": {"200": {"description": "up", "content": {
                                "application/json": {"schema": {"type": "object"}}}}}}},
        "/openapi.json": {"get": {"operationId": "openapi", "summary": "This document",
                                  "tags": ["endpoint"],
                                  "responses": {"200": {"description": "OpenAPI 3.1", "content": {
                                      "application/json": {"schema": {"type": "object"}}}}}}},
    }
    results: dict[str, Any] = {}
    for op in sorted(operations, key=lambda o: o.name):
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, results)
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": "kafka-emu control", "version": version or "0",
                 "description": "Time, faults and group operations of a running kafka-emu. "
                                "Every operation answers {\"result\": ...} or, on bad input, "
                                "a 4xx {\"error\": {...}} and changes nothing."},
        "paths": paths,
        "security": [{"token": []}],
        "components": {
            "securitySchemes": {"token": {
                "type": "http", "scheme": "bearer",
                "description": "the emulator's control token (kafka-emu serve prints it as "
                               "control-token)"}},
            "schemas": {
                **dict(sorted(results.items())),
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {
                    "type": "object", "required": ["message"],
                    "properties": {"message": {"type": "string"},
                                   "operation": {"type": ["string", "null"]}}}}},
            }},
    }
