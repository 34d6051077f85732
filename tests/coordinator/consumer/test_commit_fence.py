"""KIP-1251 (Kafka 4.3): a consumer group accepts a commit with a lagging member epoch for the
partitions the member was assigned at that epoch or before and still holds. One scenario per
branch of ConsumerGroup.validateOffsetCommit and its per-partition validator, in the pure
coordinator with explicit time (the CG harness's clock)."""

from __future__ import annotations

from kafka_emu.coordinator import CommitOffset, OffsetCommit, OffsetFetch, TxnOffsetCommit
from kafka_emu.coordinator.consumer import MemberState
from kafka_emu.coordinator.consumer.commit_fence import validate_commit
from kafka_emu.coordinator.consumer.model import ClassicMetadata, ConsumerGroup, ConsumerMember
from kafka_emu.errors import ErrorCode as E

from ..consumer_harness import CG, parts


def commit(g: CG, member: str, epoch: int, *partitions: int, v9=True, metadata=None):
    result = g.other(OffsetCommit(
        request_id="c", group_id="g", generation_id=epoch, member_id=member,
        group_instance_id=None, supports_member_epochs=v9,
        offsets=tuple(CommitOffset(topic="t", partition=p, offset=10 + p, metadata=metadata)
                      for p in partitions)))
    return [p.error for p in result.partitions]


def txn(g: CG, member: str, epoch: int, *partitions: int):
    (reply,) = g.c.handle(TxnOffsetCommit(
        request_id="x", group_id="g", producer_id=1, producer_epoch=0, generation_id=epoch,
        member_id=member, offsets=tuple(CommitOffset(topic="t", partition=p, offset=1)
                                        for p in partitions)), g.now)
    return [p.error for p in reply.result.partitions]


def moved_on():
    """a (epoch 1, t0-5) shares with b: a keeps t0-2 (assigned at 1) and is at epoch 2; b holds
    t3-5, assigned at 2."""
    g = CG()
    assert g.hb("a", 0).member_epoch == 1
    assert g.hb("b", 0).member_epoch == 2
    r = g.hb("a", 1, owned={"t": set(range(6))})
    assert (r.member_epoch, parts(r.assignment)) == (1, {"t": {0, 1, 2}})
    assert g.hb("a", 1, owned={"t": {0, 1, 2}}).member_epoch == 2
    r = g.hb("b", 2, owned={})
    assert (r.member_epoch, parts(r.assignment)) == (2, {"t": {3, 4, 5}})
    assert g.member("a").assignment_epochs == {("t", 0): 1, ("t", 1): 1, ("t", 2): 1}
    assert g.member("b").assignment_epochs == {("t", 3): 2, ("t", 4): 2, ("t", 5): 2}
    return g


def test_lagging_commit_of_partitions_held_since_that_epoch_is_accepted():
    g = moved_on()
    assert commit(g, "a", 1, 0, 1, 2) == [E.NONE] * 3
    assert commit(g, "a", 2, 0) == [E.NONE]  # the current epoch, as before


def test_lagging_commit_of_a_partition_given_later_is_stale():
    g = moved_on()
    assert commit(g, "b", 1, 3) == [E.STALE_MEMBER_EPOCH]  # b got t3 at epoch 2
    assert commit(g, "b", 2, 3) == [E.NONE]


def test_lagging_commit_of_a_partition_no_longer_held_is_stale():
    g = moved_on()
    assert commit(g, "a", 1, 3) == [E.STALE_MEMBER_EPOCH]  # a gave t3 up


def test_one_refused_partition_refuses_the_whole_commit():
    g = moved_on()
    assert commit(g, "a", 1, 0, 3) == [E.STALE_MEMBER_EPOCH] * 2
    fetched = g.other(OffsetFetch(request_id="f", group_id="g", topics=(("t", (0,)),)))
    assert [p.offset for p in fetched.partitions] == [-1]  # nothing of it was written
    assert commit(g, "a", 1, 0) == [E.NONE]
    fetched = g.other(OffsetFetch(request_id="f", group_id="g", topics=(("t", (0,)),)))
    assert [p.offset for p in fetched.partitions] == [10]


def test_newer_epoch_stays_fenced():
    g = moved_on()
    assert commit(g, "a", 3, 0) == [E.STALE_MEMBER_EPOCH]


