"""Arrays of structs encoded once (protocol/preencoded.py): the same bytes as encoding them in
place, for every declared message and version, also when written straight from objects holding
the fields under other names; refused where they were made for another plan; reading like the
elements they were made from."""

from __future__ import annotations

import types

import attrs
import pytest
from hypothesis import given

from kafka_emu.coordinator import DescribedMember
from kafka_emu.protocol import EncodeError, decode, encode
from kafka_emu.protocol.codegen import plan_for
from kafka_emu.protocol.messages.describe_groups import (DescribedGroup, DescribedGroupMember,
                                                         DescribeGroupsResponse)
from kafka_emu.protocol.messages.join_group import JoinGroupResponseMember
from kafka_emu.protocol.preencoded import encode_array
from kafka_emu.protocol.schema import Array, fields_of
from kafka_emu.testing.strategies import messages
from protocol_cases import EXAMPLES, hyp, parametrize_cases


def preencoded(obj, message: type, version: int, counted: list[int], renamed: bool = False):
    """``obj`` with every non-empty array of structs, at any depth, replaced by an EncodedArray
    of its (themselves pre-encoded) elements; ``counted`` gets one entry per replacement. With
    ``renamed``, the elements are encoded from plain objects holding each field under another
    name (where the element has no tagged fields, which are written by name)."""
    changes = {}
    for spec in fields_of(type(obj)):
        value = getattr(obj, spec.name)
        if (isinstance(spec.type, Array) and isinstance(spec.type.element, type)
                and isinstance(value, list) and value):
            element = spec.type.element
            items = [preencoded(item, message, version, counted, renamed) for item in value]
            flexible = version in message.__kafka__.flexible
            if renamed and not plan_for(element, version, flexible).tag_writers:
                names = {f.name: f"held_{f.name}" for f in fields_of(element)}
                held = [types.SimpleNamespace(**{names[f.name]: getattr(item, f.name)
                                                 for f in fields_of(element)}) for item in items]
                changes[spec.name] = encode_array(message, version, element, held, names)
            else:
                changes[spec.name] = encode_array(message, version, element, items)
            counted.append(1)
    return attrs.evolve(obj, **changes) if changes else obj


@parametrize_cases()
def test_an_encoded_array_writes_what_its_elements_would(cls, version):
    @hyp(EXAMPLES)
    @given(messages(cls, version))
    def check(msg):
        counted: list[int] = []
        same = preencoded(msg, cls, version, counted)
        assert encode(same, version) == encode(msg, version)
        assert same == msg  # it reads like the list it stands for
        held = preencoded(msg, cls, version, [], renamed=True)
        assert encode(held, version) == encode(msg, version)
        assert held == msg  # the elements, built from what held them
    check()


def _members(n: int) -> list[DescribedGroupMember]:
    return [DescribedGroupMember(member_id=f"m-{i}", group_instance_id=f"i-{i}" if i % 2 else None,
                                 client_id="c", client_host="/127.0.0.1",
                                 member_metadata=bytes([i % 256]) * (i % 5),
                                 member_assignment=b"\x00" * (i % 3)) for i in range(n)]


@pytest.mark.parametrize("version", range(7))
@pytest.mark.parametrize("n", [0, 1, 200])
def test_describe_groups_members_every_version(version, n):
    members = _members(n)
    if version < 4:  # no GroupInstanceId before v4 (ignorable: dropped, as in place)
        members = [attrs.evolve(m, group_instance_id=None) for m in members]
    plain = DescribeGroupsResponse(groups=[DescribedGroup(group_id="g", members=members)])
    encoded = encode_array(DescribeGroupsResponse, version, DescribedGroupMember, members)
    once = DescribeGroupsResponse(groups=[DescribedGroup(group_id="g", members=encoded)])
    data = encode(once, version)
    assert data == encode(plain, version)
    assert decode(DescribeGroupsResponse, version, data).groups[0].members == members


@pytest.mark.parametrize("made, used", [(3, 4), (4, 5), (5, 4), (0, 3), (6, 5)])
def test_an_encoded_array_made_for_another_version_is_refused(made, used):
    # v0-3 write members alike, but each version has its own plan: refused all the same, so a
    # handler cannot get away with a version it did not encode for
    encoded = encode_array(DescribeGroupsResponse, made, DescribedGroupMember, _members(3))
    msg = DescribeGroupsResponse(groups=[DescribedGroup(group_id="g", members=encoded)])
    with pytest.raises(EncodeError, match="EncodedArray made for another plan"):
        encode(msg, used)


def test_an_encoded_array_of_another_element_type_is_refused():
    other = encode_array(DescribeGroupsResponse, 5, JoinGroupResponseMember,
                         [JoinGroupResponseMember(member_id="m", metadata=b"x")])
    msg = DescribeGroupsResponse(groups=[DescribedGroup(group_id="g", members=other)])
    with pytest.raises(EncodeError, match="DescribedGroupMember v5 flexible"):
        encode(msg, 5)


def test_a_bad_element_fails_when_it_is_encoded():
    with pytest.raises(EncodeError, match="DescribedGroupMember v3"):
        encode_array(DescribeGroupsResponse, 3, DescribedGroupMember,
                     [DescribedGroupMember(member_id=None)])  # not nullable


def test_it_reads_like_its_elements_and_cannot_be_changed():
    members = _members(3)
    encoded = encode_array(DescribeGroupsResponse, 5, DescribedGroupMember, members)
    assert len(encoded) == 3 and list(encoded) == members and encoded[1] == members[1]
    assert encoded == members and members == encoded and encoded == tuple(members)
    assert encoded != members[:2] and encoded != "not an array"
    assert encoded == encode_array(DescribeGroupsResponse, 4, DescribedGroupMember, members)
    assert "3 DescribedGroupMember v5" in repr(encoded)
    with pytest.raises(TypeError):
        hash(encoded)
    with pytest.raises(AttributeError):
        encoded.data = b""


@pytest.mark.parametrize("version", range(7))
def test_describe_groups_members_from_the_coordinators_described_members(version):
    """The handler's way (handlers/describe_groups.py): no DescribedGroupMember is built to
    encode the coordinator's members; the bytes and, when read, the elements are the same."""
    members = _members(5)
    if version < 4:
        members = [attrs.evolve(m, group_instance_id=None) for m in members]
    held = [DescribedMember(member_id=m.member_id, group_instance_id=m.group_instance_id,
                            client_id=m.client_id, client_host=m.client_host,
                            metadata=m.member_metadata, assignment=m.member_assignment)
            for m in members]
    names = {"member_metadata": "metadata", "member_assignment": "assignment"}
    encoded = encode_array(DescribeGroupsResponse, version, DescribedGroupMember, held, names)
    assert encoded.built is None  # nothing built yet
    plain = DescribeGroupsResponse(groups=[DescribedGroup(group_id="g", members=members)])
    once = DescribeGroupsResponse(groups=[DescribedGroup(group_id="g", members=encoded)])
    assert encode(once, version) == encode(plain, version)
    assert encoded.built is None and len(encoded) == 5  # encoding and counting build nothing
    assert list(encoded) == members and encoded[0] is encoded.items[0]  # built once, kept
    assert all(type(m) is DescribedGroupMember for m in encoded)


def test_names_that_are_not_fields_are_refused():
    with pytest.raises(ValueError, match="member_meta"):
        encode_array(DescribeGroupsResponse, 5, DescribedGroupMember, [],
                     {"member_meta": "metadata"})
