"""The one generic mechanism of security/authorize.py, under hypothesis: for requests of every
shape that Split rows cut (topics of a Produce, partitions of a commit, groups of a
DescribeGroups, config resources...), with any ACLs, the answer names each requested entry
exactly as often as the request does -- the denied ones with the denial's error, the others as
the handler answered them -- and the handler sees only the allowed entries."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace as NS

import attrs
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_emu.broker.error_response import error_entries
from kafka_emu.errors import ErrorCode as E, KafkaError
from kafka_emu.protocol import BY_NAME
from kafka_emu.security.acls import AclBinding, Authorizer
from kafka_emu.security.authorize import authorized
from kafka_emu.testing.strategies import messages

NAMES = ["a", "b", "c"]
CASES = [("Produce", 9), ("ListOffsets", 7), ("OffsetCommit", 8), ("DeleteRecords", 2),
         ("OffsetForLeaderEpoch", 4), ("DescribeGroups", 5), ("DeleteGroups", 2),
         ("ConsumerGroupDescribe", 0), ("CreatePartitions", 3), ("DescribeConfigs", 4),
         ("Fetch", 12), ("TxnOffsetCommit", 4)]
DENIALS = {int(E.TOPIC_AUTHORIZATION_FAILED), int(E.GROUP_AUTHORIZATION_FAILED),
           int(E.CLUSTER_AUTHORIZATION_FAILED)}


def leaves(message, path=()) -> list[tuple]:
    """(the key values on the way down..., error code) of every struct with an error code
    below the top."""
    out = []
    if isinstance(message, list):
        for item in message:
            out.extend(leaves(item, path))
        return out
    if not attrs.has(type(message)):
        return out
    keys = tuple(getattr(message, k) for k in ("name", "topic", "group_id", "resource_name",
                                                "partition_index", "partition", "index")
                 if hasattr(message, k))
    here = path + keys
    if path and hasattr(message, "error_code"):
        out.append(here + (message.error_code,))
        return out
    for a in attrs.fields(type(message)):
        value = getattr(message, a.name)
        if isinstance(value, list):
            out.extend(leaves(value, here))
    return out


@pytest.mark.parametrize("api_name,version", CASES, ids=[c[0] for c in CASES])
@settings(max_examples=40, deadline=None)
@given(data=st.data(), allowed=st.sets(st.sampled_from(NAMES)), cluster=st.booleans())
def test_denied_entries_answered_once_the_rest_by_the_handler(api_name, version, data, allowed,
                                                            cluster):
    api = BY_NAME[api_name]
    request = data.draw(messages(api.request, version, text=st.sampled_from(NAMES)))
    authz = Authorizer()
    for name in allowed:
        for rtype in (2, 3, 5):  # TOPIC, GROUP, TRANSACTIONAL_ID: every operation
            authz.add(AclBinding(resource_type=rtype, resource_name=name, pattern_type=3,
                                 principal="User:p", host="*", operation=2, permission=3))
    if cluster:
        authz.add(AclBinding(resource_type=4, resource_name="kafka-cluster", pattern_type=3,
                             principal="User:p", host="*", operation=2, permission=3))
    ctx = NS(broker=NS(authorizer=authz, observer=None), api=api, version=version,
             connection=NS(principal="User:p", peer_host="h", peer="h:1"), client_id="",
             now_ms=lambda: 0)
    seen = []

    async def handler_fn(ctx, got):
        seen.append(got)
        answer = error_entries(api, version, got, 0)
        return answer

    async def run():
        return await authorized(ctx, NS(fn=handler_fn), request)
    try:
        response = trio.run(run)
    except KafkaError as exc:  # a whole-request row (the group of a commit, the txn id)
        assert exc.code in DENIALS | {int(E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)}
        assert not seen
        return
    everything = leaves(error_entries(api, version, request, 0))
    got = leaves(response)
    # each requested entry answered as often as asked, whatever its code
    assert Counter(g[:-1] for g in got) == Counter(e[:-1] for e in everything)
    for entry in got:
        names = [k for k in entry[:-1] if isinstance(k, str)]
        code = entry[-1]
        if code == E.CLUSTER_AUTHORIZATION_FAILED:
            assert not cluster, entry
        elif code in DENIALS:  # a name the principal may not use
            assert any(n not in allowed for n in names), entry
        else:
            assert code == 0
    # every answer came from the handler or from a denial, never both, none lost
    handled = Counter(g[:-1] for g in leaves(error_entries(api, version, seen[0], 0))) \
        if seen else Counter()
    denied = Counter(g[:-1] for g in got if g[-1] in DENIALS)
    assert handled + denied == Counter(g[:-1] for g in got)
