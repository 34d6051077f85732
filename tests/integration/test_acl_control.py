"""ACLs through the control plane (control/ops/acls.py) over HTTP, as a test without an admin
client uses them: added, listed and removed in emu.acls' syntax, taking effect on the next
request of a real client (confluent-kafka), denials counted by principal; Kafka's refusals are
400s, writes without an authorizer 409s, and nothing changes then."""

from __future__ import annotations

import httpx
from confluent_kafka import KafkaError, Producer

from .helpers import unique, wait_until

ON = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
      "allow.everyone.if.no.acl.found": "true"}


def http(emu) -> httpx.Client:
    return httpx.Client(base_url=emu.control_url, timeout=10,
                        headers={"Authorization": f"Bearer {emu.control_token}"})


def produced(emu, topic) -> KafkaError | None:
    producer = Producer({"bootstrap.servers": emu.bootstrap_servers,
                         "message.timeout.ms": 20000})
    reports = []
    producer.produce(topic, b"v", on_delivery=lambda err, msg: reports.append(err))
    wait_until(lambda: reports, tick=lambda: producer.poll(0.1), message="a delivery report")
    return reports[0]


def test_acls_added_listed_removed_over_http(kafka_emu_factory):
    topic = unique("topic")
    emu = kafka_emu_factory(ON, topics={topic: 1}, control_port=0)
    with http(emu) as client:
        assert produced(emu, topic) is None  # no ACL covers the topic: allowed
        spec = f"ALLOW User:bob WRITE TOPIC {topic}"
        added = client.post("/acls", json={"acls": spec})
        assert added.status_code == 200, added.text
        assert added.json()["result"] == [{
            "permission": "ALLOW", "principal": "User:bob", "operation": "WRITE",
            "resource_type": "TOPIC", "pattern_type": "LITERAL", "resource_name": topic,
            "host": "*"}]
        error = produced(emu, topic)  # bob's ACL takes the topic away from ANONYMOUS
        assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
        listed = client.get("/acls", params={"principal": "User:bob"}).json()["result"]
        assert [a["resource_name"] for a in listed] == [topic]
        denials = client.get("/acls/denials").json()["result"]
        assert {(d["principal"], d["api"]) for d in denials} >= {("User:ANONYMOUS", "Metadata")}
        removed = client.post("/acls/remove", json={"acls": spec}).json()["result"]
        assert [a["principal"] for a in removed] == ["User:bob"]
        assert client.get("/acls").json()["result"] == []
        assert produced(emu, topic) is None
        refused = client.post("/acls", json={"acls": "ALLOW User:bob ALTER CLUSTER other"})
        assert refused.status_code == 400
        assert "only valid name for the CLUSTER resource" in refused.json()["error"]["message"]
        assert client.get("/acls").json()["result"] == []


def test_acl_writes_need_an_authorizer(kafka_emu_factory):
    emu = kafka_emu_factory(control_port=0)
    with http(emu) as client:
        answer = client.post("/acls", json={"acls": "ALLOW User:bob READ TOPIC t"})
        assert answer.status_code == 409
        assert "authorizer.class.name" in answer.json()["error"]["message"]
        assert client.get("/acls").json()["result"] == []
