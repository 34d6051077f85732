"""Share groups (KIP-932): the group and member entities, as Kafka 4.2's ShareGroup and
ShareGroupMember keep them.

A share group has the epochs of the modern protocol: the **group epoch**, bumped whenever what
the assignor sees changes (a member joins, leaves or changes its subscription; a subscribed
topic's partition count changes); the **assignment epoch**, the group epoch the **target
assignment** was last computed for; each member's **member epoch**. Unlike a consumer group
there is no revocation: a partition may be assigned to several members at once (the share-partition
hands out records, not partitions), so a member moves straight to its target at the assignment
epoch on its next heartbeat (Kafka's ShareGroupAssignmentBuilder).

State is derived (ShareGroup.maybeUpdateGroupState): Empty without members, else Stable.
"""

from __future__ import annotations

import enum

import attrs

# the modern protocol's pieces shared with consumer groups
from ..consumer.commands import as_partitions
from ..consumer.model import Assignment, normalized

LEAVE_EPOCH = -1
PROTOCOL_TYPE = "share"  # ListGroups' protocol type of a share group (ShareGroup.PROTOCOL_TYPE)
GROUP_TYPE = "share"


class ShareGroupState(enum.Enum):
    """``.value`` is the wire string (ListGroups, ShareGroupDescribe)."""

    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"

    @property
    def lower(self) -> str:
        return self.value.lower()


@attrs.define(eq=False)
class ShareMember:
    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    member_epoch: int = 0
    previous_member_epoch: int = 0
    assigned: Assignment = attrs.field(factory=dict)
    heartbeats_ignored: bool = False  # control plane: heartbeats no longer re-arm the session


@attrs.define(eq=False)
class ShareGroup:
    group_id: str
    created_at_ms: int = 0
    group_epoch: int = 0
    assignment_epoch: int = 0
    state: ShareGroupState = ShareGroupState.EMPTY
    state_since_ms: int = 0
    members: dict[str, ShareMember] = attrs.field(factory=dict)  # insertion order
    target: dict[str, Assignment] = attrs.field(factory=dict)  # member id -> target assignment
    # the partition counts of the subscribed topics last seen (Kafka's subscription metadata)
    subscription_metadata: dict[str, int] = attrs.field(factory=dict)
    # the session timeout its last heartbeat applied (the group config's or the broker's), so a
    # reload re-arms its members' sessions with it
    session_timeout_ms: int | None = None

    # topic -> how many members subscribe to it, kept by set_subscription so a heartbeat does
    # not walk every member
    topic_subscribers: dict[str, int] = attrs.field(factory=dict)

    def subscribed_topics(self) -> set[str]:
        return set(self.topic_subscribers)

    def set_subscription(self, member: ShareMember, names: tuple[str, ...]) -> None:
        """Change ``member``'s subscription (() when it goes), keeping the counts."""
        counts = self.topic_subscribers
        for topic in member.subscribed_topic_names:
            left = counts[topic] - 1
            if left:
                counts[topic] = left
            else:
                del counts[topic]
        for topic in names:
            counts[topic] = counts.get(topic, 0) + 1
        member.subscribed_topic_names = names

    def computed_state(self) -> ShareGroupState:
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY


__all__ = ["Assignment", "GROUP_TYPE", "LEAVE_EPOCH", "PROTOCOL_TYPE", "ShareGroup",
           "ShareGroupState", "ShareMember", "as_partitions", "normalized"]
