"""Cross-check against an independent implementation: kafka-python's protocol classes.

kafka-python 3.x generates its classes from Kafka 4.3's JSON schemas. For every declared
message and every version both sides know, the two must describe the same wire layout; their
encoding of a message built field by field from ours must be byte-identical to ours and decode
to ours; their decoding of our encoding must equal ours field by field (recursively). Kafka 4.3
dropped some old versions (KIP-896) that we still declare; for those, kafka-python's older
hand-written Struct classes (kafka.protocol.old) are the reference instead, where they exist.
Each API must keep a non-empty overlap with the generated classes. See kp_bridge for how fields
and values are paired generically.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from kafka_emu.protocol import decode, encode
from kafka_emu.testing.strategies import messages
from kp_bridge import (differences, kp_class, kp_decode, kp_encode, kp_flexible, kp_versions,
                       layout_differences, old_class, old_layout_differences, old_values,
                       to_kp, to_old)
from protocol_cases import FEW, hyp, message_classes, parametrize_cases


def _overlap(cls: type) -> list[int]:
    kcls = kp_class(cls)
    if kcls is None:
        return []
    return [v for v in cls.__kafka__.valid if v in kp_versions(kcls)]


OVERLAP = [(cls, v) for cls in message_classes() for v in _overlap(cls)]
# versions only the old Struct classes know
OLD_ONLY = [(cls, v) for cls in message_classes() for v in cls.__kafka__.valid
            if v not in _overlap(cls) and old_class(cls, v) is not None]


# kafka-python 3.x ships no schema for the KIP-848 APIs (its consumer speaks only the classic
# protocol); their declarations are cross-checked against librdkafka's bytes instead
# (golden/confluent-kafka-kip848.json in test_golden.py, and the confluent-kafka integration
# tests, where librdkafka decodes our answers).
NOT_IN_KAFKA_PYTHON = {68, 69}  # ConsumerGroupHeartbeat, ConsumerGroupDescribe
# Nor for the share group APIs (KIP-932): ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
# ShareAcknowledge and the share group offsets admin APIs; theirs are cross-checked with the
# hand-built struct.pack encoders of tests/broker/test_share_group_wire.py and
# tests/integration (librdkafka's share consumer decodes our answers).
NOT_IN_KAFKA_PYTHON |= {76, 77, 78, 79, 90, 91, 92}


@pytest.mark.parametrize("cls", message_classes(), ids=lambda c: c.__name__)
def test_kafka_python_knows_the_message_and_some_of_its_versions(cls):
    if cls.__kafka__.api_key in NOT_IN_KAFKA_PYTHON and kp_class(cls) is None:
        pytest.skip("kafka-python has no schema for this KIP-848 / KIP-932 API")
    kcls = kp_class(cls)
    assert kcls is not None, f"kafka-python has no class for {cls.__name__}"
    assert _overlap(cls), (f"{cls.__name__}: no version known to both (ours "
                           f"{cls.__kafka__.valid}, kafka-python {kp_versions(kcls)})")


@parametrize_cases(OVERLAP)
def test_same_wire_layout(cls, version):
    kcls = kp_class(cls)
    flexible = version in cls.__kafka__.flexible
    assert flexible == kp_flexible(kcls, version), "flexible versions differ"
    problems = layout_differences(cls, kcls._struct, version, flexible)
    assert not problems, "\n".join(problems)


@parametrize_cases(OVERLAP)
def test_kafka_python_agrees(cls, version):
    kcls = kp_class(cls)
    flexible = version in cls.__kafka__.flexible

    @hyp(FEW)
    @given(messages(cls, version))
    def check(msg):
        ours = encode(msg, version)
        # they decode what we encode (how the broker's responses reach a client) ...
        theirs_decoded = kp_decode(kcls, version, ours)
        problems = differences(msg, theirs_decoded, cls, kcls._struct, version, flexible)
        assert not problems, "\n".join(problems)
        # ... and we decode what they encode (how a client's requests reach the broker)
        theirs = kp_encode(to_kp(msg, cls, kcls._struct, version, flexible, top=kcls), version)
        assert decode(cls, version, theirs) == msg
        assert theirs == ours

    check()


def test_every_declared_version_has_a_reference():
    # each (message, version) we declare is checked against one kafka-python implementation
    # or the other; the ones neither knows are listed here and must stay few
    unchecked = [f"{cls.__name__} v{v}" for cls in message_classes()
                 for v in cls.__kafka__.valid
                 if (cls, v) not in OVERLAP and (cls, v) not in OLD_ONLY
                 and cls.__kafka__.api_key not in NOT_IN_KAFKA_PYTHON]
    assert unchecked == []


@parametrize_cases(OLD_ONLY)
def test_same_layout_as_the_old_struct_classes(cls, version):
    problems = old_layout_differences(cls, old_class(cls, version).SCHEMA, version)
    assert not problems, "\n".join(problems)


@parametrize_cases(OLD_ONLY)
def test_old_struct_classes_agree(cls, version):
    kcls = old_class(cls, version)

    @hyp(FEW)
    @given(messages(cls, version))
    def check(msg):
        ours = encode(msg, version)
        assert old_values(kcls.decode(ours)) == to_old(msg, cls, version)
        theirs = kcls(*to_old(msg, cls, version)).encode()
        assert theirs == ours
        assert decode(cls, version, theirs) == msg

    check()
