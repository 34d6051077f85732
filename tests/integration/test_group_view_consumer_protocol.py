"""The control plane's group view and wait_for_group on a consumer-protocol (KIP-848) group of real
confluent-kafka consumers (group.protocol=consumer): state, members with their epochs and
assignments, committed offsets, log-end offsets and lag, as the consumers themselves see them;
and on a share group (KIP-932) of confluent-kafka ShareConsumers: the share-partition's start
offset and the lag from it."""

from __future__ import annotations

import pytest
import confluent_kafka
import httpx
import jsonschema
from confluent_kafka import Consumer, Producer, TopicPartition

from kafka_emu.control.openapi import result_schema
from kafka_emu.control.operations import all_operations

PARTITIONS = 4
PER_PARTITION = 10
SETTINGS = {"group.consumer.min.session.timeout.ms": 1000,
            "group.consumer.session.timeout.ms": 6000,
            "group.consumer.min.heartbeat.interval.ms": 100,
            "group.consumer.heartbeat.interval.ms": 200}

if tuple(int(x) for x in __import__("confluent_kafka").libversion()[0].split(".")[:2]) < (2, 4):
    pytest.skip("librdkafka < 2.4 has no group.protocol=consumer", allow_module_level=True)


def produce(emu, topic: str, partition: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": emu.bootstrap_servers})
    for i in range(count):
        producer.produce(topic, value=f"{partition}-{i}".encode(), partition=partition)
    assert producer.flush(10) == 0


def test_group_view_and_wait_for_group_on_a_consumer_protocol_group(kafka_emu_factory,
                                                                     topic_name, group_id):
    emu = kafka_emu_factory(SETTINGS, topics={topic_name: PARTITIONS}, control_port=0)
    for p in range(PARTITIONS):
        produce(emu, topic_name, p, PER_PARTITION)
    consumers = [Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group_id,
                           "group.protocol": "consumer", "client.id": f"reader-{i}",
                           "auto.offset.reset": "earliest", "enable.auto.commit": False})
                 for i in range(2)]
    try:
        for c in consumers:
            c.subscribe([topic_name])

        def all_read():  # poll both (assignments reach the application only inside poll)
            for c in consumers:
                c.poll(0.05)
            # every partition assigned once and read to its end (a partition that moves during
            # the first assignments is read again by its new owner)
            owned = [c.position(c.assignment()) for c in consumers]
            return (all(owned) and sum(map(len, owned)) == PARTITIONS
                    and all(tp.offset == PER_PARTITION for tps in owned for tp in tps))

        emu.wait_for(all_read, timeout=60)
        for c in consumers:
            c.commit(asynchronous=False)

        view = emu.wait_for_group(group_id, "Stable", members=2, timeout=60)
        assert (view["type"], view["protocol_type"], view["leader"]) == ("consumer", "consumer", None)
        assert view["generation"] == view["group_epoch"] == view["assignment_epoch"]
        members = {m["client_id"]: m for m in view["members"]}
        assert sorted(members) == ["reader-0", "reader-1"]
        for i, c in enumerate(consumers):
            m = members[f"reader-{i}"]
            assert m["member_epoch"] == view["assignment_epoch"]
            assert (m["member_state"], m["pending_revocation"]) == ("stable", {})
            assert m["uses_classic_protocol"] is False and m["subscription"]["topics"] == [topic_name]
            mine = sorted(tp.partition for tp in c.assignment())
            assert m["assignment"]["partitions"] == {topic_name: mine} == m["target_assignment"]
        rows = view["offsets"]
        assert [(r["topic"], r["partition"]) for r in rows] == [(topic_name, p)
                                                                for p in range(PARTITIONS)]
        owner_of = {p: m["member_id"] for m in view["members"]
                    for p in m["assignment"]["partitions"][topic_name]}
        for row in rows:
            assert (row["committed_offset"], row["log_end_offset"], row["lag"]) == (
                PER_PARTITION, PER_PARTITION, 0)
            assert row["member_id"] == owner_of[row["partition"]]
        assert view["total_lag"] == 0

        # the same over HTTP (GET /groups/{id}/wait?state=...), as its declared schema says
        with httpx.Client(base_url=emu.control_url, timeout=30,
                          headers={"Authorization": f"Bearer {emu.control_token}"}) as http:
            answer = http.get(f"/groups/{group_id}/wait", params={"state": "Stable",
                                                                  "members": 2, "timeout": 30})
            assert answer.status_code == 200, answer.text
            over_http = answer.json()["result"]
            components: dict = {}
            schema = result_schema(all_operations()["wait_for_group"].result, components)
            jsonschema.validate(over_http, {**schema, "components": {"schemas": components}})
            assert over_http["type"] == "consumer"
            assert ({m["member_id"] for m in over_http["members"]}
                    == {m["member_id"] for m in view["members"]})
            assert over_http["offsets"] == rows
            refused = http.get(f"/groups/{group_id}/wait", params={"state": "Rebalancing"})
            assert refused.status_code == 400 and "Reconciling" in refused.text

        # five more records on partition 0: lag 5 there, as kafka-consumer-groups.sh shows it
        produce(emu, topic_name, 0, 5)
        lagging = {r["partition"]: r for r in emu.committed_offsets(group_id)}
        assert (lagging[0]["log_end_offset"], lagging[0]["lag"]) == (PER_PARTITION + 5, 5)
        assert emu.group_view(group_id)["total_lag"] == 5
        # the client's own view of its commits agrees
        committed = consumers[0].committed([TopicPartition(topic_name, p)
                                            for p in range(PARTITIONS)], timeout=10)
        assert [tp.offset for tp in committed] == [PER_PARTITION] * PARTITIONS

        # one leaves: the other takes every partition, once it polls
        consumers.pop().close()
        alone = consumers[0]

        def settled():
            alone.poll(0.05)
            view = emu.group_view(group_id)
            if view["state"] != "Stable" or len(view["members"]) != 1:
                return None
            return view if len(alone.assignment()) == PARTITIONS else None

        after = emu.wait_for(settled, timeout=60)
        (member,) = after["members"]
        assert member["client_id"] == "reader-0"
        assert member["assignment"]["partitions"] == {topic_name: list(range(PARTITIONS))}
        assert after["group_epoch"] > view["group_epoch"]
        # (less its session deadline, which each of its heartbeats moves: one may land between
        # the two views)
        def steady(m: dict) -> dict:
            return {k: v for k, v in m.items() if k != "session_deadline_ms"}
        again = emu.wait_for_group(group_id, "Stable", members=1, timeout=10)["members"]
        assert [steady(m) for m in again] == [steady(member)]
        assert again[0]["session_deadline_ms"] >= member["session_deadline_ms"]
    finally:
        for c in consumers:
            c.close()


