"""confluent-kafka's ShareConsumer (librdkafka 2.16's KIP-932 share consumer) joining share groups
on kafka-emu: membership and assignment only (the records are SHARE-B's ShareFetch tests).

Two share consumers of a one-partition topic both get the partition (share groups assign a
partition to several members when they outnumber partitions); three consumers of a two-partition
topic cover both partitions, balanced; a consumer expired by the control plane is fenced and
rejoins under its own member id (KIP-1082: the client makes it); close() leaves the group (epoch
-1) and the Empty group is deleted with the admin client; the admin client's ListGroups sees the
group with protocol type "share". Assignments are read from the coordinator in the emulator's own
thread (ShareGroupDescribe has no confluent-kafka admin call)."""

from __future__ import annotations

import contextlib

import pytest

from confluent_kafka import KafkaError, KafkaException, ShareConsumer
from confluent_kafka.admin import AdminClient

from .helpers import unique, wait_until

pytestmark = pytest.mark.filterwarnings("ignore:list_groups\\(\\) is deprecated")


def members(emu, group_id) -> dict[str, tuple[int, dict]]:
    """member id -> (member epoch, {topic: partitions}) of the share group, read in the broker's
    thread."""
    def read():
        core = emu.broker.coordinator._core
        group = core.share_groups.get(group_id)
        if group is None:
            return {}
        return {m.member_id: (m.member_epoch, {t: set(p) for t, p in m.assigned.items()})
                for m in group.members.values()}
    return emu._run(read)


@contextlib.contextmanager
def share_consumers(emu, group_id, topic, n):
    consumers = []
    try:
        for _ in range(n):
            c = ShareConsumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group_id})
            c.subscribe([topic])
            consumers.append(c)
        yield consumers
    finally:
        for c in consumers:
            c.close()


def poll_all(consumers):
    for c in consumers:
        c.poll(0.05)


def settled(emu, group_id, n, consumers):
    """Wait until n members all hold partitions at the group's assignment epoch."""
    def check():
        state = members(emu, group_id)
        epochs = {e for e, _ in state.values()}
        if len(state) == n and len(epochs) == 1 and all(a for _, a in state.values()):
            return state
        return None
    return wait_until(check, timeout=30, tick=lambda: poll_all(consumers),
                      message=f"{n} share members with assignments")


def test_two_share_consumers_share_one_partition(kafka_emu_factory):
    topic, group_id = unique("t"), unique("sg")
    emu = kafka_emu_factory(topics={topic: 1})
    with share_consumers(emu, group_id, topic, 2) as consumers:
        state = settled(emu, group_id, 2, consumers)
        assert [a for _, a in state.values()] == [{topic: {0}}, {topic: {0}}]
        described = emu.describe_share_group(group_id)
        assert (described.state, described.assignor_name) == ("Stable", "simple")
        assert {m.member_id: m.assignment for m in described.members} == {
            m: ((topic, (0,)),) for m in state}
        for member_id in state:  # the client made its member id: a Uuid, 22 base64 characters
            assert len(member_id) == 22
        admin = AdminClient({"bootstrap.servers": emu.bootstrap_servers})
        # librdkafka's list_groups: ListGroups, then DescribeGroups v4 of each id, which Kafka
        # answers for a share group with a success-shaped Dead entry and no protocol type
        listed = {g.id: (g.state, g.protocol_type) for g in admin.list_groups(timeout=10)}
        assert listed[group_id] == ("Dead", "")
        # list_consumer_groups (ListGroups v5) keeps consumer-protocol groups only
        found = admin.list_consumer_groups(request_timeout=10).result()
        assert group_id not in [g.group_id for g in found.valid] and not found.errors
    # close() left the group: Empty, and deletable
    assert wait_until(lambda: members(emu, group_id) == {}, message="members gone") is True
    futures = admin.delete_consumer_groups([group_id], request_timeout=10)
    futures[group_id].result()
    assert emu._run(lambda: emu.broker.coordinator.group_type(group_id)) is None


