"""Every declared (message, version) round-trips: decode(encode(m)) == m, byte-stable."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_emu.protocol import APIS, DecodeError, decode, encode
from kafka_emu.protocol.codec import encode_into, plan_for, read_from
from kafka_emu.protocol.primitives import Reader
from kafka_emu.testing.strategies import messages
from protocol_cases import CASES, EXAMPLES, hyp, message_classes, parametrize_cases


def test_the_registry_is_not_empty_and_covers_both_directions():
    assert APIS, "no API declared"
    for api in APIS.values():
        assert api.request.__kafka__.kind == "request"
        assert api.response.__kafka__.kind == "response"
        assert api.request.__kafka__.api_key == api.response.__kafka__.api_key == api.key
        # the broker answers every version it accepts
        assert api.request.__kafka__.valid == api.response.__kafka__.valid, api.name
        assert api.request.__kafka__.flexible == api.response.__kafka__.flexible, api.name


@parametrize_cases()
def test_default_message_round_trips(cls, version):
    msg = cls()
    data = encode(msg, version)
    assert decode(cls, version, data) == msg
    assert encode(decode(cls, version, data), version) == data


@parametrize_cases()
def test_round_trip(cls, version):
    @hyp(EXAMPLES)
    @given(messages(cls, version), st.binary(max_size=3))
    def check(msg, tail):
        data = encode(msg, version)
        back = decode(cls, version, data)
        assert back == msg
        assert type(back) is cls
        assert encode(back, version) == data
        # the Reader interface (headers, the broker) reads the same, and stops at the end
        r = Reader(b"\x00" + data + tail, 1)
        assert read_from(cls, version, r) == msg
        assert r.pos == 1 + len(data)
        # a Reader whose end is before the end of its buffer stops there
        r = Reader(b"\x00" + data + tail, 1, 1 + len(data))
        assert read_from(cls, version, r) == msg and r.pos == r.end
        if data:
            with pytest.raises(DecodeError):
                read_from(cls, version, Reader(data + tail, 0, len(data) - 1))
        assert decode(cls, version, data + tail, allow_trailing=True) == msg
        out = bytearray(b"prefix")
        encode_into(out, msg, version)
        assert bytes(out) == b"prefix" + data

    check()


def test_decoded_messages_are_real_frozen_instances():
    # Decoding builds instances in a mutable twin class and then gives them their real class
    # (protocol/builder_twin.py); nothing of that may show.
    for cls in message_classes():
        version = cls.__kafka__.valid.hi
        msg = decode(cls, version, encode(cls(), version))
        assert type(msg) is cls
        assert msg == cls()
        first = attrs.fields(cls)[0].name
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(msg, first, getattr(msg, first))


@parametrize_cases()
def test_plan_min_size_is_a_lower_bound(cls, version):
    # The array-count guard relies on min_size never exceeding a real encoding.
    plan = plan_for(cls, version, version in cls.__kafka__.flexible)
    assert plan.min_size <= len(encode(cls(), version))


def test_unknown_version_is_a_decode_error():
    cls = next(iter(APIS.values())).request
    with pytest.raises(DecodeError, match="unsupported version"):
        decode(cls, cls.__kafka__.valid.hi + 1, b"")
    assert len(CASES) > 100  # sanity: the registry is really being walked
