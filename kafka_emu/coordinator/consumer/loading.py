"""A consumer group's coordinator moves: unloading and reloading (KIP-848 groups).

Kafka writes every change of a consumer group to ``__consumer_offsets`` as it makes it (the
group epoch, each member's subscription and current assignment with its member epoch and state,
the target assignment and its epoch), so the coordinator that loads the partition rebuilds the
group exactly as it last was. What it does not carry over are timers: the old coordinator
cancels them when it unloads the partition, and the new one restarts them when the group is
loaded (GroupMetadataManager.onLoaded): every member's session timeout from the load (the
group's own consumer.session.timeout.ms if it has one), and the
rebalance timeout of each member still revoking partitions (UNREVOKED_PARTITIONS), at its
current epoch. Members therefore keep their ids and epochs and go on heartbeating as before.

Here the group object itself stands for what was written, so unloading only stops its timers and
marks it unloaded; the broker's routing answers its members NOT_COORDINATOR and
COORDINATOR_LOAD_IN_PROGRESS meanwhile.
"""

from __future__ import annotations

from ..core import Core
from .epochs import cancel_member_timers, rebalance_key, session_key
from .model import ConsumerGroup, MemberState


def unload(core: Core, group: ConsumerGroup) -> None:
    """The old coordinator lets the group go: its timers stop (onUnloaded)."""
    group.unloaded = True
    for member_id in group.members:
        cancel_member_timers(core, group.group_id, member_id)


def load(core: Core, group: ConsumerGroup) -> None:
    """The new coordinator serves the group as stored, with its timers restarted (onLoaded)."""
    if not group.unloaded:
        return
    group.unloaded = False
    session_ms = group.session_timeout_ms or core.config.group_consumer_session_timeout_ms
    for member in group.members.values():
        # a classic member's session is its JoinGroup's session timeout (onLoaded reads it too)
        timeout = session_ms if member.classic is None else member.classic.session_timeout_ms
        core.timers.schedule(session_key(group.group_id, member.member_id), core.now + timeout)
        if member.state is MemberState.UNREVOKED_PARTITIONS and member.classic is None:
            core.timers.schedule(rebalance_key(group.group_id, member.member_id),
                                 core.now + max(member.rebalance_timeout_ms, 0),
                                 member.member_epoch)
