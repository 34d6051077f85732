"""ACL operations: list, add and remove ACLs, and count the denials, without an admin client.

What an admin client's CreateAcls / DescribeAcls / DeleteAcls do, for a test that has none (a
plaintext test is User:ANONYMOUS, which may not alter ACLs once any ACL covers the cluster). ACLs
are written as the ``emu.acls`` setting writes them -- ``ALLOW User:alice READ TOPIC orders;
DENY User:* WRITE TOPIC:PREFIXED tmp- 10.0.0.1`` -- and take effect at once, for requests
already on their way too (as on Kafka, where a new ACL applies to the next check). Adding or
removing is refused (409) when the emulator has no authorizer (``authorizer.class.name``; the
reads then answer an empty list), and (400) for an ACL Kafka would refuse, with Kafka's reason;
nothing is changed then.
"""

from __future__ import annotations

from typing import TypedDict

import attrs

from ...security.acls import (AclBinding, AclFilter, AclOperation, PatternType, Permission,
                              ResourceType, parse_acl_specs)
from ..operations import ControlError, NoParams, operation


class AclInfo(TypedDict):
    """One ACL binding, by Kafka's enum names."""

    permission: str  # ALLOW or DENY
    principal: str  # "User:alice", "User:*"
    operation: str  # READ, WRITE, ALL, ...
    resource_type: str  # TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, ...
    pattern_type: str  # LITERAL or PREFIXED
    resource_name: str
    host: str  # "*" or an address


class AclDenials(TypedDict):
    """How often one principal was denied something by one API since the start."""

    principal: str
    api: str
    count: int


_SPEC_DOC = ("ACLs separated by semicolons, each PERMISSION PRINCIPAL OPERATION "
             "RESOURCE_TYPE[:PATTERN] NAME [HOST], e.g. 'ALLOW User:alice READ TOPIC orders'")


@attrs.frozen(kw_only=True)
class AclsParams:
    acls: str = attrs.field(metadata={"doc": _SPEC_DOC})


@attrs.frozen(kw_only=True)
class ListParams:
    principal: str | None = attrs.field(default=None, metadata={
        "doc": "only the ACLs of this principal ('User:alice')"})
    resource_type: str | None = attrs.field(default=None, metadata={
        "doc": "only ACLs on this type of resource (TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, "
               "DELEGATION_TOKEN, USER)"})


def _authorizer(broker):
    authorizer = broker.authorizer
    if authorizer is None:
        raise ControlError("this emulator has no authorizer: start it with authorizer.class.name="
                           "org.apache.kafka.metadata.authorizer.StandardAuthorizer", 409)
    return authorizer


def _bindings(text: str) -> list[AclBinding]:
    try:
        return parse_acl_specs(text)
    except ValueError as exc:
        raise ControlError(str(exc)) from None


def _name(cls, code: int) -> str:
    try:
        return cls(code).name
    except ValueError:
        return str(code)


def _info(b: AclBinding) -> AclInfo:
    return {"permission": _name(Permission, b.permission), "principal": b.principal,
            "operation": _name(AclOperation, b.operation),
            "resource_type": _name(ResourceType, b.resource_type),
            "pattern_type": _name(PatternType, b.pattern_type),
            "resource_name": b.resource_name, "host": b.host}


@operation("GET", "/acls", ListParams)
def acls(broker, params: ListParams) -> list[AclInfo]:
    """Every ACL, in the order created (optionally of one principal or one resource type);
    none without an authorizer."""
    authorizer = broker.authorizer
    rtype = ResourceType.ANY
    if params.resource_type is not None:
        try:
            rtype = ResourceType[params.resource_type.upper()]
        except KeyError:
            raise ControlError(f"unknown resource type {params.resource_type!r}") from None
    if authorizer is None:
        return []
    return [_info(b) for b in authorizer.describe(AclFilter(resource_type=rtype,
                                                            principal=params.principal))]


@operation("POST", "/acls", AclsParams)
def add_acls(broker, params: AclsParams) -> list[AclInfo]:
    """Add ACLs (those already there are kept once, as Kafka's CreateAcls keeps them)."""
    authorizer = _authorizer(broker)
    bindings = _bindings(params.acls)  # all parsed before any is added
    for b in bindings:
        authorizer.add(b)
    return [_info(b) for b in bindings]


@operation("POST", "/acls/remove", AclsParams)
def remove_acls(broker, params: AclsParams) -> list[AclInfo]:
    """Remove exactly these ACLs; the answer lists those that were there."""
    authorizer = _authorizer(broker)
    removed: list[AclInfo] = []
    for b in _bindings(params.acls):
        removed.extend(_info(gone) for gone in authorizer.delete(AclFilter(
            resource_type=b.resource_type, resource_name=b.resource_name,
            pattern_type=b.pattern_type, principal=b.principal, host=b.host,
            operation=b.operation, permission=b.permission)))
    return removed


@operation("GET", "/acls/denials")
def acl_denials(broker, params: NoParams) -> list[AclDenials]:
    """Requests (or entries of requests) denied so far, by principal and API; each denial is
    also an AuthorizationDenied event on the timeline. None without an authorizer."""
    authorizer = broker.authorizer
    if authorizer is None:
        return []
    return [{"principal": principal, "api": api, "count": count}
            for (principal, api), count in sorted(authorizer.denied.items())]
