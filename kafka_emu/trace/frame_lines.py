"""The encoder's request_handled lines straight from ``REQUEST_FRAME`` records, without the row
(and a commit's offsets_committed line from its ``COMMIT_FRAME`` record).

Theory of operation. A request recorded by its frames (``broker/frame_rows.py``) is made into its
RequestHandled row, then the row into its line (``schema.line_encoder``): building a 27-value
tuple and slicing it again into the line encoder's cached fragments cost about as much as the
rest of the line. Yet every value of the line but three follows from the two frames and the
connection: a member's Heartbeats differ in their at_ms, correlation id and latency only. So the
second line of each (decoded frames, connection) is formatted the usual way and cut into the
three texts between those values (``_texts``), kept with the decoded frames (``frame_rows``
keeps them, and forgets them with the frames) -- not the first: frames that never come again
(a commit of an offset that moves) would be cut for nothing; every later line is one f-string
of the three texts and the three values, formatted as the line encoder formats them (``:d``,
``repr``). A split is kept only when the line rebuilt from it is the line the encoder made,
character for character; otherwise (and for a row ``frame_rows`` makes without its parts) every
line is made the usual way.

A one-partition commit's offsets_committed line comes from its ``COMMIT_FRAME`` record
(``broker/event_rows.py``) in the same way (``commit_line``): the values that move are seq, at_ms
and the offset, read from the frame where ``frame_rows`` found it sits. Its record comes next,
and finds the frames decoded already (``_LAST``).
"""

from __future__ import annotations

from ..broker.frame_rows import (_DECODED, _INT64, _OFFSET_AT, _PEEK, _PEEK_API, _SLICERS,
                                 decoded_commit_row, decoded_entry, decoded_row, keep_decoded)
from .schema import line_encoder

_TEXTS_LIMIT = 16  # connections' texts kept per decoded pair of frames (cleared when full)
# (frames seen once on a connection: a commit of an offset that moves never comes again, and
# cutting its line -- or making a dict to keep the texts in -- would be work for nothing)
_ONCE = ()
_AT_MS, _CORRELATION, _LATENCY = 1, 7, 15  # where a RequestHandled row holds them
_COMMIT_TEXTS = 8  # where a decoded entry keeps its commit's texts (commit_line)
# the record commit_line looked up last and its decoded frames: frame_line, called for that
# record next, does not look it up again
_LAST: list = [None, None]
# The tables' lookups, bound once: CPython 3.11 calls a method of an imported name by attribute
# (LOAD_ATTR: a bound method made and freed per call, about 150 instructions), not LOAD_METHOD.
# (The tables are only ever cleared, never replaced.)
_decoded_get, _slicers_get = _DECODED.get, _SLICERS.get


def frame_line(item: tuple, run_json: str, seq: int) -> str:
    """The request_handled line of a ``REQUEST_FRAME`` record."""
    _, frame, answer, started, done, at, identity = item
    kv, correlation = _PEEK(frame)  # (api key and version as one int)
    if item is _LAST[0]:  # (a commit's record, just looked up for its offsets_committed line)
        decoded = _LAST[1]
    else:  # (frame_rows.decoded_frames written out: no Python call for frames decoded before;
        # a record through marshal holds bytes, or a tuple: frame_rows.answer_reader; one
        # formatted in the emulator's process after the encoder died, a bytearray)
        part = (answer[8:] if type(answer) is bytes else answer if type(answer) is tuple
                else bytes(answer[8:]))
        shapes = _slicers_get(kv)  # (a commit's, a fetch's: looked up less their offsets)
        slicer = shapes.get(len(frame)) if shapes is not None else None
        cache_key = (kv, frame[8:], part) if slicer is None else (slicer, slicer(frame), part)
        decoded = _decoded_get(cache_key)
        if decoded is None:
            decoded = keep_decoded(cache_key, frame, answer)
    kept = decoded[6]  # None, the identity it came on first, or {identity: texts}
    if type(kept) is dict:
        texts = kept.get(identity)
        if texts:
            pre, mid, post = texts
            if type(at) is not int:  # the clock's constants: clock.ms_from written out
                base, shift, start = at
                at = base if shift is None or start is None else base + int(
                    (shift + done - start) * 1000)
            return (f'{{"kind":"request_handled","run":{run_json},"seq":{seq},"at_ms":{at:d}'
                    f'{pre},"correlation_id":{correlation:d}{mid},"latency_ms":'
                    f'{(done - started) * 1000!r}{post}}}\n')
    row = decoded_row(item, decoded, *_PEEK_API(frame), correlation)
    line = line_encoder(row)(row, run_json, seq)
    if kept is None:  # the first time: nothing more kept (see _ONCE)
        decoded[6] = identity
        return line
    if type(kept) is not dict:
        kept = decoded[6] = {kept: _ONCE}
    texts = kept.get(identity)
    if texts is None:
        if len(kept) >= _TEXTS_LIMIT:
            kept.clear()
        kept[identity] = _ONCE
    elif texts is _ONCE:  # the second time on this connection: cut its line
        # (only where the row came from the frames' parts: then nothing else varies)
        kept[identity] = _texts(line, row, run_json, seq) if decoded[5] else False
    return line


