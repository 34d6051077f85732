"""Drive consumer groups (KIP-848) in the pure coordinator with explicit time."""

from __future__ import annotations

import itertools

from kafka_emu.coordinator import Coordinator, CoordinatorConfig
from kafka_emu.coordinator.consumer import ConsumerGroupHeartbeat

_ids = itertools.count(1)


class CG:
    def __init__(self, topics=None, **config):
        self.c = Coordinator(CoordinatorConfig(**config), new_member_uuid=lambda: f"gen-{next(_ids)}")
        self.topics = dict(topics or {"t": 6})
        self.now = 1000

    def hb(self, member_id, epoch, *, owned=(), names=None, group="g", join_names=("t",), **kw):
        """One heartbeat; ``owned`` is a dict topic -> partitions, () for none, None for null."""
        if epoch == 0:
            kw.setdefault("rebalance_timeout_ms", 30_000)
            names = join_names if names is None and "subscribed_topic_regex" not in kw else names
        if isinstance(owned, dict):
            owned = tuple((t, tuple(sorted(ps))) for t, ps in owned.items())
        cmd = ConsumerGroupHeartbeat(request_id=next(_ids), group_id=group, member_id=member_id,
                                     member_epoch=epoch, owned=owned,
                                     subscribed_topic_names=names, topics=self.topics, **kw)
        replies = self.c.handle(cmd, self.now)
        assert len(replies) == 1 and replies[0].request_id == cmd.request_id
        return replies[0].result

    def other(self, cmd):
        replies = self.c.handle(cmd, self.now)
        return replies[0].result

    def advance(self, ms):
        self.now += ms
        return self.c.expire(self.now)

    def group(self, group="g"):
        return self.c._core.consumer_groups.get(group)

    def member(self, member_id, group="g"):
        return self.group(group).members[member_id]


def parts(assignment):
    """A heartbeat's assignment as {topic: set}."""
    return {t: set(ps) for t, ps in (assignment or ())}
