"""ElectLeaders v0-2 (v1 election type and top-level ErrorCode, KIP-460; v2 flexible).

As the KRaft controller answers (ReplicationControlManager.electLeader): a preferred election
is ELECTION_NOT_NEEDED when the first replica already leads, else moves leadership to it when it
runs and is in the ISR (NONE, the leader epoch bumps, Metadata shows the new leader at once) or
is PREFERRED_LEADER_NOT_AVAILABLE; an unclean election is ELECTION_NOT_NEEDED for a partition
that has a leader and gives a leaderless one a running replica (ELIGIBLE_LEADERS_NOT_AVAILABLE
if none runs). An unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION. Errors carry
Kafka's default messages. Null partitions means every partition of every topic (internal ones
included), and then the partitions that needed no election are left out of the answer; the
others are reported, failures too. An election type other than preferred (0) or unclean (1) is
INVALID_REQUEST for the whole request. With one broker the only replica always leads, so every
election is ELECTION_NOT_NEEDED.
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.elect_leaders import (API, ElectLeadersResponse, PartitionResult,
                                                ReplicaElectionResult)
from . import Handler

PREFERRED, UNCLEAN = 0, 1

# Kafka's default messages for the codes an election answers (Errors)
_MESSAGES = {
    ErrorCode.ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE: "Eligible topic partition leaders are not available.",
}


def _elect(ctx, catalogue, topic: str, partition: int, unclean: bool) -> PartitionResult:
    found = catalogue.get(topic)
    if found is None:
        return PartitionResult(partition_id=partition,
                               error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                               error_message=f"No such topic as {topic}")
    if not 0 <= partition < found.num_partitions:
        return PartitionResult(partition_id=partition,
                               error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                               error_message=f"No such partition as {topic}-{partition}")
    if ctx.broker.cluster.multi:
        code = ctx.broker.cluster_moves.elect(found, partition, unclean)
    else:
        code = ErrorCode.ELECTION_NOT_NEEDED
    return PartitionResult(partition_id=partition, error_code=code,
                           error_message=_MESSAGES.get(code))


async def elect_leaders(ctx, request) -> ElectLeadersResponse:
    if request.election_type not in (PREFERRED, UNCLEAN):
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unknown election type {request.election_type}")
    catalogue = ctx.broker.topics.catalogue
    unclean = request.election_type == UNCLEAN
    if request.topic_partitions is None:
        # every partition; those that needed no election are left out
        results = []
        for t in list(catalogue):
            reported = []
            if ctx.broker.cluster.multi:
                for p in range(t.num_partitions):
                    result = _elect(ctx, catalogue, t.name, p, unclean)
                    if result.error_code != ErrorCode.ELECTION_NOT_NEEDED:
                        reported.append(result)
            results.append(ReplicaElectionResult(topic=t.name, partition_result=reported))
    else:
        results = [ReplicaElectionResult(topic=t.topic, partition_result=[
            _elect(ctx, catalogue, t.topic, p, unclean) for p in t.partitions])
            for t in request.topic_partitions]
    return ElectLeadersResponse(error_code=ErrorCode.NONE, replica_election_results=results)


HANDLER = Handler(API, "0-2", elect_leaders)
