"""RequestHandled rows from ``REQUEST_FRAME`` records (``event_rows.py``): the request's frame and
the response's, decoded by the codec that read and wrote them, made into the row by the same
compiled function the request path uses. The trace's encoder process decodes every such record
(``decoded_frames``; it formats the line without the row where it can, trace/frame_lines.py), so
what two frames decode to is kept (a bounded table) by their bytes less the correlation ids: a
member's Heartbeats differ in nothing else. A consuming member's commits and fetches also
differ in their offsets, which the row never reads: where the request's bytes holding such values
were found (frame_spans.py), frames of that shape are kept by their bytes outside those too.

A request whose response carries records (Fetch) is recorded by its request frame and what the
row reads of the response instead (``answer_reader``: the top-level and per-partition errors by
the same compiled walk, and the throttle time), never the records. Such a request names topics by
id, which the row gives by name: the trace writer ships the encoder every topic id it has seen
with its name (``TOPIC_NAMES``, filled by ``learn_topic_names``, in order with the records) whenever
the catalogue changed, and the request path records a request by its frame only while the
catalogue is unchanged since and every id it names is live -- otherwise it makes the row as
before, so the row is the same either way.
"""

from __future__ import annotations

import struct
from typing import Any, Callable

from ..protocol.codec import read_from
from ..protocol.headers import ResponseHeader, decode_request, response_header_version
from ..protocol.primitives import Reader
from ..protocol.schema import fields_of
from .clock import ms_from
from .handlers import HANDLERS
from .event_rows import (_OFFSETS_COMMITTED, _REQUEST_HANDLED, NO_TOPIC_IDS, committed_row,
                         request_row_maker)
from .frame_spans import commit_offset_at, free_spans
from .frame_spans import slicer as frame_slicer
from .request_walk import (_FORGOTTEN, _emit_errors, _names, _struct_arrays, _topic_of,
                           compiled_errors)

# A frame's api key and version as one int (its first four bytes), and its correlation id
_PEEK = struct.Struct(">ii").unpack_from

# (api key and version, request frame after its correlation id, response frame after its) --
# or, for a shape of frame with free spans, (its slicer, the request frame's pieces outside
# them, the response's part) -- -> [row maker, api name, client id, request, response, the
# row's parts (_parts: None until made), what the trace encoder keeps of the lines it formats
# from them (trace/frame_lines.py: None until it formats one), where a one-partition commit's
# offset sits in the frame (commit_row: None until looked for, False where not shown), what
# the encoder keeps of that commit's offsets_committed line (frame_lines.commit_line)]. An
# entry kept by pieces holds the request of the frame it was decoded from: its free fields -- a
# commit's offsets, a fetch's -- are that frame's, not those of a frame that finds it. Read only
# the row of it (and the offset of a commit, from the frame: commit_row).
_DECODED: dict[tuple, list] = {}
_DECODED_LIMIT = 4096
_ERROR_AT = 16  # where error_code, partition_errors, throttle_time_ms sit in a RequestHandled row

# api key and version -> {frame length -> the slicer (frame_spans.slicer) of the free spans last
# found in a frame of that shape}: a frame of a shape here is looked up by its pieces outside
# them. (Two lookups by int, not one by a tuple: frames of an API without free fields, the
# Heartbeats, pay one.) The slicer's identity stands for its spans and shape: an entry is kept
# under it only for a frame whose own free spans they are -- so a frame that finds the entry
# differs from that frame in the free fields alone (frame_spans.py). A frame of the same shape
# with other spans (variable-length fields of other lengths adding up to the same length)
# misses, is decoded, and once its spans are found takes the shape's slicer over.
_SLICERS: dict[int, dict[int, Callable[[bytes], tuple]]] = {}
# a shape (api key and version, length) -> its misses so far; the spans of its slicer; and the
# keys by pieces that missed. Spans take two encodings of the request to find, and a miss is a
# frame not seen before -- for frames whose other values move too (a commit whose metadata
# moves), every frame: looking every time would be work for nothing. So they are looked for on
# the shape's first miss, when a key by pieces missed before (that request came again with its
# free fields moved: another member's commits of the same shape), and now and then
# (_SPANS_EVERY: a layout of the shape that the shape's slicer does not fit). Frames that
# never come again cost a little more than before (looked up by pieces, then whole: about 10%
# for a commit whose metadata moves, bench/callgrind_trace_encoder.py).
_MISSES: dict[tuple[int, int], int] = {}
_SPANS: dict[tuple[int, int], tuple] = {}
_MISSED: set[tuple] = set()
_SPANS_EVERY = 64
_PEEK_API = struct.Struct(">hh").unpack_from  # (api key, version)


