"""TxnOffsetCommit and CompleteTxnOffsets in the pure coordinator (KIP-98, KIP-447), explicit
time. Error rows follow Kafka 4.2's OffsetMetadataManager.validateTransactionalOffsetCommit,
ClassicGroup.validateOffsetCommit(isTransactional=true) and ConsumerGroup.validateOffsetCommit."""

from __future__ import annotations

from kafka_emu.coordinator import (CommitOffset, CompleteTxnOffsets, OffsetCommit, OffsetDelete,
                                   OffsetFetch, OffsetsCommitted, TxnOffsetCommit)
from kafka_emu.errors import ErrorCode as E

from .consumer_harness import CG
from .harness import Harness


def txn_commit(h: Harness, *, pid=7, epoch=0, offset=5, group="g", gen=-1, member="",
               instance=None, topic="t", partition=0, metadata="m"):
    (result,) = h._run(TxnOffsetCommit(
        request_id=h.rid(), group_id=group, producer_id=pid, producer_epoch=epoch,
        generation_id=gen, member_id=member, group_instance_id=instance,
        offsets=(CommitOffset(topic=topic, partition=partition, offset=offset,
                              metadata=metadata),)), None).values()
    return [p.error for p in result.partitions]


def complete(h: Harness, committed: bool, *, pid=7, epoch=-1, group="g"):
    (result,) = h._run(CompleteTxnOffsets(request_id=h.rid(), group_id=group, producer_id=pid,
                                          producer_epoch=epoch, committed=committed),
                       None).values()
    assert result.error == E.NONE
    return result


def fetch(h: Harness, *, stable=False, group="g", topics=(("t", (0,)),)):
    (result,) = h._run(OffsetFetch(request_id=h.rid(), group_id=group, topics=topics,
                                   require_stable=stable), None).values()
    return [(p.offset, p.error) for p in result.partitions]


def test_pending_offsets_are_invisible_until_the_commit_marker():
    h = Harness()
    assert txn_commit(h) == [E.NONE]
    assert fetch(h) == [(-1, E.NONE)]
    assert fetch(h, stable=True) == [(-1, E.UNSTABLE_OFFSET_COMMIT)]
    assert fetch(h, stable=True, topics=(("t", (1,)),)) == [(-1, E.NONE)]  # other partition
    complete(h, True)
    assert fetch(h, stable=True) == [(5, E.NONE)]
    committed = h.events_of(OffsetsCommitted)
    assert committed[-1].offsets == (("t", 0, 5),)


def test_abort_drops_pending_offsets_and_keeps_the_committed_one():
    h = Harness()
    h._run(OffsetCommit(
        request_id=h.rid(), group_id="g", generation_id=-1, member_id="", group_instance_id=None,
        offsets=(CommitOffset(topic="t", partition=0, offset=3),)), None)
    txn_commit(h, offset=9)
    assert fetch(h) == [(3, E.NONE)]
    complete(h, False)
    assert fetch(h, stable=True) == [(3, E.NONE)]
    complete(h, True)  # nothing pending any more: a no-op
    assert fetch(h) == [(3, E.NONE)]


def test_fetch_all_with_require_stable_marks_pending_partitions():
    h = Harness()
    h._run(OffsetCommit(request_id=h.rid(), group_id="g", generation_id=-1, member_id="",
                        group_instance_id=None,
                        offsets=(CommitOffset(topic="t", partition=0, offset=1),
                                 CommitOffset(topic="t", partition=1, offset=2))), None)
    txn_commit(h, partition=1, offset=8)
    assert fetch(h, stable=True, topics=None) == [(1, E.NONE), (-1, E.UNSTABLE_OFFSET_COMMIT)]
    assert fetch(h, topics=None) == [(1, E.NONE), (2, E.NONE)]


def test_plain_commit_after_the_txn_offset_wins_at_commit_marker():
    h = Harness()
    txn_commit(h, offset=9)
    h._run(OffsetCommit(request_id=h.rid(), group_id="g", generation_id=-1, member_id="",
                        group_instance_id=None,
                        offsets=(CommitOffset(topic="t", partition=0, offset=4),)), None)
    complete(h, True)
    assert fetch(h) == [(4, E.NONE)]


def test_offset_delete_drops_pending_offsets_of_the_partition():
    h = Harness()
    txn_commit(h, offset=9)
    h._run(OffsetDelete(request_id=h.rid(), group_id="g", partitions=(("t", 0),)), None)
    assert fetch(h, stable=True) == [(-1, E.NONE)]
    complete(h, True)
    assert fetch(h) == [(-1, E.NONE)]


def test_pending_offsets_are_per_producer_and_per_group():
    h = Harness()
    txn_commit(h, pid=1, offset=10)
    txn_commit(h, pid=2, offset=20, partition=1)
    txn_commit(h, pid=1, offset=30, group="other")
    complete(h, True, pid=1)
    assert fetch(h, topics=(("t", (0, 1)),)) == [(10, E.NONE), (-1, E.NONE)]
    assert fetch(h, stable=True, group="other") == [(-1, E.UNSTABLE_OFFSET_COMMIT)]
    complete(h, True, pid=1, group="other")
    assert fetch(h, group="other") == [(30, E.NONE)]


