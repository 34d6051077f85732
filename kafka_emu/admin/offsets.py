"""A group's committed offsets, the log-end offsets and the lag, per partition.

What ``kafka-consumer-groups.sh --describe`` shows: every partition the group either owns (from
its members' assignments) or has committed to, with the committed offset (OffsetFetch at the
coordinator, all partitions: v2+ with null topics, v8+ as a batch of one group), the log-end
offset (ListOffsets latest, -1, at the bootstrap broker, and at their leaders -- found with
Metadata -- for the partitions it does not lead) and their difference. A broker that serves neither API gets no table (None).
"""

from __future__ import annotations

import attrs

from ..errors import ErrorCode
from ..protocol.messages.list_offsets import (ListOffsetsPartition, ListOffsetsRequest,
                                              ListOffsetsTopic)
from ..protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from ..protocol.messages.offset_fetch import (OffsetFetchRequest, OffsetFetchRequestGroup,
                                              OffsetFetchRequestTopic)
from .client import AdminClient, BrokerError
from .connection import BrokerConnection
from .model import GroupDescription, MemberDescription

LATEST = -1


@attrs.frozen(kw_only=True)
class PartitionOffsets:
    topic: str
    partition: int
    committed: int | None  # None: nothing committed
    log_end: int | None  # None: the broker did not say
    member: MemberDescription | None  # the member that owns it, if any

    @property
    def lag(self) -> int | None:
        if self.committed is None or self.log_end is None:
            return None
        return max(self.log_end - self.committed, 0)


def group_offsets(client: AdminClient, group: GroupDescription) -> list[PartitionOffsets] | None:
    """One row per partition the group owns or committed to, sorted by (topic, partition)."""
    _, host, port = client.find_coordinator(group.group_id)
    coordinator = client._coordinator(host, port)
    if not (coordinator.supports("OffsetFetch") and client.bootstrap.supports("ListOffsets")):
        return None
    owners = {(topic, p): m for m in group.members for topic, parts in (m.assignment or ())
              for p in parts}
    committed = _committed(coordinator, group.group_id, sorted(owners))
    partitions = sorted(set(owners) | set(committed))
    log_end, elsewhere = _log_end(client.bootstrap, partitions)
    for conn, led in _by_leader(client, elsewhere):  # a cluster: ask those partitions' leaders
        log_end.update(_log_end(conn, led)[0])
    return [PartitionOffsets(topic=t, partition=p, committed=committed.get((t, p)),
                             log_end=log_end.get((t, p)), member=owners.get((t, p)))
            for t, p in partitions]


def _committed(conn: BrokerConnection, group_id: str,
               owned: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    def build(version: int) -> OffsetFetchRequest:
        if version >= 8:
            return OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id=group_id,
                                                                      topics=None)])
        if version >= 2:
            return OffsetFetchRequest(group_id=group_id, topics=None)
        by_topic: dict[str, list[int]] = {}  # v0-1 cannot ask for "all": ask for the owned ones
        for topic, p in owned:
            by_topic.setdefault(topic, []).append(p)
        return OffsetFetchRequest(group_id=group_id, topics=[
            OffsetFetchRequestTopic(name=t, partition_indexes=ps) for t, ps in by_topic.items()])

    version, response = conn.request("OffsetFetch", build)
    if version >= 8:
        (found,) = response.groups
        error, topics = found.error_code, found.topics
    else:
        error, topics = getattr(response, "error_code", 0), response.topics
    if error != ErrorCode.NONE:
        raise BrokerError(error, f"OffsetFetch for group {group_id!r}")
    if version >= 10:  # KIP-848: topics by id; Metadata (v10+) names them
        _, meta = conn.request("Metadata", MetadataRequest(topics=None,
                                                           allow_auto_topic_creation=False))
        names = {t.topic_id: t.name for t in meta.topics}
        topics = [attrs.evolve(t, name=names[t.topic_id]) for t in topics if t.topic_id in names]
    return {(t.name, p.partition_index): p.committed_offset for t in topics for p in t.partitions
            if p.error_code == ErrorCode.NONE and p.committed_offset >= 0}


def _by_leader(client: AdminClient, partitions: list[tuple[str, int]]
               ) -> list[tuple[BrokerConnection, list[tuple[str, int]]]]:
    """(connection, partitions) per leading broker, from Metadata, for partitions the bootstrap
    broker answered NOT_LEADER_OR_FOLLOWER for (only a leader answers ListOffsets)."""
    if not partitions or not client.bootstrap.supports("Metadata"):
        return []
    topics = sorted({t for t, _ in partitions})
    _, meta = client.bootstrap.request("Metadata", MetadataRequest(
        topics=[MetadataRequestTopic(name=t) for t in topics], allow_auto_topic_creation=False))
    where = {b.node_id: (b.host, b.port) for b in meta.brokers}
    leader_of = {(t.name, p.partition_index): p.leader_id for t in meta.topics
                 for p in t.partitions}
    groups: dict[tuple[str, int] | None, list[tuple[str, int]]] = {}
    for tp in partitions:
        groups.setdefault(where.get(leader_of.get(tp, -1)), []).append(tp)
    return [(client._coordinator(*address), led) for address, led in groups.items()
            if address is not None]


def _log_end(conn: BrokerConnection, partitions: list[tuple[str, int]]
             ) -> tuple[dict[tuple[str, int], int], list[tuple[str, int]]]:
    """(log-end offset by partition, the partitions this broker does not lead)."""
    if not partitions:
        return {}, []
    by_topic: dict[str, list[int]] = {}
    for topic, p in partitions:
        by_topic.setdefault(topic, []).append(p)
    request = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[
        ListOffsetsTopic(name=t, partitions=[ListOffsetsPartition(partition_index=p,
                                                                  timestamp=LATEST) for p in ps])
        for t, ps in by_topic.items()])
    _, response = conn.request("ListOffsets", request)
    found = {(t.name, p.partition_index): p.offset for t in response.topics for p in t.partitions
             if p.error_code == ErrorCode.NONE and p.offset >= 0}
    not_led = [(t.name, p.partition_index) for t in response.topics for p in t.partitions
               if p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER]
    return found, not_led
