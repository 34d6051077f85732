"""The transition table (reference 3.1), checked two ways:

1. ``Group.transition_to`` for every (from, to) pair: allowed exactly when the table says so.
2. Every (state x event) pair through the public API: each cell of EXPECTED states where the group
   ends up, and every StateChanged observed on the way must be a legal edge.
"""

from __future__ import annotations

import itertools

import pytest

from kafka_emu.coordinator import VALID_PREVIOUS, GroupState, IllegalStateTransition, StateChanged
from kafka_emu.coordinator.core import Core
from kafka_emu.coordinator.config import CoordinatorConfig
from kafka_emu.coordinator.group import Group

from .harness import Harness, subscription

S = GroupState

TABLE = {
    S.EMPTY: {S.PREPARING_REBALANCE},
    S.PREPARING_REBALANCE: {S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY},
    S.COMPLETING_REBALANCE: {S.PREPARING_REBALANCE},
    S.STABLE: {S.COMPLETING_REBALANCE},
    S.DEAD: set(S),
}


def test_valid_previous_matches_reference_table():
    assert {k: set(v) for k, v in VALID_PREVIOUS.items()} == TABLE


@pytest.mark.parametrize("old,new", list(itertools.product(S, S)), ids=lambda s: s.value)
def test_transition_to_enforces_table(old, new):
    group = Group("g", Core(CoordinatorConfig(), None, None))
    group.state = old  # test setup only: place the group in ``old`` directly
    if old in TABLE[new]:
        group.transition_to(new)
        assert group.state is new and group.previous_state is old
    else:
        with pytest.raises(IllegalStateTransition):
            group.transition_to(new)
        assert group.state is old


# ----------------------------------------------------------------- (state x event) through the API
LONG = 1_800_000
CHANGED = (("range", subscription("t", "extra")),)


def build(state: S, short_b_session: bool) -> tuple[Harness, str, str]:
    """A group "g" in ``state`` with leader a and follower b (b absent once Empty)."""
    h = Harness()
    b_session = 6000 if short_b_session else LONG
    rebalance = LONG if short_b_session else 20_000
    _, ra, _ = h.new_member(session=LONG, rebalance=rebalance)
    _, rb, _ = h.new_member(session=b_session, rebalance=rebalance)
    answered = h.tick()
    a, b = answered[ra].member_id, answered[rb].member_id
    if state is S.COMPLETING_REBALANCE:
        return h, a, b
    h.sync(b, 1)
    h.sync(a, 1, [(a, b"A"), (b, b"B")])
    if state is S.STABLE:
        return h, a, b
    if state is S.PREPARING_REBALANCE:
        h.join(a, session=LONG, rebalance=rebalance, now=100)
    elif state is S.EMPTY:
        h.leave(a, b, now=100)
    elif state is S.DEAD:
        h.coord.mark_dead("g", 100)
    assert h.group().state is state
    return h, a, b


def _expire_key(h: Harness, key) -> None:
    deadline = h.coord.timer_deadlines().get(key)
    if deadline is not None:
        h.expire(deadline)


EVENTS = {
    "join_new_v0": lambda h, a, b: h.join(v4=False, session=LONG, now=1000),
    "join_new_v4": lambda h, a, b: h.join(session=LONG, now=1000),
    "join_follower_same": lambda h, a, b: h.join(b, session=LONG, now=1000),
    "join_follower_changed": lambda h, a, b: h.join(b, protocols=CHANGED, session=LONG, now=1000),
    "join_leader": lambda h, a, b: h.join(a, session=LONG, now=1000),
    "sync_leader": lambda h, a, b: h.sync(a, h.group().generation, [(a, b"A")], now=1000),
    "sync_follower": lambda h, a, b: h.sync(b, h.group().generation, now=1000),
    "heartbeat": lambda h, a, b: h.heartbeat(b, h.group().generation, now=1000),
    "leave_follower": lambda h, a, b: h.leave(b, now=1000),
    "commit_follower": lambda h, a, b: h.commit([("t", 0, 1)], member_id=b, generation=h.group().generation, now=1000),
    "b_session_expires": lambda h, a, b: h.expire(7000),
    "join_timer": lambda h, a, b: _expire_key(h, ("join", "g")),
    "sync_timer": lambda h, a, b: _expire_key(h, ("sync", "g")),
    "delete_group": lambda h, a, b: h.delete_groups("g", now=1000),
    "mark_dead": lambda h, a, b: h.coord.mark_dead("g", 1000),
}

E_, P, C, ST, D = "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"
# Resulting state (DescribeGroups string; a deleted group reads "Dead").
EXPECTED = {
    S.EMPTY: {
        "join_new_v0": P, "join_new_v4": E_, "join_follower_same": E_, "join_follower_changed": E_,
        "join_leader": E_, "sync_leader": E_, "sync_follower": E_, "heartbeat": E_,
        "leave_follower": E_, "commit_follower": E_, "b_session_expires": E_, "join_timer": E_,
        "sync_timer": E_, "delete_group": D, "mark_dead": D,
    },
    S.PREPARING_REBALANCE: {
        "join_new_v0": P, "join_new_v4": P, "join_follower_same": C, "join_follower_changed": C,
        "join_leader": P, "sync_leader": P, "sync_follower": P, "heartbeat": P,
        "leave_follower": C, "commit_follower": P, "b_session_expires": C, "join_timer": C,
        "sync_timer": P, "delete_group": P, "mark_dead": D,
    },
    S.COMPLETING_REBALANCE: {
        "join_new_v0": P, "join_new_v4": C, "join_follower_same": C, "join_follower_changed": P,
        "join_leader": C, "sync_leader": ST, "sync_follower": C, "heartbeat": C,
        "leave_follower": P, "commit_follower": C, "b_session_expires": P, "join_timer": C,
        "sync_timer": E_, "delete_group": C, "mark_dead": D,
    },
    S.STABLE: {
        "join_new_v0": P, "join_new_v4": ST, "join_follower_same": ST, "join_follower_changed": P,
        "join_leader": P, "sync_leader": ST, "sync_follower": ST, "heartbeat": ST,
        "leave_follower": P, "commit_follower": ST, "b_session_expires": P, "join_timer": ST,
        "sync_timer": ST, "delete_group": ST, "mark_dead": D,
    },
    S.DEAD: {name: D for name in EVENTS},
}


@pytest.mark.parametrize("event", list(EVENTS))
@pytest.mark.parametrize("state", list(S), ids=lambda s: s.value)
def test_state_event_matrix(state, event):
    h, a, b = build(state, short_b_session=(event == "b_session_expires"))
    mark = len(h.events)
    EVENTS[event](h, a, b)
    assert h.state() == EXPECTED[state][event]
    for change in h.events[mark:]:
        if isinstance(change, StateChanged):
            assert change.old in VALID_PREVIOUS[change.new]
    group = h.group()
    if group is not None and group.state is S.EMPTY:
        assert not group.members
