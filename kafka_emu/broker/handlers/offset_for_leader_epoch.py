"""OffsetForLeaderEpoch v2-4: where the asked epoch ended on the leader (LeaderEpochFileCache
.endOffsetFor: the latest epoch ends at the log end; an older one where the next began; an
unknown one is -1/-1). A consumer sends it after a leader change to detect truncation (KIP-320),
with its CurrentLeaderEpoch: behind the leader's is FENCED_LEADER_EPOCH, ahead
UNKNOWN_LEADER_EPOCH; in a cluster a broker not leading the partition answers
NOT_LEADER_OR_FOLLOWER (broker/cluster.py), one broker leads everything.
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.offset_for_leader_epoch import (API, EpochEndOffset,
                                                          OffsetForLeaderEpochResponse,
                                                          OffsetForLeaderTopicResult)
from . import Handler


def _single_broker_epoch_error(log, current: int) -> ErrorCode | None:
    if current >= 0 and current < log.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if current > log.leader_epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return None


async def offset_for_leader_epoch(ctx, request) -> OffsetForLeaderEpochResponse:
    topics = ctx.broker.topics
    cluster = ctx.broker.cluster
    out = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            try:
                log = topics.partition(t.topic, p.partition)
                refused = (cluster.check_partition(ctx.connection.node_id, t.topic, p.partition,
                                                   p.current_leader_epoch) if cluster.multi
                           else _single_broker_epoch_error(log, p.current_leader_epoch))
                if refused is not None:
                    raise KafkaError(refused)
            except KafkaError as exc:
                parts.append(EpochEndOffset(error_code=exc.code, partition=p.partition))
                continue
            epoch, end = log.end_offset_for_epoch(p.leader_epoch)
            parts.append(EpochEndOffset(error_code=ErrorCode.NONE, partition=p.partition,
                                        leader_epoch=epoch, end_offset=end))
        out.append(OffsetForLeaderTopicResult(topic=t.topic, partitions=parts))
    return OffsetForLeaderEpochResponse(topics=out)


HANDLER = Handler(API, "2-4", offset_for_leader_epoch)
