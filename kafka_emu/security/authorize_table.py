"""THE table: which ACL operation on which resource each served API needs, and the error Kafka
answers when it is denied (KafkaApis, AclApis, the group and transaction coordinators' checks,
Kafka 4.2). ``authorize.py`` applies it before the handler; nothing else checks ACLs.

Three kinds of row:

- ``Whole``: the request as a whole; a denial fails it through the one error-response builder
  (GROUP_AUTHORIZATION_FAILED for a JoinGroup, CLUSTER_AUTHORIZATION_FAILED for ElectLeaders...).
- ``Split``: each entry of a request array (a topic of a Produce, a group of a DescribeGroups);
  denied entries are taken out before the handler and answered with the error, the rest served.
- ``After``: what a response shows depends on the ACLs (the topics of an all-topics Metadata,
  the groups ListGroups lists, authorized-operations bitfields): ``authorize.py``'s named
  response filters, run after the handler.

A row's ``need`` returns a ``Need`` -- the error, and the (operation, resource type, resource
name) of which ANY one allowed lets it through (CreateTopics: CREATE on the cluster or on the
topic; a name of None: on any resource of the type, Kafka's authorizeByResourceType) -- or a
list of Needs that must ALL pass, or None (nothing to check: a null transactional id, a topic
id this broker does not know).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ..errors import ErrorCode as E
from .acls import CLUSTER_NAME, AclOperation as Op, ResourceType as R

Need = tuple[E, tuple[tuple[Op, R, str | None], ...]]
ALL_VERSIONS = range(0, 1 << 15)


@attrs.frozen
class Whole:
    need: Callable[[Any, Any], Need | list[Need] | None]  # (request, broker)
    versions: range = ALL_VERSIONS


@attrs.frozen
class Split:
    field: str  # the request array
    need: Callable[[Any, Any, Any], Need | list[Need] | None]  # (entry, request, broker)
    versions: range = ALL_VERSIONS  # where the field exists
    # all or nothing: if any entry is denied, the handler is not run and the allowed entries
    # are answered with this error (AddPartitionsToTxn: OPERATION_NOT_ATTEMPTED)
    others: E | None = None
    message: str | None = None  # the denied entries' error message, where Kafka gives one


@attrs.frozen
class After:
    name: str  # a response filter of authorize.py


def group(op: Op, attr: str = "group_id") -> Callable[[Any, Any], Need | None]:
    def need(req, broker) -> Need | None:
        name = getattr(req, attr)
        # (a null group id -- ShareFetch -- is the handler's INVALID_REQUEST to answer)
        return None if name is None else (E.GROUP_AUTHORIZATION_FAILED, ((op, R.GROUP, name),))
    return need


def cluster(op: Op) -> Callable[[Any, Any], Need]:
    return lambda req, broker: (E.CLUSTER_AUTHORIZATION_FAILED, ((op, R.CLUSTER, CLUSTER_NAME),))


def txn_id(req, broker, attr: str = "transactional_id") -> Need | None:
    tid = getattr(req, attr, None)
    return (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ((Op.WRITE, R.TRANSACTIONAL_ID, tid),)) \
        if tid is not None else None


def producer_id(req, broker) -> Need:
    """InitProducerId: WRITE on its transactional id; without one (idempotence) IDEMPOTENT_WRITE
    on the cluster or WRITE on any topic (KIP-679)."""
    return txn_id(req, broker) or (E.CLUSTER_AUTHORIZATION_FAILED, (
        (Op.IDEMPOTENT_WRITE, R.CLUSTER, CLUSTER_NAME), (Op.WRITE, R.TOPIC, None)))


def topic_name(entry, broker) -> str | None:
    """A request entry's topic: its name, else its topic id as this broker knows it."""
    if isinstance(entry, str):
        return entry
    for attr in ("name", "topic"):
        name = getattr(entry, attr, None)
        if name:
            return name
    topic_id = getattr(entry, "topic_id", None)
    if topic_id is not None and topic_id.int:
        info = broker.topics.lookup_id(topic_id)
        return info.name if info is not None else None
    return None


def topic(op: Op) -> Callable[[Any, Any, Any], Need | None]:
    def need(entry, req, broker) -> Need | None:
        name = topic_name(entry, broker)
        return (E.TOPIC_AUTHORIZATION_FAILED, ((op, R.TOPIC, name),)) if name else None
    return need


def create_topic(entry, req, broker) -> Need:
    return (E.TOPIC_AUTHORIZATION_FAILED, ((Op.CREATE, R.CLUSTER, CLUSTER_NAME),
                                           (Op.CREATE, R.TOPIC, entry.name)))


