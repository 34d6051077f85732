"""ACLs with the semantics of Kafka's StandardAuthorizer (KRaft), pure: no I/O, no clock.

Theory of operation. An ACL binding is a resource pattern (type, name, LITERAL or PREFIXED) and
an entry (principal, host, operation, ALLOW or DENY). To decide whether ``principal`` from
``host`` may perform ``operation`` on a resource, Kafka's StandardAuthorizerData:

1. allows a super user (``super.users``, principals as "User:name") everything;
2. takes the ACLs whose pattern covers the resource: a LITERAL of the same name, a LITERAL
   ``*`` (the wildcard resource), a PREFIXED whose name begins the resource's name;
3. of those, an ACL applies when its principal is the caller's or ``User:*``, its host is the
   caller's address or ``*``, and its operation is the one asked, or ALL -- or, for an ALLOW
   ACL only, one that implies it (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS
   implies DESCRIBE_CONFIGS);
4. any applying DENY denies; else any applying ALLOW allows; else, if no ACL at all covers the
   resource, the default (``allow.everyone.if.no.acl.found``, false unless configured); else
   deny. (So an ACL for somebody else on a resource takes the default away from everyone.)

Describe and Delete select bindings with a filter (``AclFilter``), as Kafka's
AclBindingFilter: ANY matches any type, operation or permission, a null name/principal/host
anything; pattern type ANY matches the exact name under any pattern type, MATCH every pattern
that would cover a resource of that name (the literal, the wildcard, the prefixes).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

import attrs


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15  # KIP-939 (Kafka 4.x), on transactional ids


class Permission(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


def _enum(cls: type[IntEnum], code: int) -> IntEnum:
    """Kafka's fromCode: a code it does not know reads as UNKNOWN."""
    try:
        return cls(code)
    except ValueError:
        return cls(0)


WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"  # the one name of the CLUSTER resource

_IMPLIES_DESCRIBE = frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                               AclOperation.DELETE, AclOperation.ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS,
                                       AclOperation.ALTER_CONFIGS})

_Op = AclOperation
# AclEntry.supportedOperations: what an authorized-operations bitfield reports, per type
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (_Op.READ, _Op.WRITE, _Op.CREATE, _Op.DESCRIBE, _Op.DELETE, _Op.ALTER,
                         _Op.DESCRIBE_CONFIGS, _Op.ALTER_CONFIGS),
    ResourceType.GROUP: (_Op.READ, _Op.DESCRIBE, _Op.DELETE, _Op.DESCRIBE_CONFIGS,
                         _Op.ALTER_CONFIGS),
    ResourceType.CLUSTER: (_Op.CREATE, _Op.CLUSTER_ACTION, _Op.DESCRIBE_CONFIGS,
                           _Op.ALTER_CONFIGS, _Op.IDEMPOTENT_WRITE, _Op.ALTER, _Op.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (_Op.DESCRIBE, _Op.WRITE),
    ResourceType.DELEGATION_TOKEN: (_Op.DESCRIBE,),
    ResourceType.USER: (_Op.CREATE_TOKENS, _Op.DESCRIBE_TOKENS),
}


@attrs.frozen(kw_only=True)
class AclBinding:
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int

    def covers(self, resource_type: int, name: str) -> bool:
        """Whether this binding's pattern covers the resource (step 2 of the module doc)."""
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == PatternType.LITERAL:
            return self.resource_name == name or self.resource_name == WILDCARD
        return self.pattern_type == PatternType.PREFIXED and name.startswith(self.resource_name)


def invalid_reason(binding: AclBinding) -> str | None:
    """Why Kafka refuses to create ``binding`` (INVALID_REQUEST with this message), or None.
    The checks and messages of AclApis.handleCreateAcls and AclControlManager.validateNewAcl,
    in their order."""
    rtype = _enum(ResourceType, binding.resource_type)
    if rtype == ResourceType.CLUSTER and binding.resource_name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not binding.resource_name:
        return "Invalid empty resource name"
    if rtype in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {rtype.name}"
    ptype = _enum(PatternType, binding.pattern_type)
    if ptype not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {ptype.name}"
    op = _enum(AclOperation, binding.operation)
    if op in (AclOperation.UNKNOWN, AclOperation.ANY):
        return f"Invalid operation {op.name}"
    perm = _enum(Permission, binding.permission)
    if perm not in (Permission.ALLOW, Permission.DENY):
        return f"Invalid permissionType {perm.name}"
    if ":" not in binding.principal:
        # SecurityUtils.parseKafkaPrincipal
        return ("expected a string in format principalType:principalName but got "
                + binding.principal)
    return None


