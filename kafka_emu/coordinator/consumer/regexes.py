"""A consumer group's regular expressions, resolved once for the group (KIP-848; Kafka's
GroupMetadataManager.maybeUpdateRegularExpressions, refreshRegularExpressions and
handleRegularExpressionsResult).

Members that subscribe by the same SubscribedTopicRegex share one resolution: the group keeps,
per pattern, how many members use it (``regex_subscribers``) and what it last resolved to
(``resolved_regexes``: the topics, the resolution's version and time, as Kafka's
ResolvedRegularExpression record). A member's subscribed topics are its names plus its pattern's
resolved topics; a pattern nobody has resolved yet contributes nothing.

Theory of operation, per heartbeat:

1. ``change_regex`` accounts for the member's new pattern: the last member leaving a pattern drops
   its resolution (Kafka's tombstone); a pattern the group already resolved bumps the group epoch
   (the member is assigned from it at once); a pattern new to the group asks for a resolution and
   bumps nothing, so the member gets nothing from it in this answer.
2. ``refresh_due`` decides whether the group resolves its patterns again after this heartbeat, as
   Kafka's conditions do: the group has patterns; the last resolution is at least
   ``group_consumer_regex_min_refresh_interval_ms`` old (Kafka's constant 10 s,
   REGEX_BATCH_REFRESH_MIN_INTERVAL_MS); and a pattern is unresolved, or the catalogue's topic
   names changed since the last resolution (Kafka: the metadata image has new topics), or
   ``group.consumer.regex.refresh.interval.ms`` passed.
3. ``resolve`` runs after the heartbeat's answer is made, standing for Kafka's background
   executor whose result lands between two heartbeats: every pattern of the group against the
   catalogue, one version for all; the members of a pattern whose topics changed get their new
   subscribed topics; the caller bumps the group epoch if a resolution or the subscribed topics'
   partition counts changed (members are assigned at their next heartbeat). So a member
   subscribing by a new pattern is assigned on its second heartbeat, as on Kafka (librdkafka's
   0045_subscribe_update resubscribe_with_regex checks that order).

Patterns are compiled and matched by ``regex`` (RE2, bounded cache); validity was checked when
the heartbeat was validated, so a pattern that fails to compile here resolves to no topics (Kafka
logs and ignores it).
"""

from __future__ import annotations

from typing import Mapping

import attrs

from .model import ConsumerGroup, ConsumerMember
from .regex import compile_topic_regex, matching_topics


@attrs.frozen(kw_only=True)
class ResolvedRegex:
    topics: frozenset[str]
    version: int  # the group's resolution count when it was resolved (Kafka: the image offset)
    timestamp_ms: int


def member_topics(group: ConsumerGroup, member: ConsumerMember) -> frozenset[str]:
    """The member's names plus what its pattern resolved to in the group."""
    regex = member.subscribed_topic_regex
    resolved = None if regex is None else group.resolved_regexes.get(regex)
    if resolved is None:
        return frozenset(member.subscribed_topic_names)
    return resolved.topics.union(member.subscribed_topic_names)


def set_subscribed(group: ConsumerGroup, member: ConsumerMember, topics: frozenset[str]) -> None:
    if topics == member.subscribed_topics:
        return
    counts = group.topic_subscribers
    for t in member.subscribed_topics - topics:
        counts[t] -= 1
        if counts[t] == 0:
            del counts[t]
    for t in topics - member.subscribed_topics:
        counts[t] = counts.get(t, 0) + 1
    member.subscribed_topics = topics


def change_regex(group: ConsumerGroup, old: str | None, new: str | None) -> tuple[bool, bool]:
    """A member's pattern went from ``old`` to ``new`` (None: none): (bump the group epoch,
    resolve the group's patterns)."""
    if old == new:
        return False, False
    subscribers = group.regex_subscribers
    if old is not None:
        subscribers[old] -= 1
        if subscribers[old] == 0:
            del subscribers[old]
            group.resolved_regexes.pop(old, None)
    bump = refresh = False
    if new is not None:
        if new in subscribers:
            bump = new in group.resolved_regexes
        else:
            refresh = True
        subscribers[new] = subscribers.get(new, 0) + 1
    return bump, refresh


def refresh_due(group: ConsumerGroup, topics: Mapping[str, int], now: int, *, requested: bool,
                min_interval_ms: int, refresh_interval_ms: int) -> bool:
    if not group.regex_subscribers:
        return False
    last = group.regex_resolved_at_ms
    if last is not None and now - last < min_interval_ms:
        return False
    if requested or len(group.resolved_regexes) != len(group.regex_subscribers):
        return True
    if last is not None and now - last > refresh_interval_ms:
        return True
    return topics.keys() != group.regex_catalogue


def resolve(group: ConsumerGroup, topics: Mapping[str, int], now: int) -> tuple[bool, list[str]]:
    """Resolve every pattern of the group against ``topics``: (some pattern's topics changed,
    the patterns resolved)."""
    version = group.regex_version + 1
    names = frozenset(topics)
    changed: set[str] = set()
    for pattern in group.regex_subscribers:
        compiled = compile_topic_regex(pattern)
        found = frozenset() if compiled is None else matching_topics(compiled, names)
        old = group.resolved_regexes.get(pattern)
        if found != (frozenset() if old is None else old.topics):
            changed.add(pattern)
        group.resolved_regexes[pattern] = ResolvedRegex(topics=found, version=version,
                                                        timestamp_ms=now)
    group.regex_version, group.regex_catalogue, group.regex_resolved_at_ms = version, names, now
    if changed:
        for member in group.members.values():
            if member.subscribed_topic_regex in changed:
                set_subscribed(group, member, member_topics(group, member))
    return bool(changed), list(group.regex_subscribers)