def delete_topic(entry, req, broker) -> Need | None:
    """DELETE on the cluster or on the topic (ControllerApis.deleteTopics)."""
    name = topic_name(entry, broker)
    return (E.TOPIC_AUTHORIZATION_FAILED, ((Op.DELETE, R.CLUSTER, CLUSTER_NAME),
                                           (Op.DELETE, R.TOPIC, name))) if name else None


def subscribed_topics(req, broker) -> list[Need]:
    """ConsumerGroupHeartbeat: DESCRIBE on every subscribed topic name, else the whole request
    fails with TOPIC_AUTHORIZATION_FAILED (KafkaApis.handleConsumerGroupHeartbeat)."""
    return [(E.TOPIC_AUTHORIZATION_FAILED, ((Op.DESCRIBE, R.TOPIC, name),))
            for name in req.subscribed_topic_names or ()]


def metadata_topic(entry, req, broker) -> list[Need] | None:
    """A topic a Metadata request names: DESCRIBE on it; and if it does not exist and this
    request would create it, CREATE on the cluster or on the topic
    (KafkaApis.handleTopicMetadataRequest). Both denials read TOPIC_AUTHORIZATION_FAILED."""
    name = topic_name(entry, broker)
    if not name:
        return None
    needs = [(E.TOPIC_AUTHORIZATION_FAILED, ((Op.DESCRIBE, R.TOPIC, name),))]
    if (broker.config.auto_create_topics_enable and req.allow_auto_topic_creation
            and broker.topics.lookup(name) is None):
        needs.append((E.TOPIC_AUTHORIZATION_FAILED, ((Op.CREATE, R.CLUSTER, CLUSTER_NAME),
                                                     (Op.CREATE, R.TOPIC, name))))
    return needs


def groups(op: Op) -> Callable[[Any, Any, Any], Need]:
    return lambda entry, req, broker: (E.GROUP_AUTHORIZATION_FAILED, (
        (op, R.GROUP, entry if isinstance(entry, str) else entry.group_id),))


def coordinator_key(entry, req, broker) -> Need | None:
    """FindCoordinator: DESCRIBE on the group or the transactional id (v4+ per key)."""
    key = entry if isinstance(entry, str) else req.key
    if req.key_type == 1:
        return (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ((Op.DESCRIBE, R.TRANSACTIONAL_ID, key),))
    if req.key_type == 0:
        return (E.GROUP_AUTHORIZATION_FAILED, ((Op.DESCRIBE, R.GROUP, key),))
    return None  # share-partition keys: CLUSTER_ACTION on the whole request (TABLE)


# DescribeConfigs/AlterConfigs resource types (ConfigResource.Type) -> ACL resource and error
_CONFIG_RESOURCES = {2: (R.TOPIC, E.TOPIC_AUTHORIZATION_FAILED),
                     4: (R.CLUSTER, E.CLUSTER_AUTHORIZATION_FAILED),  # BROKER
                     8: (R.CLUSTER, E.CLUSTER_AUTHORIZATION_FAILED),  # BROKER_LOGGER
                     16: (R.CLUSTER, E.CLUSTER_AUTHORIZATION_FAILED),  # CLIENT_METRICS
                     32: (R.GROUP, E.GROUP_AUTHORIZATION_FAILED)}


def config_resource(op: Op) -> Callable[[Any, Any, Any], Need | None]:
    def need(entry, req, broker) -> Need | None:
        found = _CONFIG_RESOURCES.get(entry.resource_type)
        if found is None:
            return None  # the handler answers an unknown type
        rtype, error = found
        name = CLUSTER_NAME if rtype == R.CLUSTER else entry.resource_name
        return (error, ((op, rtype, name),))
    return need


READ_GROUP, DESCRIBE_GROUP = Whole(group(Op.READ)), Whole(group(Op.DESCRIBE))
OLD_VERSIONS, NEW_VERSIONS = range(0, 8), range(8, 1 << 15)