@attrs.frozen(kw_only=True)
class AclFilter:
    resource_type: int = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: int = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: int = AclOperation.ANY
    permission: int = Permission.ANY

    def unknown_reason(self) -> str | None:
        """Kafka refuses a filter with an UNKNOWN element (AclControlManager.validateFilter)."""
        if (_enum(ResourceType, self.resource_type) == ResourceType.UNKNOWN
                or _enum(PatternType, self.pattern_type) == PatternType.UNKNOWN):
            return "Unknown patternFilter."
        if (_enum(AclOperation, self.operation) == AclOperation.UNKNOWN
                or _enum(Permission, self.permission) == Permission.UNKNOWN):
            return "Unknown entryFilter."
        return None

    def matches(self, b: AclBinding) -> bool:
        """ResourcePatternFilter.matches and AccessControlEntryFilter.matches together."""
        if self.resource_type != ResourceType.ANY and self.resource_type != b.resource_type:
            return False
        pt = self.pattern_type
        if pt not in (PatternType.ANY, PatternType.MATCH) and pt != b.pattern_type:
            return False
        if self.resource_name is not None:
            if pt == PatternType.ANY or pt == b.pattern_type:
                if self.resource_name != b.resource_name:
                    return False
            elif b.pattern_type == PatternType.LITERAL:  # MATCH
                if b.resource_name not in (self.resource_name, WILDCARD):
                    return False
            elif not self.resource_name.startswith(b.resource_name):  # MATCH, PREFIXED
                return False
        if self.principal is not None and self.principal != b.principal:
            return False
        if self.host is not None and self.host != b.host:
            return False
        if self.operation != AclOperation.ANY and self.operation != b.operation:
            return False
        return self.permission == Permission.ANY or self.permission == b.permission


def _applies(acl: AclBinding, principal: str, host: str, op: int) -> bool:
    """Step 3 of the module doc (StandardAuthorizerData.findResult), the pattern taken as
    covering already."""
    if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
        return False
    if acl.host != WILDCARD and acl.host != host:
        return False
    if acl.operation == AclOperation.ALL:
        return True
    if acl.permission == Permission.ALLOW:
        if op == AclOperation.DESCRIBE:
            return acl.operation in _IMPLIES_DESCRIBE
        if op == AclOperation.DESCRIBE_CONFIGS:
            return acl.operation in _IMPLIES_DESCRIBE_CONFIGS
    return acl.operation == op


def parse_acl_specs(text: str) -> list[AclBinding]:
    """``emu.acls`` (kafka-emu's own setting: ACLs present from the start, for tests that have
    no admin client): bindings separated by semicolons, each
    ``PERMISSION PRINCIPAL OPERATION RESOURCE_TYPE[:PATTERN] NAME [HOST]`` --
    ``ALLOW User:alice READ TOPIC orders; DENY User:* WRITE TOPIC:PREFIXED tmp- 10.0.0.1``
    (pattern LITERAL and host ``*`` unless given). ValueError, one line, for a bad entry or one
    Kafka would refuse to create."""
    out = []
    for spec in filter(None, (s.strip() for s in text.split(";"))):
        words = spec.split()
        if len(words) not in (5, 6):
            raise ValueError(f"expected PERMISSION PRINCIPAL OPERATION RESOURCE_TYPE[:PATTERN] "
                             f"NAME [HOST], got {spec!r}")
        perm, principal, op, resource, name = words[:5]
        rtype, _, pattern = resource.upper().partition(":")
        try:
            binding = AclBinding(
                resource_type=ResourceType[rtype], resource_name=name,
                pattern_type=PatternType[pattern or "LITERAL"], principal=principal,
                host=words[5] if len(words) == 6 else WILDCARD,
                operation=AclOperation[op.upper()], permission=Permission[perm.upper()])
        except KeyError as exc:
            raise ValueError(f"unknown {exc.args[0]!r} in {spec!r}") from None
        reason = invalid_reason(binding)
        if reason is not None:
            raise ValueError(f"{reason} ({spec!r})")
        out.append(binding)
    return out


def parse_super_users(text: str) -> frozenset[str]:
    """``super.users``: principals separated by semicolons (Kafka's format), blanks ignored."""
    return frozenset(p.strip() for p in text.split(";") if p.strip())


