"""OffsetCommit table (3.10), OffsetFetch (4.2), OffsetDelete (3.16) and retention (4.3)."""

from __future__ import annotations

from kafka_emu.coordinator import FetchedOffset, GroupDeleted, OffsetsCommitted, OffsetsRemoved

from .harness import E, Harness, subscription


def errors(result) -> list:
    return [p.error for p in result.partitions]


def offsets(result) -> list[tuple[str, int, int]]:
    return [(p.topic, p.partition, p.offset) for p in result.partitions]


# ========================================================================= OffsetCommit rows
def test_commit_row_group_absent_generation_negative_creates_simple_group():
    """3.10 OffsetCommit "Group absent, generation < 0": simple group created (Empty), accepted."""
    h = Harness()
    result = h.commit([("t", 0, 42), ("t", 1, 7)])
    assert errors(result) == [E.NONE, E.NONE]
    assert h.state() == "Empty"
    assert h.group().protocol_type is None
    assert offsets(h.fetch([("t", (0, 1))])) == [("t", 0, 42), ("t", 1, 7)]


def test_commit_row_group_absent_generation_non_negative():
    """3.10 OffsetCommit "Group absent, generation >= 0": v9+ GROUP_ID_NOT_FOUND, v0-8 22."""
    h = Harness()
    assert errors(h.commit([("t", 0, 1)], member_id="m", generation=1)) == [E.GROUP_ID_NOT_FOUND]
    assert errors(h.commit([("t", 0, 1)], member_id="m", generation=1, v9=False)) == [E.ILLEGAL_GENERATION]
    assert h.coord.group_ids() == []


def test_commit_row_dead():
    """3.10 OffsetCommit "Dead" -> COORDINATOR_NOT_AVAILABLE(15)."""
    h = Harness()
    (m,) = h.stable_group(1)
    h.coord.mark_dead("g", 1)
    assert errors(h.commit([("t", 0, 1)], member_id=m, generation=1)) == [E.COORDINATOR_NOT_AVAILABLE]
    assert errors(h.commit([("t", 0, 1)])) == [E.COORDINATOR_NOT_AVAILABLE]


def test_commit_row_empty_generation_negative_ignores_member_id():
    """3.10 OffsetCommit "Empty, generation < 0": accepted (member id ignored)."""
    h = Harness()
    h.join()  # group exists, Empty
    assert errors(h.commit([("t", 0, 3)], member_id="whoever")) == [E.NONE]


def test_commit_row_empty_generation_non_negative():
    """3.10 OffsetCommit "Empty, generation >= 0" -> UNKNOWN_MEMBER_ID(25)."""
    h = Harness()
    h.commit([("t", 0, 3)])
    assert errors(h.commit([("t", 0, 4)], member_id="m", generation=0)) == [E.UNKNOWN_MEMBER_ID]


def test_commit_row_non_empty_generation_negative_no_member():
    """3.10 OffsetCommit "Non-empty, generation < 0, MemberId \"\", no instance id" -> 25."""
    h = Harness()
    h.stable_group(1)
    assert errors(h.commit([("t", 0, 3)])) == [E.UNKNOWN_MEMBER_ID]


def test_commit_generation_negative_naming_a_member_is_illegal_generation():
    """Section 9 item 10: generation -1 naming an existing member gets 22."""
    h = Harness()
    (m,) = h.stable_group(1)
    assert errors(h.commit([("t", 0, 3)], member_id=m)) == [E.ILLEGAL_GENERATION]


def test_commit_row_non_empty_member_validation():
    """3.10 OffsetCommit "Non-empty, member validation fails" -> 25 / 82."""
    h = Harness()
    h.stable_group(1, static=True)
    assert errors(h.commit([("t", 0, 1)], member_id="x", generation=1)) == [E.UNKNOWN_MEMBER_ID]
    assert errors(h.commit([("t", 0, 1)], member_id="x", generation=1, instance="i0")) == [E.FENCED_INSTANCE_ID]


def test_commit_row_non_empty_generation_mismatch():
    """3.10 OffsetCommit "Non-empty, generation mismatch" -> ILLEGAL_GENERATION(22)."""
    h = Harness()
    (m,) = h.stable_group(1)
    assert errors(h.commit([("t", 0, 1)], member_id=m, generation=2)) == [E.ILLEGAL_GENERATION]


