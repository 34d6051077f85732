"""The one codec: ``encode``, ``decode`` and ``read_from`` for every message and version.

They run the plans ``codegen.py`` compiles from the declarations (cached per class and version)
and turn whatever goes wrong into one ``EncodeError`` or ``DecodeError`` naming the message, the
version, the offset and, where it can be told, the field. Nothing here knows any particular
message.
"""

from __future__ import annotations

import struct
from typing import Any

from . import primitives as p
from .codegen import Plan, plan_for
from .errors import DecodeError, EncodeError
from .generated_source import LINE_FIELDS, overrun

__all__ = ["DECODE_FAILURES", "Plan", "decode", "encode", "encode_into", "plan_for", "read_from",
           "top_plan"]

# Generated read code does not test the remaining length before fixed-width reads: reading
# past the end raises struct.error (unpack_from) or IndexError (buf[pos]), turned into
# DecodeError here. Slices (which would silently come out short) and array counts are checked.
_DECODE_FAILURES = DECODE_FAILURES = (ValueError, TypeError, OverflowError, MemoryError,
                                      RecursionError, struct.error, IndexError)
_ENCODE_FAILURES = (ValueError, TypeError, AttributeError, OverflowError, struct.error)


def _failing_field(exc: BaseException) -> tuple[str | None, str | None]:
    """(generated function name, field) of the innermost generated frame in a traceback."""
    found = (None, None)
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        table = LINE_FIELDS.get(filename)
        if table is not None and 0 < tb.tb_lineno <= len(table):
            found = (filename[len("<kafka_emu.codec "):].rsplit(" #", 1)[0],
                     table[tb.tb_lineno - 1])
        tb = tb.tb_next
    return found


def _encode_error(cls: type, version: int, obj: Any, exc: Exception) -> EncodeError:
    where, field = _failing_field(exc)
    text = f"{type(exc).__name__}: {exc}"
    if field is not None:
        if "NoneType" in str(exc):
            # a None where the version forbids null shows up as a failed .encode() or len()
            text = f"null where the version forbids null ({text})"
        return EncodeError(f"{where}.{field}: {text}")
    return EncodeError(f"{cls.__name__} v{version}: {text}")


# The plans of top-level messages, by class then version: two dict subscripts are the
# cheapest lookup on the hot path (a (class, version) tuple key costs measurably more).
_TOP: dict[type, dict[int, Plan]] = {}


def top_plan(cls: type, version: int) -> Plan:
    """The plan of a declared message (``@message``) at one of its valid versions."""
    try:
        return _TOP[cls][version]
    except KeyError:
        pass
    info = cls.__kafka__
    if version not in info.valid:
        raise EncodeError(f"{cls.__name__} has no version {version} (valid {info.valid})")
    plan = plan_for(cls, version, version in info.flexible)
    _TOP.setdefault(cls, {})[version] = plan
    return plan


def encode(msg: Any, version: int) -> bytes:
    """The body bytes of a declared message at ``version``."""
    out = bytearray()
    encode_into(out, msg, version)
    return bytes(out)


def encode_into(out: bytearray, msg: Any, version: int) -> None:
    """Append the body of a declared message at ``version`` to ``out``."""
    try:
        write = _TOP[type(msg)][version].write
    except KeyError:
        write = top_plan(type(msg), version).write
    try:
        write(out, msg)
    except EncodeError:
        raise
    except _ENCODE_FAILURES as exc:
        raise _encode_error(type(msg), version, msg, exc) from None


def _read_plan(cls: type, version: int, offset: int) -> Plan:
    try:
        return top_plan(cls, version)
    except EncodeError:
        raise DecodeError(f"unsupported version (valid {cls.__kafka__.valid})", offset=offset,
                          api=cls.__name__, version=version) from None


def _decode_error(cls: type, version: int, exc: Exception, offset: int,
                  end: int) -> DecodeError:
    if isinstance(exc, UnicodeDecodeError):
        reason = f"invalid UTF-8 ({exc.reason})"
    elif isinstance(exc, (IndexError, struct.error)):
        reason, offset = "truncated: the data ends inside a field", end
    else:
        reason = f"{type(exc).__name__}: {exc}"
    _, field = _failing_field(exc)
    if field is not None:
        reason = f"{field}: {reason}"
    return DecodeError(reason, offset=offset, api=cls.__name__, version=version)


def decode(cls: type, version: int, data: bytes, *, allow_trailing: bool = False) -> Any:
    """Parse a whole body; anything malformed raises DecodeError naming api, version, offset."""
    try:
        plan = _TOP[cls][version]
    except KeyError:
        plan = _read_plan(cls, version, 0)
    if type(data) is not bytes:
        data = bytes(data)
    try:
        if not allow_trailing:
            return plan.read_all(data)
        msg, pos = plan.read_at(data, 0, len(data))
        if pos > len(data):
            raise overrun(pos, len(data))
        return msg
    except DecodeError as exc:
        raise exc.located(cls.__name__, version) from None
    except _DECODE_FAILURES as exc:
        raise _decode_error(cls, version, exc, 0, len(data)) from None


def read_from(cls: type, version: int, r: p.Reader) -> Any:
    """Parse one message from a reader positioned at its start (headers use this)."""
    plan = _read_plan(cls, version, r.pos)
    start = r.pos
    try:
        return plan.read(r)
    except DecodeError as exc:
        raise exc.located(cls.__name__, version) from None
    except _DECODE_FAILURES as exc:
        raise _decode_error(cls, version, exc, start, r.end) from None