@attrs.define(eq=False)
class Authorizer:
    """The ACL store and the decision. Bindings are kept in creation order (Describe lists
    them so), indexed by (resource type, literal name) and by resource type for prefixes."""

    super_users: frozenset[str] = frozenset()
    allow_if_no_acl: bool = False
    _bindings: dict[AclBinding, None] = attrs.field(factory=dict)
    _literal: dict[tuple[int, str], list[AclBinding]] = attrs.field(factory=dict)
    _prefixed: dict[int, list[AclBinding]] = attrs.field(factory=dict)
    # denials so far by (principal, API name): what the control plane and timeline report
    denied: dict[tuple[str, str], int] = attrs.field(factory=dict)
    # decisions already made, until the ACLs change (every request of a connection asks the
    # same few questions: a heartbeat's READ on its group)
    _decided: dict[tuple, bool] = attrs.field(factory=dict)

    CACHE_LIMIT = 65536  # distinct questions kept; past it the cache starts again

    # -- the store -------------------------------------------------------------------------
    def bindings(self) -> list[AclBinding]:
        return list(self._bindings)

    def add(self, binding: AclBinding) -> None:
        """Store a valid binding (a duplicate is one binding, as Kafka's set of ACLs)."""
        if binding in self._bindings:
            return
        self._bindings[binding] = None
        self._decided.clear()
        if binding.pattern_type == PatternType.LITERAL:
            self._literal.setdefault((binding.resource_type, binding.resource_name),
                                     []).append(binding)
        else:
            self._prefixed.setdefault(binding.resource_type, []).append(binding)

    def create(self, bindings: Iterable[AclBinding]) -> list[str | None]:
        """Each binding stored unless invalid: per binding None, or INVALID_REQUEST's message."""
        results = []
        for b in bindings:
            reason = invalid_reason(b)
            if reason is None:
                self.add(b)
            results.append(reason)
        return results

    def describe(self, flt: AclFilter) -> list[AclBinding]:
        return [b for b in self._bindings if flt.matches(b)]

    def delete(self, flt: AclFilter) -> list[AclBinding]:
        """Remove and return the bindings ``flt`` matches."""
        gone = self.describe(flt)
        if gone:
            self._decided.clear()
        for b in gone:
            del self._bindings[b]
            if b.pattern_type == PatternType.LITERAL:
                self._literal[(b.resource_type, b.resource_name)].remove(b)
            else:
                self._prefixed[b.resource_type].remove(b)
        return gone

    # -- the decision ----------------------------------------------------------------------
    def _covering(self, resource_type: int, name: str) -> Iterable[AclBinding]:
        yield from self._literal.get((resource_type, name), ())
        if name != WILDCARD:
            yield from self._literal.get((resource_type, WILDCARD), ())
        for b in self._prefixed.get(resource_type, ()):
            if name.startswith(b.resource_name):
                yield b

    def authorize(self, principal: str, host: str, operation: int, resource_type: int,
                  name: str) -> bool:
        key = (principal, host, operation, resource_type, name)
        decided = self._decided.get(key)
        if decided is None:
            decided = self._decide(principal, host, operation, resource_type, name)
            if len(self._decided) >= self.CACHE_LIMIT:
                self._decided.clear()
            self._decided[key] = decided
        return decided

    def _decide(self, principal: str, host: str, operation: int, resource_type: int,
                name: str) -> bool:
        if principal in self.super_users:
            return True
        covered = allowed = False
        for acl in self._covering(resource_type, name):
            covered = True
            if _applies(acl, principal, host, operation):
                if acl.permission == Permission.DENY:
                    return False
                allowed = True
        return allowed or (not covered and self.allow_if_no_acl)

    def any_allowed(self, principal: str, host: str, operation: int,
                    resource_type: int) -> bool:
        """Whether some resource of the type would allow ``operation`` (Kafka's
        authorizeByResourceType, used where a request needs it on any topic: an idempotent
        InitProducerId without IDEMPOTENT_WRITE on the cluster). As Kafka's default
        Authorizer.authorizeByResourceType: allowed on a made-up name (a super user, or the
        default where nothing covers that name), or an applying ALLOW on a literal or prefix
        not overruled by an applying DENY on the wildcard resource, a prefix of it or (both
        literal) the same name."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        ours = [b for b in self._bindings if b.resource_type == resource_type]
        deny = [b for b in ours if b.permission == Permission.DENY
                and _applies(b, principal, host, operation)]
        if any(b.pattern_type == PatternType.LITERAL and b.resource_name == WILDCARD
               for b in deny):
            return False
        for b in ours:
            if b.permission != Permission.ALLOW or not _applies(b, principal, host, operation):
                continue
            if b.pattern_type == PatternType.LITERAL and b.resource_name == WILDCARD:
                return True
            if not any(d.pattern_type == PatternType.PREFIXED
                       and b.resource_name.startswith(d.resource_name)
                       or d.pattern_type == b.pattern_type == PatternType.LITERAL
                       and d.resource_name == b.resource_name for d in deny):
                return True
        return False

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType,
                              name: str) -> int:
        """The KIP-430 bitfield: bit ``code`` of each supported operation allowed."""
        return sum(1 << op for op in SUPPORTED_OPERATIONS[resource_type]
                   if self.authorize(principal, host, op, resource_type, name))


def all_operations(resource_type: ResourceType) -> int:
    """The bitfield with no authorizer configured: every supported operation."""
    return sum(1 << op for op in SUPPORTED_OPERATIONS[resource_type])