def test_commit_row_completing_rebalance():
    """3.10 OffsetCommit "CompletingRebalance (valid member+gen)" -> REBALANCE_IN_PROGRESS(27)."""
    h = Harness()
    m, _, _ = h.new_member()
    h.tick()
    assert errors(h.commit([("t", 0, 1)], member_id=m, generation=1)) == [E.REBALANCE_IN_PROGRESS]


def test_commit_row_preparing_and_stable_accepted():
    """3.10 OffsetCommit "PreparingRebalance or Stable (valid)": accepted; session reset."""
    h = Harness()
    a, b = h.stable_group(2)
    assert errors(h.commit([("t", 0, 1)], member_id=b, generation=1, now=10)) == [E.NONE]
    h.join(a, now=20)  # PreparingRebalance, generation still 1
    assert errors(h.commit([("t", 0, 2)], member_id=b, generation=1, now=30)) == [E.NONE]
    assert h.coord.timer_deadlines()[("heartbeat", "g", b)] == 30 + 10_000
    assert offsets(h.fetch([("t", (0,))])) == [("t", 0, 2)]


def test_commit_metadata_size_limit_and_null_metadata():
    """4.1: metadata longer than offset.metadata.max.bytes -> OFFSET_METADATA_TOO_LARGE(12) for
    that partition only; null metadata is stored as ""."""
    h = Harness(offset_metadata_max_bytes=4)
    result = h.commit([("t", 0, 1, "abcd"), ("t", 1, 1, "abcde"), ("t", 2, 1, None)])
    assert errors(result) == [E.NONE, E.OFFSET_METADATA_TOO_LARGE, E.NONE]
    fetched = h.fetch([("t", (0, 1, 2))])
    assert [p.metadata for p in fetched.partitions] == ["abcd", "", ""]
    assert fetched.partitions[1].offset == -1


def test_commit_stores_leader_epoch():
    h = Harness()
    from kafka_emu.coordinator import CommitOffset, OffsetCommit

    h.coord.handle(
        OffsetCommit(
            request_id="x",
            group_id="g",
            generation_id=-1,
            member_id="",
            group_instance_id=None,
            offsets=(CommitOffset(topic="t", partition=0, offset=9, leader_epoch=4, metadata="m"),),
        ),
        0,
    )
    assert h.fetch([("t", (0,))]).partitions == (
        FetchedOffset(topic="t", partition=0, offset=9, leader_epoch=4, metadata="m"),
    )


# ============================================================================== OffsetFetch
def test_fetch_unknown_group_and_partitions_are_minus_one():
    """4.2: unknown group -> -1 / -1 / "" with error 0; fetch-all -> empty list."""
    h = Harness()
    result = h.fetch([("t", (0, 3)), ("u", (1,))])
    assert result.error == E.NONE
    assert [(p.topic, p.partition, p.offset, p.leader_epoch, p.metadata, p.error) for p in result.partitions] == [
        ("t", 0, -1, -1, "", E.NONE),
        ("t", 3, -1, -1, "", E.NONE),
        ("u", 1, -1, -1, "", E.NONE),
    ]
    assert h.fetch(None).partitions == ()


def test_fetch_all_returns_every_committed_offset_sorted():
    """4.2: Topics null = all partitions with committed offsets, grouped by topic."""
    h = Harness()
    h.commit([("b", 1, 10), ("a", 2, 20), ("b", 0, 30)])
    assert offsets(h.fetch(None)) == [("a", 2, 20), ("b", 0, 30), ("b", 1, 10)]


def test_fetch_dead_group_is_treated_as_absent():
    h = Harness()
    (m,) = h.stable_group(1)
    h.commit([("t", 0, 5)], member_id=m, generation=1)
    h.coord.mark_dead("g", 1)
    assert offsets(h.fetch([("t", (0,))])) == [("t", 0, -1)]
    assert h.fetch(None).partitions == ()


