"""The ACL decision and filters (kafka_emu/security/acls.py) against a brute-force model of
StandardAuthorizerData's rules, and the cases Kafka's own tests pin down."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_emu.security.acls import (AclBinding, AclFilter, AclOperation as Op, Authorizer,
                                     PatternType as PT, Permission as P, ResourceType as RT,
                                     all_operations, invalid_reason)

ALICE, BOB = "User:alice", "User:bob"


def acl(name="foo", op=Op.READ, perm=P.ALLOW, principal=ALICE, host="*", pattern=PT.LITERAL,
        rtype=RT.TOPIC) -> AclBinding:
    return AclBinding(resource_type=rtype, resource_name=name, pattern_type=pattern,
                      principal=principal, host=host, operation=op, permission=perm)


def authz(*bindings, supers="", allow=False) -> Authorizer:
    a = Authorizer(super_users=frozenset(filter(None, supers.split(";"))), allow_if_no_acl=allow)
    assert a.create(bindings) == [None] * len(bindings)
    return a


def test_no_acls_default_deny_and_allow_everyone():
    assert not authz().authorize(ALICE, "1.2.3.4", Op.READ, RT.TOPIC, "t")
    assert authz(allow=True).authorize(ALICE, "1.2.3.4", Op.READ, RT.TOPIC, "t")


def test_acl_for_someone_else_takes_the_default_away():
    a = authz(acl(principal=BOB), allow=True)
    assert not a.authorize(ALICE, "h", Op.READ, RT.TOPIC, "foo")
    assert a.authorize(ALICE, "h", Op.READ, RT.TOPIC, "other")  # not covered: the default


def test_deny_beats_allow_and_wildcards():
    a = authz(acl(name="*", op=Op.ALL), acl(name="fo", pattern=PT.PREFIXED, perm=P.DENY,
                                                principal="User:*", op=Op.WRITE))
    assert a.authorize(ALICE, "h", Op.READ, RT.TOPIC, "foo")
    assert not a.authorize(ALICE, "h", Op.WRITE, RT.TOPIC, "foo")
    assert a.authorize(ALICE, "h", Op.WRITE, RT.TOPIC, "bar")
    assert not a.authorize(BOB, "h", Op.WRITE, RT.TOPIC, "bar")  # covered, nothing allows bob


def test_implied_describe_only_from_allow():
    a = authz(acl(op=Op.WRITE), acl(op=Op.ALTER_CONFIGS))
    assert a.authorize(ALICE, "h", Op.DESCRIBE, RT.TOPIC, "foo")
    assert a.authorize(ALICE, "h", Op.DESCRIBE_CONFIGS, RT.TOPIC, "foo")
    assert not a.authorize(ALICE, "h", Op.READ, RT.TOPIC, "foo")
    # a DENY READ does not deny DESCRIBE (only an ALLOW implies)
    b = authz(acl(op=Op.DESCRIBE), acl(op=Op.READ, perm=P.DENY))
    assert b.authorize(ALICE, "h", Op.DESCRIBE, RT.TOPIC, "foo")
    assert not b.authorize(ALICE, "h", Op.READ, RT.TOPIC, "foo")


def test_hosts_and_super_users_and_literal_is_exact():
    a = authz(acl(host="10.0.0.1"), supers="User:root")
    assert a.authorize(ALICE, "10.0.0.1", Op.READ, RT.TOPIC, "foo")
    assert not a.authorize(ALICE, "10.0.0.2", Op.READ, RT.TOPIC, "foo")
    assert not a.authorize(ALICE, "10.0.0.1", Op.READ, RT.TOPIC, "foobar")
    assert a.authorize("User:root", "x", Op.DELETE, RT.CLUSTER, "kafka-cluster")


def test_authorized_operations_bitfield():
    a = authz(acl(op=Op.READ, rtype=RT.GROUP, name="g"))
    ops = a.authorized_operations(ALICE, "h", RT.GROUP, "g")
    assert ops == (1 << Op.READ) | (1 << Op.DESCRIBE)
    assert all_operations(RT.GROUP) == 3400  # as Kafka 4.x reports without an authorizer
    assert all_operations(RT.TOPIC) == 3576 and all_operations(RT.CLUSTER) == 8096


def test_any_allowed_by_resource_type():
    a = authz(acl(name="a", op=Op.WRITE), acl(name="a", pattern=PT.PREFIXED, op=Op.WRITE,
                                               perm=P.DENY))
    assert not a.any_allowed(ALICE, "h", Op.WRITE, RT.TOPIC)
    a.create([acl(name="b", op=Op.WRITE)])
    assert a.any_allowed(ALICE, "h", Op.WRITE, RT.TOPIC)
    assert not a.any_allowed(BOB, "h", Op.WRITE, RT.TOPIC)


def test_invalid_bindings_as_kafka_words_them():
    assert invalid_reason(acl(rtype=RT.CLUSTER, name="x")) == \
        "The only valid name for the CLUSTER resource is kafka-cluster"
    assert invalid_reason(acl(name="")) == "Invalid empty resource name"
    assert invalid_reason(acl(rtype=RT.ANY)) == "Invalid resourceType ANY"
    assert invalid_reason(acl(pattern=PT.MATCH)) == "Invalid patternType MATCH"
    assert invalid_reason(acl(op=Op.ANY)) == "Invalid operation ANY"
    assert invalid_reason(acl(op=99)) == "Invalid operation UNKNOWN"
    assert invalid_reason(acl(perm=P.ANY)) == "Invalid permissionType ANY"
    assert invalid_reason(acl(principal="alice")).startswith("expected a string in format")
    assert invalid_reason(acl()) is None


def test_filters_any_and_match():
    lit, star, pre = acl(name="foo"), acl(name="*"), acl(name="fo", pattern=PT.PREFIXED)
    a = authz(lit, star, pre, acl(name="bar"))
    assert a.describe(AclFilter(resource_name="foo")) == [lit]
    assert a.describe(AclFilter(resource_name="foo", pattern_type=PT.MATCH)) == [lit, star, pre]
    assert a.describe(AclFilter(pattern_type=PT.PREFIXED)) == [pre]
    assert a.delete(AclFilter(resource_name="*", pattern_type=PT.LITERAL)) == [star]
    assert star not in a.bindings() and a.delete(AclFilter(resource_name="zzz")) == []
    assert AclFilter(resource_type=0).unknown_reason() == "Unknown patternFilter."
    assert AclFilter(permission=0).unknown_reason() == "Unknown entryFilter."


# -- the model --------------------------------------------------------------------------------
NAMES = ["a", "ab", "abc", "b", "*"]
PRINCIPALS = [ALICE, BOB, "User:*"]
OPS = [Op.ALL, Op.READ, Op.WRITE, Op.DESCRIBE, Op.ALTER, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS]

bindings = st.builds(
    acl, name=st.sampled_from(NAMES), op=st.sampled_from(OPS), perm=st.sampled_from([P.ALLOW, P.DENY]),
    principal=st.sampled_from(PRINCIPALS), host=st.sampled_from(["*", "h1", "h2"]),
    pattern=st.sampled_from([PT.LITERAL, PT.PREFIXED]), rtype=st.sampled_from([RT.TOPIC, RT.GROUP]))

IMPLIES = {Op.DESCRIBE: {Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.DESCRIBE},
           Op.DESCRIBE_CONFIGS: {Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS}}


def model(acls, supers, allow_default, principal, host, op, rtype, name) -> bool:
    if principal in supers:
        return True
    covering = [b for b in acls if b.resource_type == rtype and (
        (b.pattern_type == PT.LITERAL and b.resource_name in (name, "*"))
        or (b.pattern_type == PT.PREFIXED and name.startswith(b.resource_name)))]

    def applies(b):
        if b.principal not in (principal, "User:*") or b.host not in (host, "*"):
            return False
        if b.operation in (Op.ALL, op):
            return True
        return b.permission == P.ALLOW and b.operation in IMPLIES.get(op, ())
    if any(applies(b) and b.permission == P.DENY for b in covering):
        return False
    if any(applies(b) for b in covering):
        return True
    return not covering and allow_default


@settings(max_examples=300, deadline=None)
@given(st.lists(bindings, max_size=8), st.booleans(), st.booleans(),
       st.sampled_from([ALICE, BOB, "User:root"]), st.sampled_from(["h1", "h2"]),
       st.sampled_from([o for o in OPS if o != Op.ALL]), st.sampled_from([RT.TOPIC, RT.GROUP]),
       st.sampled_from(["a", "ab", "abc", "abd", "b", "c", "*"]))
def test_authorize_agrees_with_model(acls, root_super, allow, principal, host, op, rtype, name):
    supers = "User:root" if root_super else ""
    a = authz(*acls, supers=supers, allow=allow)
    assert a.authorize(principal, host, op, rtype, name) == model(
        set(acls), {supers}, allow, principal, host, op, rtype, name)


@settings(max_examples=200, deadline=None)
@given(st.lists(bindings, max_size=8), st.lists(bindings, max_size=3),
       st.sampled_from(NAMES), st.sampled_from(list(PT)[1:]))
def test_delete_removes_exactly_what_describe_lists(acls, more, name, ptype):
    a = authz(*acls, *more)
    flt = AclFilter(resource_name=name, pattern_type=ptype)
    listed = a.describe(flt)
    assert a.delete(flt) == listed
    assert a.describe(flt) == [] and set(a.bindings()) == set(acls + more) - set(listed)
    # the indexes agree with the store after deletion
    for n in ["a", "ab", "abc", "b", "zz"]:
        assert a.authorize(ALICE, "h1", Op.READ, RT.TOPIC, n) == model(
            set(a.bindings()), set(), False, ALICE, "h1", Op.READ, RT.TOPIC, n)


def test_emu_acls_setting_parses_kafka_names_and_refuses_what_kafka_refuses():
    import pytest
    from kafka_emu.broker.config import BrokerConfig
    from kafka_emu.security.acls import parse_acl_specs
    got = parse_acl_specs("ALLOW User:alice READ TOPIC orders; "
                          "deny User:* write topic:prefixed tmp- 10.0.0.1;")
    assert got == [acl(name="orders"),
                   acl(name="tmp-", op=Op.WRITE, perm=P.DENY, principal="User:*",
                       host="10.0.0.1", pattern=PT.PREFIXED)]
    with pytest.raises(ValueError, match="only valid name for the CLUSTER"):
        BrokerConfig.from_kafka({"emu.acls": "ALLOW User:a ALTER CLUSTER other"})
    with pytest.raises(ValueError, match="unknown 'FETCH'"):
        parse_acl_specs("ALLOW User:a FETCH TOPIC t")
    with pytest.raises(ValueError, match="expected PERMISSION"):
        parse_acl_specs("ALLOW User:a READ TOPIC")
    with pytest.raises(ValueError, match="kafka-emu has only"):
        BrokerConfig.from_kafka({"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})


def test_client_addresses_as_java_writes_them_for_acl_hosts():
    from kafka_emu.security.authorize import java_host_address
    assert java_host_address("127.0.0.1") == "127.0.0.1"
    assert java_host_address("::1") == "0:0:0:0:0:0:0:1"
    assert java_host_address("fe80::a00:27ff:fe4e:66a1") == "fe80:0:0:0:a00:27ff:fe4e:66a1"
    assert java_host_address("::ffff:10.0.0.7") == "10.0.0.7"