def test_stale_producer_epoch_is_invalid_producer_epoch():
    h = Harness()
    assert txn_commit(h, epoch=3) == [E.NONE]
    assert txn_commit(h, epoch=2) == [E.INVALID_PRODUCER_EPOCH]
    complete(h, True, epoch=4)  # a TV2 marker carries the bumped epoch
    assert txn_commit(h, epoch=3) == [E.INVALID_PRODUCER_EPOCH]
    assert txn_commit(h, epoch=4) == [E.NONE]


def test_unknown_group_with_generation_is_illegal_generation_without_creates_simple_group():
    h = Harness()
    assert txn_commit(h, gen=1, member="m") == [E.ILLEGAL_GENERATION]
    assert txn_commit(h, gen=-1) == [E.NONE]
    assert h.group("g") is not None and h.state() == "Empty"


def test_metadata_too_large_per_partition():
    h = Harness(offset_metadata_max_bytes=4)
    assert txn_commit(h, metadata="12345") == [E.OFFSET_METADATA_TOO_LARGE]
    assert fetch(h, stable=True) == [(-1, E.NONE)]


def test_classic_group_kip447_fencing():
    h = Harness()
    (m,) = h.stable_group(1)
    assert txn_commit(h, gen=1, member=m) == [E.NONE]
    assert txn_commit(h, gen=2, member=m) == [E.ILLEGAL_GENERATION]
    assert txn_commit(h, gen=1, member="zombie") == [E.UNKNOWN_MEMBER_ID]
    # v0-2 carry no member fields: accepted in a non-empty group (not UNKNOWN_MEMBER_ID)
    assert txn_commit(h) == [E.NONE]


def test_classic_static_member_fenced_instance_id():
    h = Harness()
    h.stable_group(1, static=True)
    member = next(iter(h.group().members))
    assert txn_commit(h, gen=1, member="other", instance="i0") == [E.FENCED_INSTANCE_ID]
    assert txn_commit(h, gen=1, member=member, instance="i9") == [E.UNKNOWN_MEMBER_ID]
    assert txn_commit(h, gen=1, member=member, instance="i0") == [E.NONE]


def test_classic_completing_rebalance_is_not_rebalance_in_progress():
    h = Harness()
    _, rid, _ = h.new_member()
    h.tick()  # the join completes: CompletingRebalance until the leader syncs
    assert h.state() == "CompletingRebalance"
    (member,) = h.group().members
    assert txn_commit(h, gen=1, member=member) == [E.NONE]


def txn_on(g: CG, *, gen, member):
    (reply,) = g.c.handle(TxnOffsetCommit(
        request_id="x", group_id="g", producer_id=1, producer_epoch=0, generation_id=gen,
        member_id=member, offsets=(CommitOffset(topic="t", partition=0, offset=1),)), g.now)
    return reply.result.partitions[0].error


def test_consumer_group_member_epoch_checks():
    g = CG()
    result = g.hb("a", 0)
    assert result.error == E.NONE
    epoch = result.member_epoch
    assert txn_on(g, gen=epoch, member="a") == E.NONE
    assert txn_on(g, gen=epoch + 1, member="a") == E.ILLEGAL_GENERATION  # stale epoch
    assert txn_on(g, gen=epoch, member="nobody") == E.UNKNOWN_MEMBER_ID
    # no member fields at all (a producer without consumer group metadata): not checked
    assert txn_on(g, gen=-1, member="") == E.NONE


def test_consumer_group_without_members_accepts_negative_epoch():
    g = CG()
    g.hb("a", 0)
    g.hb("a", -1)  # leaves
    assert txn_on(g, gen=-1, member="") == E.NONE


def test_consumer_group_offset_fetch_require_stable():
    from kafka_emu.coordinator import CompleteTxnOffsets, OffsetFetch
    g = CG()
    epoch = g.hb("a", 0).member_epoch
    assert txn_on(g, gen=epoch, member="a") == E.NONE

    def fetch(stable):
        (reply,) = g.c.handle(OffsetFetch(request_id="f", group_id="g", topics=(("t", (0,)),),
                                          require_stable=stable), g.now)
        return [(p.offset, p.error) for p in reply.result.partitions]
    assert fetch(True) == [(-1, E.UNSTABLE_OFFSET_COMMIT)]
    assert fetch(False) == [(-1, E.NONE)]
    g.c.handle(CompleteTxnOffsets(request_id="c", group_id="g", producer_id=1, committed=True),
               g.now)
    assert fetch(True) == [(1, E.NONE)]


def test_retention_keeps_an_empty_group_with_pending_offsets():
    h = Harness(offsets_retention_minutes=1, offsets_retention_check_interval_ms=1_000)
    txn_commit(h, offset=9)  # creates the simple group, Empty
    h.expire(10 * 60_000)
    assert h.group("g") is not None  # an open transaction holds pending offsets in it
    complete(h, False)
    h.expire(20 * 60_000)
    assert h.group("g") is None
