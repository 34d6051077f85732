"""Cluster-wide reads and topic creation: what groups and topics exist.

``describe_group`` answers 404 for a group the coordinator does not know, where Kafka's
DescribeGroups answers state Dead: a control request naming a group that does not exist is
almost always a mistake in the test, and saying so beats an empty description.
"""

from __future__ import annotations

import attrs

from ... import coordinator as c
from ...admin.model import GROUP_STATES, canonical_state, decode_member_assignment
from ...errors import KafkaError
from ..operations import ControlError, operation


def _states(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(canonical_state(v) for v in values)  # ValueError names the known states


@attrs.frozen(kw_only=True)
class ListGroupsParams:
    states: tuple[str, ...] = attrs.field(
        default=(), converter=_states,
        metadata={"doc": f"only groups in these states (any of {', '.join(GROUP_STATES)})"})


@operation("GET", "/groups", ListGroupsParams)
def list_groups(broker, params: ListGroupsParams) -> list[dict]:
    """List the groups (id, protocol type and state), optionally only those in some states."""
    result = broker.query(c.ListGroups(request_id=broker.new_request_id(),
                                       states_filter=params.states))
    return [{"group_id": g.group_id, "protocol_type": g.protocol_type, "state": g.state}
            for g in sorted(result.groups, key=lambda g: g.group_id)]


@attrs.frozen(kw_only=True)
class GroupParams:
    group_id: str = attrs.field(metadata={"doc": "the group's id"})


@operation("GET", "/groups/{group_id}", GroupParams)
def describe_group(broker, params: GroupParams) -> dict:
    """Describe a group as DescribeGroups does, with members' assignments decoded."""
    result = broker.query(c.DescribeGroups(request_id=broker.new_request_id(),
                                           group_ids=(params.group_id,),
                                           not_found_is_error=False))
    group = result.groups[0]
    if group.state == "Dead" and not group.members:
        raise ControlError(f"group {params.group_id!r} does not exist", 404)
    members = []
    for m in group.members:
        assignment = decode_member_assignment(group.protocol_type, m.assignment)
        members.append({
            "member_id": m.member_id, "group_instance_id": m.group_instance_id,
            "client_id": m.client_id, "client_host": m.client_host,
            "assignment": None if assignment is None else {t: list(ps) for t, ps in assignment},
        })
    return {"group_id": group.group_id, "state": group.state,
            "protocol_type": group.protocol_type, "protocol": group.protocol_data,
            "members": members}


@operation("GET", "/topics")
def list_topics(broker, params) -> list[dict]:
    """List the topics with their ids and partition counts."""
    return [{"name": t.name, "topic_id": str(t.topic_id), "partitions": t.partitions}
            for t in sorted(broker.topics.all(), key=lambda t: t.name)]


@attrs.frozen(kw_only=True)
class CreateTopicParams:
    name: str = attrs.field(metadata={"doc": "the topic's name"})
    partitions: int = attrs.field(default=1, metadata={"doc": "how many partitions (>= 1)"})


@operation("POST", "/topics", CreateTopicParams)
def create_topic(broker, params: CreateTopicParams) -> dict:
    """Create a topic (409 if it exists, 400 for a bad name or fewer than 1 partition)."""
    if params.partitions < 1:
        raise ControlError(f"partitions must be at least 1, got {params.partitions}")
    if broker.topics.lookup(params.name) is not None:
        raise ControlError(f"topic {params.name!r} already exists", 409)
    try:
        info = broker.topics.create(params.name, params.partitions)
    except KafkaError as exc:  # an invalid or colliding name: nothing was created
        raise ControlError(f"cannot create topic {params.name!r}: {exc}") from None
    return {"name": info.name, "topic_id": str(info.topic_id), "partitions": info.partitions}