# ============================================================================= OffsetDelete
def test_offset_delete_rows():
    """3.16 OffsetDelete: "" -> 24; absent -> 69; non-Empty non-consumer -> 68; subscribed topic
    -> 86 per partition; otherwise deleted and reported 0 even if no offset existed."""
    h = Harness()
    assert h.delete_offsets([("t", 0)], group_id="").error == E.INVALID_GROUP_ID
    assert h.delete_offsets([("t", 0)], group_id="nope").error == E.GROUP_ID_NOT_FOUND

    h.stable_group(1, group_id="conn", protocol_type="connect", protocols=(("v1", b""),))
    assert h.delete_offsets([("t", 0)], group_id="conn").error == E.NON_EMPTY_GROUP

    (m,) = h.stable_group(1, protocols=(("range", subscription("t")),))
    h.commit([("t", 0, 1), ("old", 0, 2)], member_id=m, generation=1)
    result = h.delete_offsets([("t", 0), ("old", 0), ("old", 5)])
    assert result.error == E.NONE
    assert errors(result) == [E.GROUP_SUBSCRIBED_TO_TOPIC, E.NONE, E.NONE]
    assert offsets(h.fetch(None)) == [("t", 0, 1)]


def test_offset_delete_consumer_group_unknown_subscription_is_subscribed_to_everything():
    """4.3 / 3.16: unparseable "consumer" subscriptions -> treated as subscribed to all topics."""
    h = Harness()
    (m,) = h.stable_group(1, protocols=(("range", b"\xff"),))
    h.commit([("t", 0, 1)], member_id=m, generation=1)
    assert errors(h.delete_offsets([("t", 0)])) == [E.GROUP_SUBSCRIBED_TO_TOPIC]


def test_offset_delete_empty_group():
    h = Harness()
    h.commit([("t", 0, 1)])
    assert errors(h.delete_offsets([("t", 0)])) == [E.NONE]
    assert h.fetch(None).partitions == ()
    (event,) = h.events_of(OffsetsRemoved)
    assert event.reason == "offset_delete"


# ============================================================== topic deletion (onPartitionsDeleted)
def test_deleted_partitions_lose_their_offsets_in_every_group():
    """Kafka's OffsetMetadataManager.onPartitionsDeleted: every group forgets the deleted
    partitions' offsets; other topics and partitions are untouched; the groups stay."""
    h = Harness()
    h.commit([("t", 0, 1), ("t", 1, 2), ("u", 0, 3)], group_id="a")
    h.commit([("t", 1, 4)], group_id="b")
    h.commit([("u", 0, 5)], group_id="c")
    assert h.coord.partitions_deleted([("t", 0), ("t", 1), ("t", 2)], 10) == []
    assert offsets(h.fetch(None, group_id="a")) == [("u", 0, 3)]
    assert h.fetch(None, group_id="b").partitions == ()
    assert offsets(h.fetch(None, group_id="c")) == [("u", 0, 5)]
    assert sorted(h.coord.group_ids()) == ["a", "b", "c"]
    removed = {(e.group_id, e.partitions, e.reason) for e in h.events_of(OffsetsRemoved)}
    assert removed == {("a", (("t", 0), ("t", 1)), "partitions_deleted"),
                       ("b", (("t", 1),), "partitions_deleted")}


def test_group_left_without_offsets_by_topic_deletion_goes_at_the_next_retention_check():
    """An Empty group whose last offsets went with a deleted topic is removed by the periodic
    cleanup (it has nothing left to expire), not by the deletion itself."""
    h = Harness(offsets_retention_check_interval_ms=10_000)
    h.commit([("t", 0, 1)], now=0)
    h.coord.partitions_deleted([("t", 0)], 5_000)
    assert h.coord.group_ids() == ["g"]
    h.expire(10_000)
    assert h.coord.group_ids() == []
    assert [e.reason for e in h.events_of(GroupDeleted)] == ["retention"]


# ================================================================================ retention
def test_retention_simple_group_counts_from_commit_time_and_deletes_group():
    """4.3: simple group -> base = commit time; once every offset expired and the group is
    Empty it is deleted (ListGroups no longer shows it)."""
    h = Harness(offsets_retention_minutes=1, offsets_retention_check_interval_ms=10_000)
    h.commit([("t", 0, 1)], now=0)
    h.commit([("t", 1, 1)], now=25_000)
    h.expire(60_000)
    assert offsets(h.fetch(None, now=60_000)) == [("t", 1, 1)]
    h.expire(90_000)
    assert h.coord.group_ids() == []
    assert [e.reason for e in h.events_of(GroupDeleted)] == ["retention"]
    assert h.list_groups().groups == ()
    assert h.coord.next_deadline() is None  # no groups, no sweep