def test_three_share_consumers_cover_two_partitions_balanced(kafka_emu_factory):
    topic, group_id = unique("t"), unique("sg")
    emu = kafka_emu_factory(topics={topic: 2})
    with share_consumers(emu, group_id, topic, 3) as consumers:
        state = settled(emu, group_id, 3, consumers)
        held = [p for _, a in state.values() for p in a[topic]]
        assert set(held) == {0, 1}
        # ceil(3 / 2) = 2 members per partition: 4 assignments, at most one apart per member
        assert len(held) == 4
        counts = sorted(len(a[topic]) for _, a in state.values())
        assert counts[-1] - counts[0] <= 1


def test_expired_share_consumer_rejoins_under_its_own_member_id(kafka_emu_factory):
    topic, group_id = unique("t"), unique("sg")
    emu = kafka_emu_factory(topics={topic: 2})
    with share_consumers(emu, group_id, topic, 2) as consumers:
        state = settled(emu, group_id, 2, consumers)
        victim = sorted(state)[0]
        epoch_before = max(e for e, _ in state.values())
        emu.expire_member(group_id, victim)
        assert victim not in members(emu, group_id)
        # its next heartbeat gets UNKNOWN_MEMBER_ID; it rejoins with epoch 0 and the same id
        after = settled(emu, group_id, 2, consumers)
        assert set(after) == set(state)
        assert min(e for e, _ in after.values()) > epoch_before


def test_share_consumer_fails_fatally_when_share_groups_are_off(kafka_emu_factory):
    """emu.share.version=0 (share.version finalized at 0): ShareGroupHeartbeat answers
    UNSUPPORTED_VERSION, which librdkafka's share consumer treats as fatal."""
    topic, group_id = unique("t"), unique("sg")
    emu = kafka_emu_factory({"emu.share.version": "0"}, topics={topic: 1})
    c = ShareConsumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group_id})
    c.subscribe([topic])
    try:
        with pytest.raises(KafkaException) as failed:
            wait_until(lambda: c.poll(0.1) and False, timeout=20, message="a fatal error")
        assert failed.value.args[0].code() == KafkaError.UNSUPPORTED_VERSION
        assert failed.value.args[0].fatal()
    finally:
        with contextlib.suppress(KafkaException):
            c.close()
    assert emu._run(lambda: emu.broker.coordinator.group_type(group_id)) is None


def test_control_plane_on_a_share_group(kafka_emu_factory):
    """The control plane lists the share group, shows it in the group view, and says what it is
    where an operation acts on classic groups only (KIP-345's static removal); expire_member works
    on it (above)."""
    from kafka_emu.control.operations import ControlError

    topic, group_id = unique("t"), unique("sg")
    emu = kafka_emu_factory(topics={topic: 1})
    with share_consumers(emu, group_id, topic, 1) as consumers:
        settled(emu, group_id, 1, consumers)
        [entry] = [g for g in emu.groups() if g["group_id"] == group_id]
        assert (entry["type"], entry["state"], entry["protocol_type"]) == ("share", "Stable", "share")
        view = emu.group_view(group_id)
        assert (view["type"], view["state"], len(view["members"])) == ("share", "Stable", 1)
        with pytest.raises(ControlError, match="is a share \\(KIP-932\\) group"):
            emu.remove_static_member(group_id, "i")


def test_a_silent_member_expires_on_the_emulator_clock(kafka_emu_factory):
    """A member whose heartbeats no longer count (as a hung client) is fenced when its
    group.share.session.timeout.ms (45 s) runs out on the emulator's clock -- reached at once with
    advance_to_next_deadline -- while the member still heartbeating stays; the survivor then
    holds both partitions. The silenced client, told UNKNOWN_MEMBER_ID, rejoins."""
    topic, group_id = unique("t"), unique("sg")
    emu = kafka_emu_factory(topics={topic: 2})
    with share_consumers(emu, group_id, topic, 2) as consumers:
        state = settled(emu, group_id, 2, consumers)
        victim, survivor = sorted(state)
        emu.ignore_heartbeats(group_id, victim)
        # the survivor heartbeats again (every 250 ms): its session then ends after the victim's
        wait_until(lambda: emu.deadlines(group_id, kind="session")[0]["member_id"] == victim,
                   tick=lambda: poll_all(consumers), message="the victim's session first")
        done = emu.advance_to_next_deadline(group_id, kind="session")
        assert done["deadline"]["member_id"] == victim
        assert victim not in members(emu, group_id)
        after = settled(emu, group_id, 2, consumers)  # the victim rejoined, a new member
        assert set(after) == {victim, survivor}
