"""Consumer groups: the group type of the new consumer group protocol (KIP-848).

Beside the classic groups and sharing their offsets, timers and observer. Members send one
request, ConsumerGroupHeartbeat; the coordinator computes a target assignment with a server-side
assignor and reconciles each member towards it with epochs (see ``model`` for the epochs and
states, ``reconcile`` for the rules, ``heartbeat`` for the request, ``assignors`` for uniform and
range, ``shared`` for offsets and the multi-group APIs, ``regex`` for SubscribedTopicRegex,
``regexes`` for the group's resolution of its patterns, ``migration`` for the conversions
between the classic and the consumer type, ``classic_members`` for classic-protocol members
inside a consumer group).

Consumer groups live in ``core.consumer_groups``; a group id names either a classic group
(``core.groups``) or a consumer group, never both.
"""

from .commands import (ConsumerGroupDescribe, ConsumerGroupDescribeResult, ConsumerGroupHeartbeat,
                       ConsumerGroupHeartbeatResult, DescribedConsumerGroup,
                       DescribedConsumerMember)
from .events import (ConsumerGroupStateChanged, GroupEpochBumped, MemberReconciled,
                     RegexResolved, TargetAssignmentComputed)
from . import loading
from .heartbeat import CLASSIC_JOIN, CLASSIC_SYNC, REBALANCE, SESSION, handle_heartbeat, on_timer
from .model import ConsumerGroup, ConsumerGroupState, ConsumerMember, MemberState
from .shared import SHARED_HANDLERS, delete_result, handle_describe, listed, on_retention

TIMER_KINDS = frozenset({SESSION, REBALANCE, CLASSIC_JOIN, CLASSIC_SYNC})

__all__ = [
    "ConsumerGroup", "ConsumerGroupDescribe", "ConsumerGroupDescribeResult",
    "ConsumerGroupHeartbeat", "ConsumerGroupHeartbeatResult", "ConsumerGroupState",
    "ConsumerGroupStateChanged", "ConsumerMember", "DescribedConsumerGroup",
    "DescribedConsumerMember", "GroupEpochBumped", "MemberReconciled", "MemberState", "RegexResolved",
    "SHARED_HANDLERS", "TIMER_KINDS", "TargetAssignmentComputed", "delete_result",
    "handle_describe", "handle_heartbeat", "listed", "loading", "on_retention", "on_timer",
]