def test_retention_empty_group_counts_from_when_it_became_empty():
    """4.3: a group with a protocol type in Empty -> base = time it became Empty."""
    h = Harness(offsets_retention_minutes=1, offsets_retention_check_interval_ms=5_000)
    (m,) = h.stable_group(1)
    h.commit([("t", 0, 1)], member_id=m, generation=1, now=1000)
    h.heartbeat(m, 1, now=9000)
    h.leave(m, now=15_000)  # Empty since 15000
    h.expire(70_000)
    assert offsets(h.fetch(None)) == [("t", 0, 1)]
    h.expire(75_000)
    assert h.coord.group_ids() == []


def test_retention_stable_consumer_group_expires_only_unsubscribed_topics():
    """4.3: Stable "consumer" group with known subscriptions: unsubscribed topics expire from
    their commit time; subscribed ones never. Other states expire nothing."""
    h = Harness(offsets_retention_minutes=1, offsets_retention_check_interval_ms=60_000)
    (m,) = h.stable_group(1, session=1_800_000, protocols=(("range", subscription("t")),))
    h.commit([("t", 0, 1), ("gone", 0, 2)], member_id=m, generation=1, now=0)
    h.expire(60_000)
    assert offsets(h.fetch(None)) == [("t", 0, 1)]
    assert h.state() == "Stable"


def test_retention_preparing_rebalance_expires_nothing():
    h = Harness(offsets_retention_minutes=1, offsets_retention_check_interval_ms=60_000)
    a, b = h.stable_group(2, session=1_800_000, rebalance=1_000_000)
    h.commit([("gone", 0, 2)], member_id=a, generation=1, now=0)
    h.join(a, session=1_800_000, rebalance=1_000_000, now=1)
    h.expire(120_000)
    assert h.state() == "PreparingRebalance"
    assert offsets(h.fetch(None)) == [("gone", 0, 2)]


def test_retention_explicit_expire_timestamp_from_v2_4_commit():
    """4.3: an explicit RetentionTimeMs (v2-4) sets an expire timestamp that wins."""
    h = Harness(offsets_retention_check_interval_ms=1000)
    h.commit([("t", 0, 1)], retention=2500, now=0)
    h.expire(2000)
    assert offsets(h.fetch(None)) == [("t", 0, 1)]
    h.expire(3000)
    assert h.coord.group_ids() == []


def test_one_partition_member_commit_is_the_general_commit():
    """A member of a Stable group committing one partition (the coordinator's shortcut) stores,
    answers and reports exactly as the general path: the offset fetched back, NONE, one
    OffsetsCommitted, the session rescheduled; a too-long metadata, a stale generation and an
    unknown member still get 12, 22 and 25; the shared answer is the same each time."""
    h = Harness(offset_metadata_max_bytes=4)
    (m,) = h.stable_group(1)
    h.events.clear()
    first = h.commit([("t", 0, 5, "ab")], member_id=m, generation=1, now=40)
    assert errors(first) == [E.NONE]
    assert [(e.member_id, e.generation_id, e.offsets) for e in h.events_of(OffsetsCommitted)] == [
        (m, 1, (("t", 0, 5),))]
    assert h.coord.timer_deadlines()[("heartbeat", "g", m)] == 40 + 10_000
    assert h.commit([("t", 0, 6)], member_id=m, generation=1) == first
    assert offsets(h.fetch([("t", (0,))])) == [("t", 0, 6)]
    assert errors(h.commit([("t", 0, 7, "abcde")], member_id=m, generation=1)) == [E.OFFSET_METADATA_TOO_LARGE]
    assert errors(h.commit([("t", 0, 7)], member_id=m, generation=2)) == [E.ILLEGAL_GENERATION]
    assert errors(h.commit([("t", 0, 7)], member_id="x", generation=1)) == [E.UNKNOWN_MEMBER_ID]
    assert offsets(h.fetch([("t", (0,))])) == [("t", 0, 6)]
