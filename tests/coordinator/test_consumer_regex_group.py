"""Regex subscriptions resolved once per consumer group (KIP-848; Kafka's
GroupMetadataManager.maybeUpdateRegularExpressions), in the pure coordinator with explicit time."""

from __future__ import annotations

from kafka_emu.coordinator import Coordinator, CoordinatorConfig
from kafka_emu.coordinator.consumer import RegexResolved
from kafka_emu.errors import ErrorCode as E

from .consumer_harness import CG, parts

PATTERN = "metrics-.*"


def observed(**config) -> tuple[CG, list]:
    g = CG(topics={"other": 2}, **config)
    events: list = []
    g.c = Coordinator(CoordinatorConfig(**config), observer=events.append,
                      new_member_uuid=lambda: "unused")
    return g, events


def join(g: CG, *members: str) -> dict[str, dict]:
    state = {}
    for m in members:
        r = g.hb(m, 0, subscribed_topic_regex=PATTERN)
        assert r.error == E.NONE, r
        state[m] = {"epoch": r.member_epoch, "owned": parts(r.assignment)}
    return state


def beat(g: CG, state: dict[str, dict], rounds: int = 6) -> dict[str, set]:
    """Every member heartbeats ``rounds`` times, reporting what it owns; what each owns after."""
    for _ in range(rounds):
        for m, s in state.items():
            r = g.hb(m, s["epoch"], owned={t: ps for t, ps in s["owned"].items()})
            assert r.error == E.NONE, r
            s["epoch"] = r.member_epoch
            if r.assignment is not None:
                s["owned"] = parts(r.assignment)
            g.now += 10
    return {m: {(t, p) for t, ps in s["owned"].items() for p in ps} for m, s in state.items()}


def each_partition_once(owned: dict[str, set], topics: dict[str, int]) -> bool:
    every = [tp for tps in owned.values() for tp in tps]
    wanted = {(t, p) for t, n in topics.items() for p in range(n)}
    return len(every) == len(set(every)) and set(every) == wanted


def test_two_members_subscribed_before_the_topic_exists_share_it():
    # The bug: each member resolved the pattern on its own heartbeat, so the first to see the new
    # topic took every partition and the second none, for good (the group epoch did not move).
    g = CG(topics={"other": 2})
    state = join(g, "a", "b")
    assert beat(g, state, rounds=2) == {"a": set(), "b": set()}
    g.topics["metrics-1"] = 4
    owned = beat(g, state)
    assert each_partition_once(owned, {"metrics-1": 4})
    assert len(owned["a"]) == len(owned["b"]) == 2


def test_topics_created_and_deleted_reassigned_to_every_pattern_member():
    g = CG(topics={"other": 2})
    state = join(g, "a", "b", "c")
    g.topics["metrics-1"] = 3
    assert each_partition_once(beat(g, state), {"metrics-1": 3})
    g.topics["metrics-2"] = 3
    owned = beat(g, state)
    assert each_partition_once(owned, {"metrics-1": 3, "metrics-2": 3})
    assert sorted(len(o) for o in owned.values()) == [2, 2, 2]
    del g.topics["metrics-1"]
    owned = beat(g, state)
    assert each_partition_once(owned, {"metrics-2": 3})
    g.topics["metrics-2"] = 6  # gains partitions: subscription metadata, not a resolution
    version = g.group().regex_version
    assert each_partition_once(beat(g, state), {"metrics-2": 6})
    assert g.group().regex_version == version


def test_a_pattern_new_to_the_group_is_assigned_on_the_second_heartbeat():
    # Kafka resolves a new pattern in the background, after the heartbeat that brought it
    # (librdkafka's 0045_subscribe_update resubscribe_with_regex expects this order).
    g, events = observed()
    g.topics["metrics-1"] = 2
    r = g.hb("a", 0, subscribed_topic_regex=PATTERN)
    assert (r.member_epoch, parts(r.assignment)) == (1, {})
    grp = g.group()
    assert grp.group_epoch == 2 and grp.assignment_epoch == 1 and grp.state.value == "Assigning"
    resolved = [e for e in events if isinstance(e, RegexResolved)]
    assert [(e.regex, e.topics, e.version) for e in resolved] == [(PATTERN, ("metrics-1",), 1)]
    r = g.hb("a", 1, owned={})
    assert (r.member_epoch, parts(r.assignment)) == (2, {"metrics-1": {0, 1}})


