"""OffsetForLeaderEpoch v2-4: where the asked epoch ended on the leader (LeaderEpochFileCache
.endOffsetFor: the latest epoch ends at the log end; an older one where the next began; an
unknown one is -1/-1). A consumer sends it after a leader change to detect truncation (KIP-320),
with its CurrentLeaderEpoch: behind the leader's is FENCED_LEADER_EPOCH, ahead
UNKNOWN_LEADER_EPOCH; in a cluster a broker not leading the partition answers
NOT_LEADER_OR_FOLLOWER (broker/cluster.py), one broker leads everything.
"""

from __future__ import annotations

from operator import attrgetter

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.offset_for_leader_epoch import (API, EpochEndOffset,
                                                          OffsetForLeaderEpochResponse,
                                                          OffsetForLeaderTopicResult)
from . import Handler
from ._common import leader_log, per_partition


def _single_broker_epoch_error(log, current: int) -> ErrorCode | None:
    if current >= 0 and current < log.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if current > log.leader_epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return None


async def offset_for_leader_epoch(ctx, request) -> OffsetForLeaderEpochResponse:
    multi = ctx.broker.cluster.multi

    def answer(name: str, p) -> EpochEndOffset:
        log = leader_log(ctx, name, p.partition, p.current_leader_epoch)
        if not multi:  # one broker: the log's own epoch (a cluster checks its placement's)
            refused = _single_broker_epoch_error(log, p.current_leader_epoch)
            if refused is not None:
                raise KafkaError(refused)
        epoch, end = log.end_offset_for_epoch(p.leader_epoch)
        return EpochEndOffset(error_code=ErrorCode.NONE, partition=p.partition,
                              leader_epoch=epoch, end_offset=end)

    def failed(p, code: int) -> EpochEndOffset:
        return EpochEndOffset(error_code=code, partition=p.partition)

    return OffsetForLeaderEpochResponse(topics=per_partition(
        request.topics, attrgetter("topic"), answer, failed,
        lambda t, parts: OffsetForLeaderTopicResult(topic=t.topic, partitions=parts)))


HANDLER = Handler(API, "2-4", offset_for_leader_epoch)
