"""TxnOffsetCommit v0-5: v2 leader epoch; v3 generation, member id, group instance id (KIP-447
fencing; flexible); v4 TRANSACTION_ABORTABLE may be answered (older versions get
INVALID_TXN_STATE instead); v5 is sent by transactions-v2 producers, which add the group to the
transaction by this request (KIP-890 part 2) instead of AddOffsetsToTxn.

As KafkaApis.handleTxnOffsetCommitRequest and GroupCoordinatorService.commitTransactionalOffsets:
partitions of unknown topics get UNKNOWN_TOPIC_OR_PARTITION at the front end; an empty group id
is INVALID_GROUP_ID for every partition; then, with transaction.partition.verification.enable,
the transaction coordinator is asked whether the group is part of the producer's transaction
(PRODUCER_FENCED answered as INVALID_PRODUCER_EPOCH, as AddPartitionsToTxnManager does); the
rest is the group coordinator's (coordinator/txn_offsets.py): producer epoch, KIP-447 member
checks, the pending offsets.
"""

from __future__ import annotations

from functools import partial

from ... import coordinator as c
from ...errors import ErrorCode
from ...protocol.messages.txn_offset_commit import (API, TxnOffsetCommitResponse,
                                                    TxnOffsetCommitResponsePartition,
                                                    TxnOffsetCommitResponseTopic)
from . import Handler
from ._common import by_topic, split_known_partitions


def answers_transaction_abortable(version: int) -> bool:
    """v4+ (KIP-890): older clients get INVALID_TXN_STATE for TRANSACTION_ABORTABLE."""
    return version >= 4


def adds_group_to_transaction(version: int) -> bool:
    """v5: a transactions-v2 producer sends no AddOffsetsToTxn (KIP-890 part 2)."""
    return version >= 5


def verification_enabled(broker) -> bool:
    return getattr(broker.config, "transaction_partition_verification_enable", True)


def _render(order, rejected: dict, result) -> TxnOffsetCommitResponse:
    errors = dict(rejected)
    if result is not None:
        errors.update({(p.topic, p.partition): p.error for p in result.partitions})
    return TxnOffsetCommitResponse(topics=by_topic(
        order, errors, TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic))


def _verify(ctx, request) -> ErrorCode:
    """The group's part in the producer's transaction, as the transaction coordinator sees it
    (NONE when verification is off or the coordinator cannot be asked)."""
    transactions = getattr(ctx.broker, "transactions", None)
    if transactions is None or not verification_enabled(ctx.broker):
        return ErrorCode.NONE
    args = (request.transactional_id, request.producer_id, request.producer_epoch,
            request.group_id)
    if adds_group_to_transaction(ctx.version):
        add = getattr(transactions, "add_group_implicitly", None)
        if add is None:
            return ErrorCode.NONE
        error = ErrorCode(add(*args, now_ms=ctx.now_ms()))
    else:
        verify = getattr(transactions, "verify_group", None)
        if verify is None:
            return ErrorCode.NONE
        error = ErrorCode(verify(*args))
    if error == ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if error == ErrorCode.TRANSACTION_ABORTABLE and not answers_transaction_abortable(ctx.version):
        return ErrorCode.INVALID_TXN_STATE
    return error


async def txn_offset_commit(ctx, request) -> TxnOffsetCommitResponse:
    order, rejected, known = split_known_partitions(ctx, request.topics)
    if not known:
        return _render(order, rejected, None)
    error = ErrorCode.INVALID_GROUP_ID if not request.group_id else _verify(ctx, request)
    if error != ErrorCode.NONE:
        for t, p in known:
            rejected[(t.name, p.partition_index)] = error
        return _render(order, rejected, None)
    command = c.TxnOffsetCommit(
        request_id=ctx.request_id, group_id=request.group_id, producer_id=request.producer_id,
        producer_epoch=request.producer_epoch, generation_id=request.generation_id,
        member_id=request.member_id, group_instance_id=request.group_instance_id,
        offsets=tuple(c.CommitOffset(topic=t.name, partition=p.partition_index,
                                     offset=p.committed_offset,
                                     leader_epoch=p.committed_leader_epoch,
                                     metadata=p.committed_metadata) for t, p in known))
    return await ctx.submit(command, partial(_render, order, rejected))


HANDLER = Handler(API, "0-5", txn_offset_commit)
