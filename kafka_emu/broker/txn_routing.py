"""Which broker coordinates a transactional id, and the error the others answer.

As Kafka's TransactionStateManager.partitionFor: the id's ``__transaction_state`` partition is
``Utils.abs(transactionalId.hashCode()) % transaction.state.log.num.partitions``, and the
coordinator is that partition's leader; any other broker answers NOT_COORDINATOR (the client
then asks FindCoordinator again). ``__transaction_state`` is an internal topic created on first
need (the first FindCoordinator with key type TRANSACTION, or the first transactional request),
as Kafka creates it. With one broker every id is coordinated here and nothing is checked, but
the topic is still created, so Metadata lists it as on Kafka. A leader move of one of its
partitions (``ClusterMoves.move_leader``) moves the coordinator of the ids on it; the state is
shared, so the new coordinator knows them at once (no load time is emulated).
"""

from __future__ import annotations

from ..coordinator.java_order import string_hash
from ..errors import ErrorCode
from .cluster import TRANSACTION_STATE_TOPIC, java_abs

__all__ = ["TRANSACTION_STATE_TOPIC", "coordinator_of", "partition_for", "transaction_topic",
           "txn_error"]


def partition_for(transactional_id: str, partitions: int) -> int:
    return java_abs(string_hash(transactional_id)) % partitions


def transaction_topic(broker):
    catalogue = broker.topics.catalogue
    topic = catalogue.get(TRANSACTION_STATE_TOPIC)
    if topic is None:
        topic = catalogue.create_topic(TRANSACTION_STATE_TOPIC,
                                       broker.transactions.config.state_log_num_partitions)
    return topic


def coordinator_of(broker, transactional_id: str) -> int:
    """The node id coordinating the id (cluster.NO_LEADER while its partition has none)."""
    topic = transaction_topic(broker)
    partition = partition_for(transactional_id, len(topic.partitions))
    return broker.cluster.placement(topic.topic_id, TRANSACTION_STATE_TOPIC, partition).leader


def txn_error(ctx, transactional_id: str) -> ErrorCode | None:
    """NOT_COORDINATOR unless the broker asked coordinates the id (clusters only)."""
    broker = ctx.broker
    if not broker.cluster.multi:
        return None
    leader = coordinator_of(broker, transactional_id)
    node_id = ctx.connection.node_id
    here = broker.cluster.first_node_id if node_id is None else node_id
    return None if leader == here else ErrorCode.NOT_COORDINATOR
