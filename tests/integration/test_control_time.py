"""Issue 9's acceptance: a consumer killed with SIGKILL is expired *now* by
``advance_to_next_deadline(group, kind="session")`` -- exactly that member -- and the survivor is
reassigned every partition, with confluent-kafka, kafka-python and aiokafka, while the session
timeout is 45 s (see session_expiry.py for the scenario; bench/bench_control.py times it)."""

from __future__ import annotations

import pytest

from . import session_expiry
from .helpers import unique


@pytest.mark.parametrize("client", session_expiry.CLIENTS)
def test_sigkilled_consumer_expires_on_advance_and_survivor_takes_all(kafka_emu_factory, client):
    topic, group = unique("crash"), unique("crash-group")
    emu = kafka_emu_factory(topics={topic: session_expiry.PARTITIONS})
    outcome = session_expiry.run(emu, client, group, topic)

    assert outcome.expired == [outcome.victim_id]
    assert outcome.advance["deadline"]["member_id"] == outcome.victim_id
    assert outcome.advance["deadline"]["kind"] == "session"
    assert [r["group_id"] for r in outcome.advance["rebalances_started"]] == [group]
    view = outcome.final_view
    assert [m["member_id"] for m in view["members"]] == [outcome.survivor_id]
    assert view["state"] == "Stable"
    # Far sooner than the 45 s session timeout would have taken (speed itself is the bench's).
    print(f"{client}: SIGKILL -> reassigned in {outcome.kill_to_reassigned_s:.2f} s "
          f"({session_expiry.SESSION_MS / 1000 / outcome.kill_to_reassigned_s:.0f}x sooner than "
          f"session.timeout.ms)")
    assert outcome.kill_to_reassigned_s < session_expiry.SESSION_MS / 1000