TABLE: dict[str, tuple[Whole | Split | After, ...]] = {
    "Produce": (Whole(txn_id), Split("topic_data", topic(Op.WRITE))),
    "Fetch": (Split("topics", topic(Op.READ)),),
    "ListOffsets": (Split("topics", topic(Op.DESCRIBE)),),
    "Metadata": (Split("topics", metadata_topic), After("metadata")),
    "OffsetCommit": (READ_GROUP, Split("topics", topic(Op.READ))),
    "OffsetFetch": (Whole(group(Op.DESCRIBE), OLD_VERSIONS),
                    Split("groups", groups(Op.DESCRIBE), NEW_VERSIONS), After("offset_fetch")),
    "FindCoordinator": (Whole(lambda req, b: coordinator_key(None, req, b), range(0, 4)),
                        # share-partition keys are inter-broker: CLUSTER_ACTION, whole request
                        Whole(lambda req, b: cluster(Op.CLUSTER_ACTION)(req, b)
                              if req.key_type == 2 else None),
                        Split("coordinator_keys", coordinator_key, range(4, 1 << 15))),
    "JoinGroup": (READ_GROUP,),
    "Heartbeat": (READ_GROUP,),
    "LeaveGroup": (READ_GROUP,),
    "SyncGroup": (READ_GROUP,),
    "DescribeGroups": (Split("groups", groups(Op.DESCRIBE)), After("group_operations")),
    "ListGroups": (After("list_groups"),),
    "CreateTopics": (Split("topics", create_topic, message="Authorization failed."),
                     After("created_topic_configs")),
    "DeleteTopics": (Split("topic_names", delete_topic, range(0, 6)),
                     Split("topics", delete_topic, range(6, 1 << 15))),
    "DeleteRecords": (Split("topics", topic(Op.DELETE)),),
    "InitProducerId": (Whole(producer_id),),
    "OffsetForLeaderEpoch": (Split("topics", topic(Op.DESCRIBE)),),
    "AddPartitionsToTxn": (  # v0-3 from producers; v4+ batches come from brokers
        Whole(lambda req, b: txn_id(req, b, "v3_and_below_transactional_id"), range(0, 4)),
        Split("v3_and_below_topics", topic(Op.WRITE), range(0, 4),
              others=E.OPERATION_NOT_ATTEMPTED),
        Whole(cluster(Op.CLUSTER_ACTION), range(4, 1 << 15))),
    "AddOffsetsToTxn": (Whole(txn_id), READ_GROUP),
    "EndTxn": (Whole(txn_id),),
    # from transaction coordinators (and kafka-transactions.sh abort): KafkaApis'
    # handleWriteTxnMarkersRequest authorizes CLUSTER_ACTION on the cluster for the whole request
    "WriteTxnMarkers": (Whole(cluster(Op.CLUSTER_ACTION)),),
    "TxnOffsetCommit": (Whole(txn_id), READ_GROUP, Split("topics", topic(Op.READ))),
    "DescribeAcls": (Whole(cluster(Op.DESCRIBE)),),
    "CreateAcls": (Whole(cluster(Op.ALTER)),),
    "DeleteAcls": (Whole(cluster(Op.ALTER)),),
    "DescribeConfigs": (Split("resources", config_resource(Op.DESCRIBE_CONFIGS)),),
    "AlterConfigs": (Split("resources", config_resource(Op.ALTER_CONFIGS)),),
    "IncrementalAlterConfigs": (Split("resources", config_resource(Op.ALTER_CONFIGS)),),
    "DescribeLogDirs": (Whole(cluster(Op.DESCRIBE)),),
    # KIP-1142: listing config resources of any type needs DESCRIBE_CONFIGS on the cluster
    "ListConfigResources": (Whole(cluster(Op.DESCRIBE_CONFIGS)),),
    "CreatePartitions": (Split("topics", topic(Op.ALTER)),),
    "DeleteGroups": (Split("groups_names", groups(Op.DELETE)),),
    "ElectLeaders": (Whole(cluster(Op.ALTER)),),
    "OffsetDelete": (Whole(group(Op.DELETE)), Split("topics", topic(Op.READ))),
    # served to anyone; its cluster operations are 0 without DESCRIBE on the cluster
    # (AuthHelper.computeDescribeClusterResponse)
    "DescribeCluster": (After("cluster_operations"),),
    "DescribeUserScramCredentials": (Whole(cluster(Op.DESCRIBE)),),
    "AlterUserScramCredentials": (Whole(cluster(Op.ALTER)),),
    "ConsumerGroupHeartbeat": (READ_GROUP, Whole(subscribed_topics)),
    "ConsumerGroupDescribe": (Split("group_ids", groups(Op.DESCRIBE)),
                              After("group_operations"), After("described_topics")),
    "DescribeTopicPartitions": (Split("topics", topic(Op.DESCRIBE)),
                                After("describe_topic_partitions")),
    "DescribeTransactions": (Split("transactional_ids", lambda e, req, b: (
        E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ((Op.DESCRIBE, R.TRANSACTIONAL_ID, e),))),
                             After("transaction_topics")),
    "ListTransactions": (After("list_transactions"),),
    "ShareGroupHeartbeat": (READ_GROUP, Whole(subscribed_topics)),
    "ShareFetch": (READ_GROUP, Split("topics", topic(Op.READ))),
    "ShareAcknowledge": (READ_GROUP, Split("topics", topic(Op.READ))),
    "ShareGroupDescribe": (Split("group_ids", groups(Op.DESCRIBE)), After("group_operations"),
                           After("described_topics")),
}
# Not checked, as on Kafka: ApiVersions, SaslHandshake, SaslAuthenticate (before any principal).
