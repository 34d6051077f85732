"""Compiled text for the trace's arrays of flat structs (offsets, partition errors, partitions).

Theory of operation. A row carries such a field as a tuple of tuples (``broker/event_rows.py``);
the generic way to a line is to make each element a dict (``schema._named``) and give the list to
``json.dumps``, about a sixth of an OffsetCommit's formatting in the trace encoder. For a field
whose elements are structs of strings and integers, ``array_formatter`` compiles one function that
writes the same JSON text straight from the tuples in one f-string per element. It is the same
text character for character (the same separators, key order, ASCII escapes); any element it is
not made for (a None, a value of another type, a tuple of another length) raises inside it, and
it then answers with the generic way's text, so the output never differs.
"""

from __future__ import annotations

import json
from typing import Any, Callable

_enc = json.encoder.encode_basestring_ascii


def array_formatter(names: tuple[str, ...] | None, kinds: tuple[str, ...],
                    generic: Callable[[Any], str]) -> Callable[[Any], str] | None:
    """``items -> JSON text`` for an array of structs with fields ``names`` of scalar ``kinds``
    ("string" or "long"), or None if that is not this array's shape; ``generic`` gives the text
    of any array the compiled form does not cover."""
    if not names or len(names) != len(kinds) or not set(kinds) <= {"string", "long"}:
        return None
    if not all(n.isidentifier() and n.isascii() and n == _enc(n)[1:-1] for n in names):
        return None
    values = [f"x{i}" for i in range(len(names))]
    parts = ",".join(f'"{n}":{{enc({x})}}' if k == "string" else f'"{n}":{{{x}:d}}'
                     for n, k, x in zip(names, kinds, values))
    # (str and int exactly, not subclasses: json.dumps writes a bool as true, which format
    # would write as 1; anything else falls back to the generic text)
    checks = " and ".join(f"type({x}) is {'str' if k == 'string' else 'int'}"
                          for k, x in zip(kinds, values))
    element = f"f'{{{{{parts}}}}}'"
    source = (
        "def text(items):\n"
        "    try:\n"
        # (one element, the usual commit's offsets: no list to build and join)
        "        if len(items) == 1:\n"
        f"            ({', '.join(values)},), = items\n"
        f"            if not ({checks}):\n"
        "                return generic(items)\n"
        f"            return '[' + {element} + ']'\n"
        "        out = []\n"
        f"        for {', '.join(values)}, in items:\n"
        f"            if not ({checks}):\n"
        "                return generic(items)\n"
        f"            out.append({element})\n"
        "    except (TypeError, ValueError):\n"
        "        return generic(items)\n"
        "    return '[' + ','.join(out) + ']'\n")
    env: dict[str, Any] = {"enc": _enc, "generic": generic}
    exec(compile(source, f"<trace array {','.join(names)}>", "exec"), env)
    return env["text"]