def commit_line(item: tuple, run_json: str, seq: int) -> str:
    """The offsets_committed line of a ``COMMIT_FRAME`` record (its record comes next:
    ``frame_line`` finds its decoded frames in ``_LAST``). As ``frame_line`` does, the line of a
    decoded entry's second commit is cut into its texts around the values that move -- seq,
    at_ms and the offset -- and every later line is one f-string, where rebuilt it is the line
    encoder's line character for character."""
    _, record, at = item
    frame = record[1]
    decoded = decoded_entry(frame, record[2], _PEEK(frame)[0])
    _LAST[0], _LAST[1] = record, decoded
    texts = decoded[_COMMIT_TEXTS]
    if type(texts) is str and type(at) is int:
        return (f'{{"kind":"offsets_committed","run":{run_json},"seq":{seq},"at_ms":{at:d}'
                f'{texts}{_INT64(frame, decoded[_OFFSET_AT])[0]:d}}}]}}\n')
    row = decoded_commit_row(item, decoded)
    line = line_encoder(row)(row, run_json, seq)
    if texts is None:
        decoded[_COMMIT_TEXTS] = _ONCE  # (not the first: a frame that never comes again)
    elif texts is _ONCE:
        decoded[_COMMIT_TEXTS] = _commit_texts(line, row, run_json, seq, decoded[_OFFSET_AT])
    return line


def _commit_texts(line: str, row: tuple, run_json: str, seq: int, offset_at) -> str | bool:
    """The text of an offsets_committed ``line`` between its at_ms and its one offset (False
    if the line rebuilt from it would differ, or the offset is not read from the frame)."""
    at_ms, offsets = row[1], row[5]
    if type(offset_at) is not int or not (type(at_ms) is int and len(offsets) == 1):
        return False
    head = f'{{"kind":"offsets_committed","run":{run_json},"seq":{seq},"at_ms":{at_ms:d}'
    tail = f'{offsets[0][2]:d}}}]}}\n'
    if not (line.startswith(head) and line.endswith(tail)):
        return False
    texts = line[len(head):-len(tail)]
    ok = texts.startswith(',"') and texts.endswith('"offset":') and head + texts + tail == line
    return texts if ok else False


def _texts(line: str, row: tuple, run_json: str, seq: int) -> tuple[str, str, str] | bool:
    """The texts of ``line`` around its at_ms, correlation id and latency (False if the line
    rebuilt from them would differ)."""
    at_ms, correlation, latency = row[_AT_MS], row[_CORRELATION], row[_LATENCY]
    if not (type(at_ms) is int and type(correlation) is int and type(latency) is float):
        return False
    head = f'{{"kind":"request_handled","run":{run_json},"seq":{seq},"at_ms":{at_ms:d}'
    correlation_text = f',"correlation_id":{correlation:d}'
    latency_text = f',"latency_ms":{latency!r}'
    if not (line.startswith(head) and line.endswith("}\n")):
        return False
    cut = line.find(correlation_text, len(head))
    if cut < 0:
        return False
    pre, rest = line[len(head):cut], line[cut + len(correlation_text):]
    cut = rest.find(latency_text)
    if cut < 0:
        return False
    mid, post = rest[:cut], rest[cut + len(latency_text):-2]
    # each text the next fields whole (a value found as the start of a longer one is no value)
    whole = all(text[:2] in ("", ',"') for text in (pre, mid, post))
    rebuilt = f"{head}{pre}{correlation_text}{mid}{latency_text}{post}}}\n"
    return (pre, mid, post) if whole and rebuilt == line else False