def decoded_frames(frame: bytes, answer) -> tuple[list, int, int, int]:
    """What the two frames decode to (kept in ``_DECODED``), and the request's api key, version
    and correlation id."""
    frame = bytes(frame)
    kv, correlation = _PEEK(frame)
    return (decoded_entry(frame, answer, kv), *_PEEK_API(frame), correlation)


def decoded_entry(frame: bytes, answer, kv: int) -> list:
    """``decoded_frames``' entry alone, ``kv`` the frame's api key and version as one int."""
    # (the answer: bytes through marshal, a bytearray in the emulator's process; or a tuple,
    # answer_reader's)
    part = answer if type(answer) is tuple else bytes(answer[8:])
    by_shape = _SLICERS.get(kv)
    cut = by_shape.get(len(frame)) if by_shape is not None else None
    key = (kv, frame[8:], part) if cut is None else (cut, cut(frame), part)
    found = _DECODED.get(key)
    return found if found is not None else keep_decoded(key, frame, answer)


def keep_decoded(cache_key: tuple, frame: bytes, answer) -> list:
    """What two frames not found in ``_DECODED`` by ``cache_key`` (as ``decoded_frames`` makes
    it) decode to, kept there."""
    kv = _PEEK(frame)[0]
    if type(cache_key[0]) is int:  # (looked up whole)
        whole, by_pieces, decoded = cache_key, False, None
    else:  # (by pieces: maybe kept whole, a frame of the shape whose spans were not looked for)
        whole = (kv, frame[8:], cache_key[2])
        by_pieces, decoded = True, _DECODED.get(whole)
    if decoded is None:
        decoded = _decode(*_PEEK_API(frame), frame, answer)
        if len(_DECODED) >= _DECODED_LIMIT:  # (_MISSED: never more, one whole entry each)
            forget_decoded()
    shape = (kv, len(frame))
    misses = _MISSES[shape] = _MISSES.get(shape, 0) + 1
    if misses == 1 or misses % _SPANS_EVERY == 0 or by_pieces and cache_key in _MISSED:
        if _kept_by_spans(decoded, frame, answer, shape, cache_key[2]):
            return decoded
    elif by_pieces:
        _MISSED.add(cache_key)
    _DECODED[whole] = decoded
    return decoded


def _kept_by_spans(decoded: list, frame: bytes, answer, shape: tuple[int, int], part) -> bool:
    """Keep ``decoded`` by the frame's pieces outside its free spans, if they are found (the
    shape's slicer made anew where they are not the spans it had)."""
    key, version = _PEEK_API(frame)
    spans = free_spans(HANDLERS[key].api, version, frame, decoded[2], decoded[3],
                       _same_row(decoded, key, version, answer))
    if not spans:
        return False
    shapes = _SLICERS.setdefault(shape[0], {})
    if spans != _SPANS.get(shape):  # (the same spans: the same slicer, and its entries kept)
        _SPANS[shape], shapes[shape[1]] = spans, frame_slicer(spans)
    slicer = shapes[shape[1]]
    _DECODED[(slicer, slicer(frame), part)] = decoded
    return True


def forget_decoded() -> None:
    """Forget every frame decoded, and the shapes' spans."""
    _DECODED.clear()
    _SLICERS.clear()
    _MISSES.clear()
    _SPANS.clear()
    _MISSED.clear()


def _same_row(decoded: list, key: int, version: int, answer) -> Callable[[Any], bool]:
    """``same_row(request)``: whether ``request`` makes the row of the decoded request (the
    values that do not come from the frames fixed)."""
    make, name, client, q, r = decoded[:5]
    if type(answer) is tuple:
        r, topics = None, SHIPPED_TOPICS
    else:
        topics = NO_TOPIC_IDS

    def row(request: Any) -> tuple:
        return make(request, r, 0.0, topics, 0, 0, "", name, key, version, 0, client, None, None)
    return lambda request: row(request) == row(q)


_INT64 = struct.Struct(">q").unpack_from
_OFFSET_AT = 7  # where a decoded entry keeps where a commit's offset sits (commit_row)


def commit_row(event: tuple) -> tuple:
    """The OffsetsCommitted row of a ``COMMIT_FRAME`` record (event_rows.py)."""
    record = event[1]
    return decoded_commit_row(event, decoded_frames(record[1], record[2])[0])