def test_offset_fetch_still_wants_the_current_epoch():
    g = moved_on()
    fetched = g.other(OffsetFetch(request_id="f", group_id="g", topics=(("t", (0,)),),
                                  member_id="a", member_epoch=1))
    assert fetched.error == E.STALE_MEMBER_EPOCH
    fetched = g.other(OffsetFetch(request_id="f", group_id="g", topics=(("t", (0,)),),
                                  member_id="a", member_epoch=2))
    assert fetched.error == E.NONE


def test_partition_pending_revocation_keeps_its_assignment_epoch():
    g = moved_on()
    assert g.hb("c", 0).member_epoch == 3
    r = g.hb("a", 2, owned={"t": {0, 1, 2}})
    member = g.member("a")
    assert (r.member_epoch, member.state) == (2, MemberState.UNREVOKED_PARTITIONS)
    assert member.pending_revocation == {"t": frozenset({2})}
    assert member.assignment_epochs[("t", 2)] == 1
    assert commit(g, "a", 1, 2) == [E.NONE]  # still a's, assigned at 1
    g.hb("a", 2, owned={"t": {0, 1}})  # revoked: a moves to epoch 3 without t2
    assert g.member("a").member_epoch == 3
    assert commit(g, "a", 1, 2) == [E.STALE_MEMBER_EPOCH]
    assert commit(g, "a", 2, 0, 1) == [E.NONE, E.NONE]


def test_partition_given_back_later_gets_the_new_epoch():
    g = moved_on()
    g.hb("b", -1, owned=None)  # b leaves: a gets t3-5 back at epoch 3
    r = g.hb("a", 2, owned={"t": {0, 1, 2}})
    assert (r.member_epoch, parts(r.assignment)) == (3, {"t": set(range(6))})
    assert g.member("a").assignment_epochs[("t", 3)] == 3
    assert commit(g, "a", 2, 3) == [E.STALE_MEMBER_EPOCH]
    assert commit(g, "a", 2, 0) == [E.NONE]


def test_unsupported_version_and_unknown_member_come_first():
    g = moved_on()
    assert commit(g, "a", 1, 0, v9=False) == [E.UNSUPPORTED_VERSION]
    assert commit(g, "zz", 1, 0) == [E.UNKNOWN_MEMBER_ID]


def test_oversized_metadata_partitions_are_not_checked():
    g = CG(offset_metadata_max_bytes=4)
    g.hb("a", 0)
    g.hb("b", 0)
    g.hb("a", 1, owned={"t": set(range(6))})
    g.hb("a", 1, owned={"t": {0, 1, 2}})  # a at epoch 2 with t0-2 from epoch 1
    # t3 is not a's, but its metadata is too large, so the validator never sees it
    (result,) = [g.other(OffsetCommit(
        request_id="c", group_id="g", generation_id=1, member_id="a", group_instance_id=None,
        offsets=(CommitOffset(topic="t", partition=0, offset=1),
                 CommitOffset(topic="t", partition=3, offset=1, metadata="too long"))))]
    assert [p.error for p in result.partitions] == [E.NONE, E.OFFSET_METADATA_TOO_LARGE]


def test_static_member_back_under_a_new_id_holds_its_partitions_from_epoch_0():
    g = CG()
    g.hb("a", 0, instance_id="i")
    g.hb("a", -2, owned=None, instance_id="i")
    assert g.member("a").assignment_epochs == {("t", p): 0 for p in range(6)}
    r = g.hb("a2", 0, instance_id="i")
    assert (r.error, parts(r.assignment)) == (E.NONE, {"t": set(range(6))})
    assert g.member("a2").assignment_epochs == {("t", p): 0 for p in range(6)}
    assert commit(g, "a", 1, 0) == [E.UNKNOWN_MEMBER_ID]  # the old id is gone


def test_txn_offset_commit_follows_the_same_rules_with_illegal_generation():
    g = moved_on()
    assert txn(g, "a", 1, 0, 1) == [E.NONE, E.NONE]
    assert txn(g, "b", 1, 3) == [E.ILLEGAL_GENERATION]
    assert txn(g, "a", 1, 3) == [E.ILLEGAL_GENERATION]
    assert txn(g, "a", 3, 0) == [E.ILLEGAL_GENERATION]
    # a producer that sent no consumer group metadata is not checked against members
    assert txn(g, "", -1, 0) == [E.NONE]