def test_a_pattern_the_group_resolved_already_is_used_at_once_without_resolving_again():
    g = CG(topics={"metrics-1": 4})
    state = join(g, "a")
    beat(g, state, rounds=2)
    grp = g.group()
    version, epoch = grp.regex_version, grp.group_epoch
    r = g.hb("b", 0, subscribed_topic_regex=PATTERN)
    assert r.error == E.NONE
    assert grp.group_epoch == epoch + 1 and grp.regex_version == version
    assert sum(len(ps) for ps in grp.target["b"].values()) == 2  # in the target at once
    assert grp.regex_subscribers == {PATTERN: 2}


def test_one_resolution_per_catalogue_change_for_the_whole_group():
    g, events = observed()
    state = join(g, "a", "b", "c")
    beat(g, state, rounds=1)
    before = len([e for e in events if isinstance(e, RegexResolved)])
    g.topics["metrics-1"] = 3
    beat(g, state, rounds=3)
    after = [e for e in events if isinstance(e, RegexResolved)]
    assert len(after) == before + 1 and after[-1].topics == ("metrics-1",)


def test_kafkas_minimum_interval_between_resolutions_on_request():
    g = CG(topics={"other": 2}, group_consumer_regex_min_refresh_interval_ms=10_000)
    state = join(g, "a")  # resolved now (t=1000): nothing matches
    resolved_at = g.group().regex_resolved_at_ms
    g.topics["metrics-1"] = 2
    g.now = resolved_at + 9_990
    assert beat(g, state, rounds=1) == {"a": set()}
    assert g.group().regex_resolved_at_ms == resolved_at
    g.now = resolved_at + 10_000
    assert beat(g, state, rounds=2) == {"a": {("metrics-1", 0), ("metrics-1", 1)}}


def test_refresh_interval_resolves_again_without_a_topic_change():
    g = CG(topics={"metrics-1": 2}, group_consumer_regex_refresh_interval_ms=10_000)
    state = join(g, "a")
    beat(g, state, rounds=1)
    grp = g.group()
    version, epoch = grp.regex_version, grp.group_epoch
    g.now = grp.regex_resolved_at_ms + 10_001
    beat(g, state, rounds=1)
    assert grp.regex_version == version + 1
    assert grp.group_epoch == epoch  # the same topics: no rebalance


def test_last_member_of_a_pattern_leaving_drops_its_resolution():
    g = CG(topics={"metrics-1": 2})
    state = join(g, "a", "b")
    beat(g, state, rounds=2)
    grp = g.group()
    assert set(grp.resolved_regexes) == {PATTERN}
    g.hb("a", -1, owned=None)
    assert grp.regex_subscribers == {PATTERN: 1} and set(grp.resolved_regexes) == {PATTERN}
    g.hb("b", state["b"]["epoch"], owned=None, names=("other",), subscribed_topic_regex="")
    assert grp.regex_subscribers == {} and grp.resolved_regexes == {}
    assert grp.topic_subscribers == {"other": 1}


def test_static_member_replaced_keeps_the_pattern_count():
    g = CG(topics={"metrics-1": 2})
    r = g.hb("a", 0, subscribed_topic_regex=PATTERN, instance_id="i")
    g.hb("a", r.member_epoch, owned={})
    g.hb("a", -2, owned=None, instance_id="i")
    r = g.hb("a2", 0, instance_id="i", subscribed_topic_regex=PATTERN)
    assert r.error == E.NONE and parts(r.assignment) == {"metrics-1": {0, 1}}
    assert g.group().regex_subscribers == {PATTERN: 1}
