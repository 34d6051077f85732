"""kafkajs against ACLs (issue #38): a consumer refused its group gets GROUP_AUTHORIZATION_FAILED
and a producer refused its topic TOPIC_AUTHORIZATION_FAILED, as from Kafka. The scenario script
is ``node/kafkajs_acl.mjs``; skipped without node or the installed packages (the node client
tests' fixture installs them)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).parent / "node"
SETTINGS = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true",
            # somebody else's ACLs: the group and the topic are no longer ANONYMOUS's; DESCRIBE
            # on the topic lets Metadata answer, so the refusal comes from Produce itself
            "emu.acls": "ALLOW User:bob READ GROUP acl-group; ALLOW User:bob WRITE TOPIC acl-topic;"
                        "ALLOW User:ANONYMOUS DESCRIBE TOPIC acl-topic;"
                        "ALLOW User:ANONYMOUS DESCRIBE GROUP acl-group-described"}


def run(scenario, emu):
    done = subprocess.run(["node", str(NODE_DIR / "kafkajs_acl.mjs"), scenario,
                           emu.bootstrap_servers], capture_output=True, text=True, timeout=90)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, (done.stdout, done.stderr)
    return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.parametrize("scenario,expected", [
    # FindCoordinator's GROUP_AUTHORIZATION_FAILED: kafkajs gives up on every broker and says
    # only KafkaJSGroupCoordinatorNotFound, as it does against Kafka
    ("group", (None, "KafkaJSGroupCoordinatorNotFound")),
    # DESCRIBE but not READ on the group: JoinGroup's GROUP_AUTHORIZATION_FAILED
    ("describable", ("GROUP_AUTHORIZATION_FAILED", None)),
    ("produce", ("TOPIC_AUTHORIZATION_FAILED", None))])
def test_kafkajs_refused(kafka_emu_factory, node_modules, scenario, expected):
    emu = kafka_emu_factory(SETTINGS, topics={"acl-topic": 1})
    result = run(scenario, emu)
    assert result["ok"], result
    error_type, name = expected
    assert result["type"] == error_type, result
    if name is not None:
        assert result["name"] == name, result
    assert emu.timeline(types=["AuthorizationDenied"]), "the denial is on the timeline"
