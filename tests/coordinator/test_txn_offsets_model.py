"""Pending transactional offsets against a model of Kafka's replay of ``__consumer_offsets``
(OffsetMetadataManager.replay / replayEndTransactionMarker): every commit is a record with an
increasing record offset; a transactional one goes to its producer's pending offsets; a
tombstone (OffsetDelete) removes the committed offset and every pending one of the partition; a
COMMIT marker moves the producer's pending offsets in, each only over an older record; ABORT
drops them. OffsetFetch shows the committed ones; require_stable marks pending partitions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_emu.coordinator import (CommitOffset, CompleteTxnOffsets, Coordinator,
                                   CoordinatorConfig, OffsetCommit, OffsetDelete, OffsetFetch,
                                   TxnOffsetCommit)
from kafka_emu.errors import ErrorCode as E

PIDS, PARTS = (1, 2, 3), (0, 1)
op = st.one_of(
    st.tuples(st.just("commit"), st.sampled_from(PARTS)),
    st.tuples(st.just("txn"), st.sampled_from(PIDS), st.sampled_from(PARTS)),
    st.tuples(st.just("end"), st.sampled_from(PIDS), st.booleans()),
    st.tuples(st.just("delete"), st.sampled_from(PARTS)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(op, max_size=40))
def test_pending_offsets_match_kafkas_replay(ops):
    coord = Coordinator(CoordinatorConfig())
    committed: dict[int, tuple[int, int]] = {}  # partition -> (offset, record offset)
    pending: dict[int, dict[int, tuple[int, int]]] = {}  # pid -> partition -> (offset, record)
    for record, o in enumerate(ops):
        value = 100 + record  # every write a different offset, so the winner is visible
        if o[0] == "commit":
            coord.handle(OffsetCommit(request_id=record, group_id="g", generation_id=-1,
                                      member_id="", group_instance_id=None,
                                      offsets=(CommitOffset(topic="t", partition=o[1],
                                                            offset=value),)), 0)
            committed[o[1]] = (value, record)
        elif o[0] == "txn":
            _, pid, part = o
            (reply,) = coord.handle(TxnOffsetCommit(
                request_id=record, group_id="g", producer_id=pid, producer_epoch=0,
                offsets=(CommitOffset(topic="t", partition=part, offset=value),)), 0)
            assert reply.result.partitions[0].error == E.NONE
            pending.setdefault(pid, {})[part] = (value, record)
        elif o[0] == "delete":
            coord.handle(OffsetDelete(request_id=record, group_id="g",
                                      partitions=(("t", o[1]),)), 0)
            committed.pop(o[1], None)
            for offsets in pending.values():
                offsets.pop(o[1], None)
        else:
            _, pid, commit = o
            coord.handle(CompleteTxnOffsets(request_id=record, group_id="g", producer_id=pid,
                                            committed=commit), 0)
            for part, (offset, rec) in pending.pop(pid, {}).items():
                if commit and (part not in committed or rec > committed[part][1]):
                    committed[part] = (offset, rec)
        for stable in (False, True):
            (reply,) = coord.handle(OffsetFetch(request_id="f", group_id="g",
                                                topics=(("t", PARTS),), require_stable=stable), 0)
            got = [(p.offset, p.error) for p in reply.result.partitions]
            want = []
            for part in PARTS:
                if stable and any(part in offsets for offsets in pending.values()):
                    want.append((-1, E.UNSTABLE_OFFSET_COMMIT))
                else:
                    want.append((committed.get(part, (-1, 0))[0], E.NONE))
            assert got == want, (o, stable)