def decoded_commit_row(event: tuple, decoded: list) -> tuple:
    """``commit_row`` with the record's frames decoded already: the request's group, member,
    generation, topic and partition from its decoded entry, and the offset from the frame
    itself -- an entry found by a frame's pieces holds the offset of the frame it was decoded
    from (frame_spans.py) -- where ``commit_offset_at`` says it sits."""
    _, record, at_ms = event
    frame = record[1]
    offset_at = decoded[_OFFSET_AT]
    if offset_at is None or offset_at is False:
        # the frame's own request: the first commit to find this entry (where its offset sits
        # is found then, once), or every commit where that could not be shown
        key, version = _PEEK_API(frame)
        api = HANDLERS[key].api
        _, own, _ = decode_request(api, version, bytes(frame))
        if offset_at is None:
            decoded[_OFFSET_AT] = commit_offset_at(api, version, bytes(frame), decoded[2],
                                                   own) or False
        return committed_row(own, at_ms)
    q = decoded[3]
    topic = q.topics[0]
    return (_OFFSETS_COMMITTED, at_ms, q.group_id, q.member_id, q.generation_id_or_member_epoch,
            ((topic.name, topic.partitions[0].partition_index, _INT64(frame, offset_at)[0]),))


def frame_row(event: tuple) -> tuple:
    """The RequestHandled row of a ``REQUEST_FRAME`` record."""
    return decoded_row(event, *decoded_frames(event[1], event[2]))


def decoded_row(event: tuple, decoded: list, key: int, version: int, correlation: int) -> tuple:
    """``frame_row`` with the record's frames decoded already (``decoded_frames``)."""
    (_, frame, answer, started, done, at, (connection, peer, software, software_version)) = event
    make, name, client, q, r, parts, _, _, _ = decoded
    latency = (done - started) * 1000
    at_ms = at if type(at) is int else ms_from(at, done)
    if parts:  # (what the row reads of the two frames, made once: _parts)
        identity, rest = parts
        return (_REQUEST_HANDLED, at_ms, connection, peer, name, key, version, correlation,
                client, software, software_version, *identity, latency,
                *(answer if type(answer) is tuple else ()), *rest)
    if type(answer) is tuple:  # the request's frame and what the row reads of the response
        row = make(q, None, latency, SHIPPED_TOPICS, at_ms,
                   connection, peer, name, key, version, correlation, client, software,
                   software_version)
        row = row[:_ERROR_AT] + answer + row[_ERROR_AT + len(answer):]
    else:
        row = make(q, r, latency, NO_TOPIC_IDS, at_ms,
                   connection, peer, name, key, version, correlation, client, software,
                   software_version)
    if parts is None:
        decoded[5] = _parts(row, answer)
    return row


# A row is (tag, the ten values frame_row passes after the lookup, the request's identity, the
# latency, what the row reads of the request and the response): all but the ten and the
# latency follow from the two frames, the same for every request of a member with the same
# frames (a Heartbeat, a commit of the same offset), so they are kept with the decoded frames.
_HEAD = 11  # the tag and the ten
_LATENCY_AT = _ERROR_AT - 1


def _parts(row: tuple, answer) -> tuple | bool:
    """(identity, rest) of a row made from frames, or False where a row rebuilt from them would
    not be this row (then the row maker is called every time, as before)."""
    after = _ERROR_AT + (len(answer) if type(answer) is tuple else 0)
    identity, rest = row[_HEAD:_LATENCY_AT], row[after:]
    rebuilt = (*row[:_HEAD], *identity, row[_LATENCY_AT],
               *(answer if type(answer) is tuple else ()), *rest)
    ok = row[0] == _REQUEST_HANDLED and rebuilt == row and len(row) > after
    return (identity, rest) if ok else False


def _decode(key: int, version: int, frame: bytes, answer: bytes) -> tuple:
    """(row maker, api name, client id, request, response) of a request frame and its
    size-prefixed answer."""
    api = HANDLERS[key].api
    header, request, _ = decode_request(api, version, bytes(frame))
    if type(answer) is tuple:  # (no response frame: answer_reader)
        return [request_row_maker(type(request), type(None)), api.name, header.client_id,
                request, None, None, None, None, None]
    reader = Reader(bytes(answer), 4)  # (after the size)
    read_from(ResponseHeader, response_header_version(api, version), reader)
    response = read_from(api.response, version, reader)
    return [request_row_maker(type(request), type(response)), api.name, header.client_id,
            request, response, None, None, None, None]


# -- requests recorded by their frame and the row's share of the response ---------------------


# topic id -> its name, as the trace writer shipped them (in the encoder: as it received them)
TOPIC_NAMES: dict = {}
_NAMED: dict = {}  # topic id -> what ``lookup_id`` answers for it (something with a ``name``)


class _Named:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _lookup_shipped(topic_id):
    named = _NAMED.get(topic_id)
    if named is None:
        name = TOPIC_NAMES.get(topic_id)
        if name is None:  # (never, as recorded: answer_reader checked it was shipped)
            return None
        named = _NAMED[topic_id] = _Named(name)
    return named


