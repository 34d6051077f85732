"""ListGroups (3.15), DescribeGroups (3.14), DeleteGroups (3.16)."""

from __future__ import annotations

from kafka_emu.coordinator import GroupDeleted, OffsetsRemoved

from .harness import E, Harness, subscription


# ================================================================================ ListGroups
def test_list_groups_all_with_state_type_and_protocol_type():
    """3.15: every group, ProtocolType ("" for simple groups), state string, type "classic"."""
    h = Harness()
    h.stable_group(1, group_id="a")
    h.commit([("t", 0, 1)], group_id="simple")
    h.join(group_id="e")  # created Empty by a MEMBER_ID_REQUIRED round trip
    result = h.list_groups()
    assert result.error == E.NONE
    assert [(g.group_id, g.protocol_type, g.state, g.group_type) for g in result.groups] == [
        ("a", "consumer", "Stable", "classic"),
        ("simple", "", "Empty", "classic"),
        ("e", "", "Empty", "classic"),
    ]


def test_list_groups_state_filter_is_case_insensitive_and_trimmed():
    """3.15: StatesFilter lower-cased and trimmed; unknown strings match nothing; empty = all."""
    h = Harness()
    h.stable_group(1, group_id="a")
    h.commit([("t", 0, 1)], group_id="b")
    assert [g.group_id for g in h.list_groups(states=["stable"]).groups] == ["a"]
    assert [g.group_id for g in h.list_groups(states=[" EMPTY "]).groups] == ["b"]
    assert [g.group_id for g in h.list_groups(states=["Stable", "Empty"]).groups] == ["a", "b"]
    assert h.list_groups(states=["bogus"]).groups == ()


def test_list_groups_type_filter():
    """3.15: TypesFilter case-insensitive; unknown types match nothing; AND with states."""
    h = Harness()
    h.stable_group(1, group_id="a")
    assert [g.group_id for g in h.list_groups(types=["Classic"]).groups] == ["a"]
    assert h.list_groups(types=["consumer"]).groups == ()
    assert h.list_groups(types=["nope"]).groups == ()
    assert h.list_groups(states=["empty"], types=["classic"]).groups == ()


# ============================================================================ DescribeGroups
def test_describe_unknown_group_v6_and_v0_5():
    """3.14: unknown group -> v0-5 error 0 "Dead"; v6+ GROUP_ID_NOT_FOUND with a message."""
    h = Harness()
    (old,) = h.describe("nope", v6=False).groups
    assert (old.error, old.state, old.protocol_type, old.protocol_data, old.members) == (E.NONE, "Dead", "", "", ())
    assert old.error_message is None
    (new,) = h.describe("nope").groups
    assert new.error == E.GROUP_ID_NOT_FOUND and new.state == "Dead"
    assert new.error_message == "Group nope not found."


def test_describe_stable_group_reports_metadata_and_assignment():
    """3.14 Stable: ProtocolData = selected protocol; metadata for it and stored assignments."""
    h = Harness()
    a, b = h.stable_group(2, client_id="cli", client_host="/10.0.0.1")
    (g,) = h.describe("g").groups
    assert (g.error, g.state, g.protocol_type, g.protocol_data) == (E.NONE, "Stable", "consumer", "range")
    assert [(m.member_id, m.client_id, m.client_host, m.assignment) for m in g.members] == [
        (a, "cli", "/10.0.0.1", b"a0"),
        (b, "cli", "/10.0.0.1", b"a1"),
    ]
    assert g.members[0].metadata == subscription("t")


def test_describe_non_stable_group_empty_metadata_but_stored_assignment():
    """3.14: outside Stable, empty ProtocolData and MemberMetadata; the Java coordinator still
    reports each member's last stored assignment."""
    h = Harness()
    a, b = h.stable_group(2)
    h.join(a, now=5)  # PreparingRebalance
    (g,) = h.describe("g").groups
    assert g.state == "PreparingRebalance" and g.protocol_data == ""
    assert [(m.metadata, m.assignment) for m in g.members] == [(b"", b"a0"), (b"", b"a1")]


def test_describe_keeps_first_client_id_and_host():
    """3.14: ClientId/ClientHost recorded when first added; later JoinGroups do not update them;
    static replacement keeps the old values."""
    h = Harness()
    h.stable_group(1, static=True, client_id="first", client_host="/1.1.1.1")
    h.join(instance="i0", client_id="second", client_host="/2.2.2.2", now=5)
    (g,) = h.describe("g").groups
    assert (g.members[0].client_id, g.members[0].client_host) == ("first", "/1.1.1.1")
    assert g.members[0].group_instance_id == "i0"


def test_describe_many_and_query_helper():
    h = Harness()
    h.stable_group(1)
    result = h.describe("g", "x")
    assert [g.group_id for g in result.groups] == ["g", "x"]
    assert h.coord.describe("g").state == "Stable"


# ============================================================================== DeleteGroups
def test_delete_groups_rows():
    """3.16 DeleteGroups: absent -> 69; non-empty states -> 68; Empty -> deleted with offsets;
    duplicates collapse."""
    h = Harness()
    h.stable_group(1, group_id="busy")
    h.commit([("t", 0, 1)], group_id="idle")
    result = h.delete_groups("idle", "busy", "nope", "idle")
    assert result.results == (("idle", E.NONE), ("busy", E.NON_EMPTY_GROUP), ("nope", E.GROUP_ID_NOT_FOUND))
    assert h.coord.group_ids() == ["busy"]
    assert h.fetch(None, group_id="idle").partitions == ()
    assert [e.group_id for e in h.events_of(GroupDeleted)] == ["idle"]
    assert [e.reason for e in h.events_of(OffsetsRemoved)] == ["group_deleted"]
    # A new commit to the deleted name starts from scratch.
    h.commit([("t", 1, 5)], group_id="idle")
    assert [(p.partition, p.offset) for p in h.fetch(None, group_id="idle").partitions] == [(1, 5)]


def test_delete_group_drops_pending_member_ids():
    h = Harness()
    _, replies = h.join()
    pending = next(iter(replies.values())).member_id
    assert h.delete_groups("g").results == (("g", E.NONE),)
    assert ("heartbeat", "g", pending) not in h.coord.timer_deadlines()
    rid, replies = h.join(pending)
    assert replies[rid].error == E.UNKNOWN_MEMBER_ID


def test_delete_groups_empty_string_is_a_usable_group_id():
    """3.13: "" is a valid group id for OffsetCommit/OffsetFetch/DescribeGroups/DeleteGroups."""
    h = Harness()
    assert [p.error for p in h.commit([("t", 0, 1)], group_id="").partitions] == [E.NONE]
    assert [p.offset for p in h.fetch([("t", (0,))], group_id="").partitions] == [1]
    assert h.describe("").groups[0].state == "Empty"
    assert h.delete_groups("").results == (("", E.NONE),)