@pytest.mark.skipif(not hasattr(confluent_kafka, "ShareConsumer"),
                    reason="this confluent-kafka has no ShareConsumer")
def test_group_view_of_a_share_group(kafka_emu_factory, topic_name, group_id):
    emu = kafka_emu_factory({"group.share.heartbeat.interval.ms": 100}, topics={topic_name: 1})
    sc = confluent_kafka.ShareConsumer({"bootstrap.servers": emu.bootstrap_servers,
                                        "group.id": group_id, "client.id": "sharer",
                                        "share.acknowledgement.mode": "implicit"})
    try:
        sc.subscribe([topic_name])
        def fetching():  # the first ShareFetch fixes the start offset (latest: the log end, 0)
            assert [m for m in sc.poll(0.1) if m.error() is None] == []
            view = emu.group_view(group_id)
            return view if view["offsets"] and view["offsets"][0]["start_offset"] is not None else None

        view = emu.wait_for(fetching, timeout=60)
        assert (view["type"], view["protocol_type"], view["state"]) == ("share", "share", "Stable")
        assert emu.wait_for_group(group_id, "Stable", members=1, timeout=10)["type"] == "share"
        (member,) = view["members"]
        assert member["client_id"] == "sharer"
        assert member["assignment"]["partitions"] == {topic_name: [0]}
        assert member["member_epoch"] == view["group_epoch"]
        produce(emu, topic_name, 0, 6)
        lagging = emu.wait_for(lambda: (r := emu.committed_offsets(group_id)[0])[
            "log_end_offset"] == 6 and r, timeout=10)
        assert (lagging["start_offset"], lagging["lag"], lagging["committed_offset"]) == (0, 6, None)
        got = []
        emu.wait_for(lambda: got.extend(m for m in sc.poll(0.2) if m.error() is None)
                     or len(got) >= 6, timeout=60)
        sc.commit_sync()  # implicit mode: the records polled are accepted now
        done = emu.wait_for(lambda: (v := emu.group_view(group_id))["offsets"][0][
            "start_offset"] == 6 and v, timeout=30)
        assert (done["offsets"][0]["lag"], done["total_lag"]) == (0, 0)
    finally:
        sc.close()