# what a row made from a request frame is given to resolve topic ids with: the shipped names
SHIPPED_TOPICS = type("ShippedTopics", (), {"lookup_id": staticmethod(_lookup_shipped)})()


def learn_topic_names(names: dict) -> None:
    """Add shipped topic names (id as its 16 bytes, or as a UUID -> name)."""
    import uuid
    for topic_id, name in names.items():
        if type(topic_id) is bytes:
            topic_id = uuid.UUID(bytes=topic_id)
        TOPIC_NAMES[topic_id] = name
        _NAMED.pop(topic_id, None)
    forget_decoded()  # (the rows' parts kept there read topic names)


def answer_reader(request_cls: type, response_cls: type, catalogue, shipped_version: list,
                  vouched: list | None = None):
    """``read(q, r)``: what a RequestHandled row reads of response ``r`` -- (error_code,
    partition_errors, throttle_time_ms), by the walk the row maker uses -- or None where request
    ``q`` names a topic id while the encoder's names may not be the catalogue's: the catalogue
    changed since they were shipped (its ``version`` is not ``shipped_version[0]``), or the id
    is no live topic's (the request path would give it as its text). Then the request path
    makes the row itself. None instead of a reader where the request names topic ids deeper
    than its top-level arrays. ``vouched``: the handler's one-item list of the last response
    it built with no error anywhere, no throttle and every topic it names live
    (handlers/fetch.py's VOUCHED): that response reads as no errors without the walk, while the
    names shipped are the catalogue's."""
    if not _struct_arrays(response_cls):  # (the row maker reads such a response otherwise)
        return None
    lines = []
    for name in _struct_arrays(request_cls):
        element = next(f.type.element for f in fields_of(request_cls) if f.name == name)
        names = _names(element)
        if name == _FORGOTTEN:  # (partitions a session stops fetching: not in the row)
            continue
        if "topic_id" not in names:
            if _deep_ids(element):
                return None
            continue
        lines += [f"    for t in q.{name} or ():",
                  f"        n = {_topic_of('t', names)}",
                  "        if not (isinstance(n, str) and n):",
                  "            tid = t.topic_id",
                  "            if tid is not None and tid.int:",
                  "                if catalogue.version != seen[0]:",
                  "                    return None",
                  "                if live[0] != seen[0]:",
                  "                    live[:] = seen[0], {k.int for k in catalogue._by_id}",
                  "                if tid.int not in live[1]:",
                  "                    return None"]
    # The errors walk (request_walk's, the row maker's) inline, not called: one Python frame
    # less per Fetch; and the usual answer -- no error anywhere, no throttle -- as one shared
    # tuple, equal to the one built otherwise (marshal writes it once per message, then a ref).
    walk: list[str] = []
    _emit_errors(walk, "        ", response_cls, "r", "None", 0)
    top = "int(r.error_code)" if "error_code" in _names(response_cls) else "None"
    lines += ["    try:", "        found = []", *walk,
              f"        code, throttle = {top}, r.throttle_time_ms",
              "    except (AttributeError, TypeError):  # (what the compiled walk falls back on)",
              "        return (*errors(r), r.throttle_time_ms or 0)",
              "    if not (found or code or throttle):",
              f"        return {'NO_ERRORS' if top != 'None' else 'NO_ERRORS_NO_TOP'}",
              "    return (code, tuple(found), throttle or 0)"]
    if vouched is not None and top != "None":
        lines[:0] = ["    if r is vouched[0] and catalogue.version == seen[0]:",
                     "        return NO_ERRORS"]
    source = "def read(q, r):\n" + "\n".join(lines) + "\n"
    # ``live``: the ids of the topics live at the version shipped, as ints (a UUID's hash and
    # equality are Python methods, an int's are C: ~4k instructions less per Fetch), made
    # again when a catalogue change was shipped (the catalogue counts every change of its ids)
    namespace = {"catalogue": catalogue, "seen": shipped_version, "live": [None, frozenset()],
                 "errors": compiled_errors(response_cls), "NO_ERRORS": (0, (), 0),
                 "NO_ERRORS_NO_TOP": (None, (), 0), "vouched": vouched}
    exec(compile(source, f"<kafka_emu.frame_rows answer {request_cls.__qualname__}>", "exec"),  # noqa: S102
         namespace)
    return namespace["read"]


def _deep_ids(cls: type, seen: frozenset = frozenset()) -> bool:
    return "topic_id" in _names(cls) or (cls not in seen and any(
        _deep_ids(next(f.type.element for f in fields_of(cls) if f.name == n), seen | {cls})
        for n in _struct_arrays(cls)))
