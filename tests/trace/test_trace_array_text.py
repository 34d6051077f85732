"""The compiled text of arrays of flat structs (trace/array_text.py) is, for any value, the
generic text (dicts through the line encoders' json.dumps), character for character -- for the
values it is made for and for every other (None, bools, wrong lengths, bytes), which it hands
to the generic way; and every array field of flat structs in the schema uses it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_emu.trace import schema
from kafka_emu.trace.array_text import array_formatter

FLAT = [(key, f) for key, f in schema._OVERRIDES.items() if schema._array_text(f) is not None]

_ODD = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.binary(max_size=3))
_STR = st.text(max_size=6)  # (any code point: escapes and non-ASCII as json writes them)
_INT = st.integers(min_value=-2**63, max_value=2**63)


def _element(kinds, odd):
    values = [(_STR if k == "string" else _INT) for k in kinds]
    if odd:
        values = [st.one_of(v, _ODD) for v in values]
    return st.tuples(*values)


def test_the_flat_arrays_are_compiled():
    names = {key for key, _ in FLAT}
    assert {("RequestHandled", "partition_errors"), ("OffsetsCommitted", "offsets"),
            ("RequestHandled", "partitions")} <= names
    # (nested arrays and whole-event fields keep the generic way)
    assert ("MemberReconciled", "assigned") not in names


@given(st.data())
def test_compiled_text_is_the_generic_text(data):
    for _, f in FLAT:
        kinds = tuple(t.name for _, t in f.type.element.fields)
        odd = data.draw(st.booleans())
        items = data.draw(st.lists(_element(kinds, odd), max_size=4).map(tuple))
        assert schema._array_text(f)(items) == schema._dumps(f.convert(items))


@given(st.lists(st.tuples(_STR, _INT), max_size=3), st.integers(0, 2))
def test_a_tuple_of_another_length_gets_the_generic_text(items, cut):
    generic = []
    text = array_formatter(("topic", "partition", "offset"), ("string", "long", "long"),
                           lambda v: generic.append(v) or "G")
    got = text(tuple(items) + (("t", 1, 2, 3)[:cut],))
    assert got == "G" and len(generic) == 1


def test_shapes_it_does_not_compile():
    assert array_formatter(("a",), ("double",), str) is None
    assert array_formatter(("a", "b"), ("long",), str) is None
    assert array_formatter(('"x',), ("long",), str) is None
    assert array_formatter(None, (), str) is None
