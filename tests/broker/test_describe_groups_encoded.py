"""DescribeGroups reuses the encoded members of an unchanged description (handlers/
describe_groups.py): over real sockets the answers are what a fresh build encodes, at every
version, before and after the group changes; the handler encodes a description's members once per
version and forgets them when the coordinator drops the description."""

from __future__ import annotations

import gc
import weakref

import trio

from kafka_emu.broker.handlers import describe_groups as handler
from kafka_emu.coordinator import DescribedGroup, DescribedMember, DescribeGroupsResult
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME, encode
from kafka_emu.protocol.messages import describe_groups as wire
from kafka_emu.protocol.preencoded import EncodedArray

from test_server import JOIN, connect, join_as_new_member, join_request

DESCRIBE = BY_NAME["DescribeGroups"]


def expected(group, version: int) -> wire.DescribeGroupsResponse:
    """What a DescribeGroups answer says of a live group, built from the group entity."""
    stable = group.state.value == "Stable"
    return wire.DescribeGroupsResponse(groups=[wire.DescribedGroup(
        error_code=0, group_id=group.group_id, group_state=group.state.value,
        protocol_type=group.protocol_type or "",
        protocol_data=(group.protocol_name or "") if stable else "",
        members=[wire.DescribedGroupMember(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id if version >= 4 else None,
            client_id=m.client_id, client_host=m.client_host,
            member_metadata=m.metadata(group.protocol_name) if stable else b"",
            member_assignment=m.assignment) for m in group.members.values()])])


async def test_answers_are_fresh_builds_before_and_after_a_change(start_broker):
    bound = await start_broker({"group.initial.rebalance.delay.ms": 0})
    first = await connect(bound, "first")
    member = await join_as_new_member(first, instance=None)
    joined = await first.request(JOIN, 5, join_request(member_id=member))
    assert joined.error_code == ErrorCode.NONE
    group = bound.broker.coordinator.group("g")
    request = wire.DescribeGroupsRequest(groups=["g"])
    for version in range(7):
        for _ in range(2):  # the second answer comes from the encoding of the first
            got = await first.request(DESCRIBE, version, request)
            assert got == expected(group, version), version
    assert group.state.value == "CompletingRebalance"
    # a static member joins (its JoinGroup parks): a rebalance with two members
    second = await connect(bound, "second")
    await second.send(JOIN, 5, join_request(instance="static-2"))
    while len(group.members) < 2:
        await trio.sleep(0.01)
    other = list(group.members)[1]
    for version in range(7):
        got = await first.request(DESCRIBE, version, request)
        assert got == expected(group, version), version
        assert got.groups[0].group_state == "PreparingRebalance"
        assert [m.member_id for m in got.groups[0].members] == [member, other]
        assert got.groups[0].members[1].client_id == "second"
        assert got.groups[0].members[1].group_instance_id == ("static-2" if version >= 4 else None)


def _description(n: int) -> DescribedGroup:
    return DescribedGroup(error=ErrorCode.NONE, group_id="g", state="Stable",
                          protocol_type="consumer", protocol_data="range", members=tuple(
                              DescribedMember(member_id=f"m{i}", group_instance_id=None,
                                              client_id="c", client_host="/h", metadata=b"md",
                                              assignment=bytes([i])) for i in range(n)))


def test_a_description_is_encoded_once_per_version_and_forgotten_with_it():
    description = _description(3)
    result = DescribeGroupsResult(groups=(description,))
    v5 = handler.render(5, False, result).groups[0].members
    assert isinstance(v5, EncodedArray) and len(v5) == 3
    assert handler.render(5, False, result).groups[0].members is v5
    v3 = handler.render(3, True, result).groups[0].members
    assert v3 is not v5 and handler.render(3, False, result).groups[0].members is v3
    # the bytes are what the members encode to in place
    for version, members in ((5, v5), (3, v3)):
        plain = wire.DescribeGroupsResponse(groups=[wire.DescribedGroup(
            group_id="g", group_state="Stable", protocol_type="consumer", protocol_data="range",
            members=list(members))])
        answer = handler.render(version, False, result)
        assert encode(answer, version) == encode(plain, version)
    # an equal but distinct description (the group changed and changed back) is its own entry
    again = handler.render(5, False, DescribeGroupsResult(groups=(_description(3),)))
    assert again.groups[0].members == v5 and again.groups[0].members is not v5
    key, alive = id(description), weakref.ref(description)
    assert key in handler._ENCODED
    del description, result
    gc.collect()
    assert alive() is None and key not in handler._ENCODED


def test_groups_without_members_are_not_kept():
    before = len(handler._ENCODED)
    empty = DescribeGroupsResult(groups=(DescribedGroup(error=ErrorCode.GROUP_ID_NOT_FOUND,
                                                        group_id="x", state="Dead"),))
    assert handler.render(6, False, empty).groups[0].members == []
    assert len(handler._ENCODED) == before