# ----------------------------------------------------------- the pure check, member by member
def group_with(member: ConsumerMember) -> ConsumerGroup:
    group = ConsumerGroup("g")
    group.members[member.member_id] = member
    group.claim(member)
    return group


def test_classic_member_inside_a_consumer_group_is_refused_with_illegal_generation():
    member = ConsumerMember("m", member_epoch=4, assigned={"t": frozenset({0})},
                            classic=ClassicMetadata(session_timeout_ms=10_000, protocols=()))
    group = group_with(member)
    member.member_epoch = 6  # a later epoch; t0 stays assigned at 4
    member.assigned = {"t": frozenset({0, 1})}
    group.claim(member)
    assert member.assignment_epochs == {("t", 0): 4, ("t", 1): 6}

    def check(epoch, *partitions, v9=True):
        return validate_commit(group, member_id="m", instance_id=None, epoch=epoch,
                               partitions=[("t", p) for p in partitions],
                               supports_member_epochs=v9)
    assert check(6, 0, 1) is None
    assert check(5, 0, v9=False) is None  # any version for a classic member
    assert check(5, 1) == E.ILLEGAL_GENERATION
    assert check(7, 0) == E.ILLEGAL_GENERATION
    assert check(3, 0) == E.ILLEGAL_GENERATION


def test_negative_epoch_commits_only_on_a_group_without_members():
    assert validate_commit(ConsumerGroup("g"), member_id="", instance_id=None, epoch=-1,
                           partitions=[("t", 0)]) is None
    group = group_with(ConsumerMember("m", member_epoch=2, assigned={"t": frozenset({0})}))
    assert validate_commit(group, member_id="", instance_id=None, epoch=-1,
                           partitions=[("t", 0)]) == E.UNKNOWN_MEMBER_ID
    # the member's own id with -1 is older than every assignment epoch
    assert validate_commit(group, member_id="m", instance_id=None, epoch=-1,
                           partitions=[("t", 0)]) == E.STALE_MEMBER_EPOCH
    # a transactional commit with an instance id is checked even without member id
    assert validate_commit(group, member_id="", instance_id="i", epoch=-1, transactional=True,
                           partitions=[("t", 0)]) == E.UNKNOWN_MEMBER_ID


def test_classic_members_of_an_upgraded_group_commit_at_their_old_generation():
    from .migration_harness import Mixed
    from .test_migration import rejoin

    m = Mixed()
    (c1, c2), gen = m.classic_group()
    assert m.hb("n1", 0).error == E.NONE  # converts the group; n1 bumps the epoch to gen + 1
    member = m.cgroup().members[c1]
    assert member.assignment_epochs == {("t", p): gen for p in (0, 1, 2)}  # the generation
    kept, g1 = rejoin(m, c1)
    assert g1 == gen + 1 and m.cgroup().members[c1].member_epoch == gen + 1
    (p,) = sorted(kept["t"])[:1]
    (gone,) = sorted({0, 1, 2} - kept["t"])[:1]

    def classic_commit(epoch, partition, v9=False):
        return m.commit(c1, epoch, {("t", partition): 9}, v9=v9).partitions[0].error
    assert classic_commit(gen, p) == E.NONE  # held since gen
    assert classic_commit(gen, gone) == E.ILLEGAL_GENERATION  # given up at the rejoin
    assert classic_commit(gen, 4) == E.ILLEGAL_GENERATION  # never its own
    assert classic_commit(gen + 2, p) == E.ILLEGAL_GENERATION  # newer than its epoch


def test_assignment_epochs_survive_a_coordinator_move():
    # Kafka 4.3 writes them with the member's current assignment (AssignmentEpochs beside each
    # topic's Partitions); here the group object is what was written
    g = moved_on()
    g.c.mark_dead("g", g.now)
    g.advance(60_000)
    g.c.load_group("g", g.now)
    assert g.member("a").assignment_epochs == {("t", 0): 1, ("t", 1): 1, ("t", 2): 1}
    assert commit(g, "a", 1, 0) == [E.NONE]
    assert commit(g, "b", 1, 3) == [E.STALE_MEMBER_EPOCH]
