"""Authorization: the one check before a handler, applying ``authorize_table.TABLE``.

Theory of operation. With an authorizer configured (``authorizer.class.name``,
``broker.authorizer``), the connection serves each request through ``guarded(handler)``: a
handler of the same API whose function, for the request's principal
(``ctx.connection.principal``) and client address (``ctx.connection.peer_host``):

1. runs the API's ``Whole`` rows: a denial raises KafkaError with Kafka's error, which the
   connection answers through the one error-response builder, as it answers any failed request;
2. runs its ``Split`` rows: denied entries (topics, groups, config resources, coordinator keys)
   are taken out of the request; the handler serves the rest; the denied ones are answered by
   the error-response builder (``error_entries``) and added to the response's array -- so no
   handler knows about ACLs, and a new API gets per-entry denials from a table row. When every
   entry was denied, the handler is not run (as Kafka sends such a Produce, Fetch or
   OffsetCommit nowhere);
3. runs its ``After`` filters on the response: what an all-topics Metadata or ListGroups may
   show, and the KIP-430 authorized-operations bitfields computed from the ACLs (left as the
   handlers make them -- every supported operation -- where no authorizer is configured).

Each denial is counted per (principal, API) on ``broker.authorizer.denied`` and, while anybody
listens, emitted as an ``AuthorizationDenied`` event through the one observer seam (timeline,
traces, logs).
"""

from __future__ import annotations

import functools
import ipaddress
import logging
from typing import Any

import attrs

from ..broker.error_response import error_entries
from ..errors import ErrorCode, KafkaError
from ..protocol.schema import fields_of
from .acls import CLUSTER_NAME, AclOperation as Op, ResourceType as R
from .authorize_table import TABLE, After, Split, Whole

log = logging.getLogger("kafka_emu.security")

NOT_PROVIDED = -(2**31)  # an authorized-operations field that was not asked for
# APIs whose handler is not run when every entry was denied (KafkaApis answers at once: a
# Fetch with nothing left to read would otherwise wait max_wait_ms); the others run with the
# entries left, as Kafka's do (a Metadata still lists the brokers).
SKIPPED_WHEN_EMPTY = frozenset({"Produce", "Fetch", "OffsetCommit", "TxnOffsetCommit",
                                "OffsetDelete", "ListOffsets", "DeleteRecords",
                                "OffsetForLeaderEpoch"})


@functools.lru_cache(maxsize=4096)
def java_host_address(host: str) -> str:
    """The client's address as Kafka matches ACL hosts against it (Java's
    InetAddress.getHostAddress): IPv4 dotted, IPv6 as eight groups without zero compression
    ("0:0:0:0:0:0:0:1" for ::1), an IPv4-mapped IPv6 address as its IPv4 address."""
    if ":" not in host:
        return host
    try:
        address = ipaddress.IPv6Address(host.split("%", 1)[0])
    except ValueError:
        return host
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return ":".join(format(int(group, 16), "x") for group in address.exploded.split(":"))


class Checker:
    """The ACL decisions for one request: who, from where."""

    __slots__ = ("authorizer", "principal", "host", "api", "ctx")

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.authorizer = ctx.broker.authorizer
        self.principal = ctx.connection.principal
        self.host = java_host_address(ctx.connection.peer_host)
        self.api = ctx.api.name

    def allowed(self, op: Op, rtype: R, name: str | None) -> bool:
        a = self.authorizer
        if name is None:
            return a.any_allowed(self.principal, self.host, op, rtype)
        return a.authorize(self.principal, self.host, op, rtype, name)

    def passes(self, needs) -> ErrorCode | None:
        """None if every Need passes (any one alternative of each), else the first's error."""
        if needs is None:
            return None
        for error, alternatives in (needs if isinstance(needs, list) else (needs,)):
            if not any(self.allowed(op, rtype, name) for op, rtype, name in alternatives):
                self.denied(error, alternatives)
                return error
        return None

    def denied(self, error: ErrorCode, alternatives) -> None:
        a = self.authorizer
        a.denied[(self.principal, self.api)] = a.denied.get((self.principal, self.api), 0) + 1
        op, rtype, name = alternatives[0]
        log.debug("%s from %s denied %s on %s %s (%s): %s", self.principal, self.host,
                  op.name, rtype.name, name, self.api, error.name)
        ctx = self.ctx
        emit = ctx.broker.observer
        if emit is not None:  # the one observer seam: timeline, traces, logs
            from ..broker.events import AuthorizationDenied
            emit(AuthorizationDenied(
                at_ms=ctx.now_ms(), peer=ctx.connection.peer, client_id=ctx.client_id,
                principal=self.principal, api=self.api, operation=op.name,
                resource_type=rtype.name, resource_name=name, error_code=int(error)))

    def operations(self, rtype: R, name: str) -> int:
        return self.authorizer.authorized_operations(self.principal, self.host, rtype, name)


@attrs.frozen
class Guarded:
    """A handler with the check in front (what ``HANDLERS`` holds, as far as the connection
    and fault_actions.run_handler see: ``api``, ``supported``, ``fn``)."""
    handler: Any

    @property
    def api(self):
        return self.handler.api

    @property
    def supported(self):
        return self.handler.supported

    async def fn(self, ctx, request):
        return await authorized(ctx, self.handler, request)


_GUARDED: dict[int, Guarded] = {}


def guarded(handler) -> Guarded:
    key = handler.api.key
    found = _GUARDED.get(key)
    if found is None or found.handler is not handler:
        found = _GUARDED[key] = Guarded(handler)
    return found


# api name -> (its Whole rows, Split rows, After rows), split once
_PLANS = {name: tuple(tuple(r for r in rows if isinstance(r, kind))
                      for kind in (Whole, Split, After)) for name, rows in TABLE.items()}
_NO_PLAN = ((), (), ())


async def authorized(ctx, handler, request):
    wholes, splits, afters = _PLANS.get(ctx.api.name, _NO_PLAN)
    if not (wholes or splits or afters):
        return await handler.fn(ctx, request)
    check = Checker(ctx)
    broker, version = ctx.broker, ctx.version
    for row in wholes:
        if version in row.versions:
            error = check.passes(row.need(request, broker))
            if error is not None:
                raise KafkaError(error)
    if not (splits or afters):  # (a Heartbeat, a JoinGroup: may be parked, returned as is)
        return await handler.fn(ctx, request)
    # (error, message) -> request field -> entries
    denied: dict[tuple[ErrorCode, str | None], dict[str, list]] = {}
    kept: dict[str, list] = {}
    emptied = all_or_nothing = False
    for row in splits:
        if version not in row.versions:
            continue
        entries = getattr(request, row.field)
        if not entries:
            continue
        allowed = []
        for entry in entries:
            error = check.passes(row.need(entry, request, broker))
            if error is None:
                allowed.append(entry)
            else:
                denied.setdefault((error, row.message), {}).setdefault(row.field, []).append(
                    entry)
        if len(allowed) < len(entries):
            if row.others is not None:  # all or nothing: the rest are not attempted
                if allowed:
                    denied.setdefault((row.others, None), {})[row.field] = allowed
                allowed, emptied = [], True
                all_or_nothing = True
            kept[row.field] = allowed
            emptied = emptied or not allowed
    response = None
    if kept:
        empty = {name: [] for name in kept}
        all_denied = all_or_nothing or (emptied and not any(kept.values())
                                        and ctx.api.name in SKIPPED_WHEN_EMPTY)
        if not all_denied:
            response = await handler.fn(ctx, attrs.evolve(request, **kept))
            if response is None or not attrs.has(type(response)):
                return response  # acks=0, or a request parked for its connection
        for (error, message), fields in denied.items():
            answered = error_entries(ctx.api, version, attrs.evolve(request, **{**empty, **fields}),
                                     error, message)
            response = answered if response is None else _merge(response, answered, version)
        if all_denied:
            response = _clear_top(response, version)
    else:
        response = await handler.fn(ctx, request)
        if response is None or not attrs.has(type(response)):
            return response
    for row in afters:
        response = _AFTER[row.name](check, request, response, version, broker)
    return response


def _merge(response, answered, version: int):
    """``response`` with the entries of ``answered`` (error entries) added to its arrays."""
    changes = {}
    for spec in fields_of(type(response)):
        if version not in spec.versions:
            continue
        extra = getattr(answered, spec.name)
        if isinstance(extra, list) and extra and not isinstance(extra[0], (int, str)):
            changes[spec.name] = list(getattr(response, spec.name) or ()) + extra
    return attrs.evolve(response, **changes) if changes else response


def _clear_top(response, version: int):
    """No top-level error where only entries were refused."""
    changes = {s.name: (0 if s.name == "error_code" else None) for s in fields_of(type(response))
               if s.name in ("error_code", "error_message") and version in s.versions}
    return attrs.evolve(response, **changes) if changes else response


# -- After filters ---------------------------------------------------------------------------
def _metadata(check, request, response, version, broker):
    all_topics = request.topics is None or (not request.topics and version == 0)
    topics = response.topics
    if all_topics:
        topics = [t for t in topics if check.allowed(Op.DESCRIBE, R.TOPIC, t.name)]
    elif version == 0:  # (every named topic denied: the handler saw an empty list, "all")
        topics = _named_only(check, request, topics)
    topics = _topic_operations(check, topics)
    cluster_ops = response.cluster_authorized_operations
    if cluster_ops != NOT_PROVIDED:  # (v8-10, asked for): 0 without DESCRIBE on the cluster
        cluster_ops = (check.operations(R.CLUSTER, CLUSTER_NAME)
                       if check.allowed(Op.DESCRIBE, R.CLUSTER, CLUSTER_NAME) else 0)
    return attrs.evolve(response, topics=topics, cluster_authorized_operations=cluster_ops)


def _named_only(check, request, topics) -> list:
    """The topics a request named: where every named topic was denied, the handler was given
    an empty list, which these APIs read as "every topic"; keep only the denials then."""
    named = {t.name for t in request.topics}
    return [t for t in topics if t.name in named and (
        t.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        or check.allowed(Op.DESCRIBE, R.TOPIC, t.name))]


def _topic_operations(check, topics) -> list:
    return [attrs.evolve(t, topic_authorized_operations=check.operations(R.TOPIC, t.name))
            if t.topic_authorized_operations != NOT_PROVIDED and t.name else t for t in topics]


def _describe_topic_partitions(check, request, response, version, broker):
    topics = response.topics
    if not request.topics:  # every topic: those the principal may describe
        topics = [t for t in topics if check.allowed(Op.DESCRIBE, R.TOPIC, t.name)]
    else:  # (every named topic denied: the handler saw an empty list, "all topics")
        topics = _named_only(check, request, topics)
    return attrs.evolve(response, topics=_topic_operations(check, topics))


def _group_operations(check, request, response, version, broker):
    return attrs.evolve(response, groups=[
        attrs.evolve(g, authorized_operations=check.operations(R.GROUP, g.group_id))
        if g.authorized_operations != NOT_PROVIDED and g.error_code == 0 else g
        for g in response.groups])


HIDDEN_TOPICS = "The group has described topic(s) that the client is not authorized to describe."


def _described_topics(check, request, response, version, broker):
    """ConsumerGroupDescribe, ShareGroupDescribe: a group one of whose members is assigned (or,
    for a consumer group, targeted) a topic the principal may not describe is answered with
    TOPIC_AUTHORIZATION_FAILED and no members instead (KafkaApis, Kafka 4.x)."""
    groups = []
    for g in response.groups:
        names = {tp.topic_name for m in g.members
                 for a in (m.assignment, getattr(m, "target_assignment", None)) if a is not None
                 for tp in a.topic_partitions}
        if all(check.allowed(Op.DESCRIBE, R.TOPIC, n) for n in names):
            groups.append(g)
        else:
            groups.append(type(g)(group_id=g.group_id, error_message=HIDDEN_TOPICS,
                                  error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED))
    return attrs.evolve(response, groups=groups)


def _transaction_topics(check, request, response, version, broker):
    """DescribeTransactions: only the partitions of topics the principal may describe."""
    return attrs.evolve(response, transaction_states=[
        attrs.evolve(t, topics=[p for p in t.topics
                                if check.allowed(Op.DESCRIBE, R.TOPIC, p.topic)])
        for t in response.transaction_states])


def _created_topic_configs(check, request, response, version, broker):
    """CreateTopics v5+: the configs of a created topic only with DESCRIBE_CONFIGS on it, else
    TopicConfigErrorCode TOPIC_AUTHORIZATION_FAILED (ControllerApis.createTopics)."""
    if version < 5:
        return response
    return attrs.evolve(response, topics=[
        attrs.evolve(t, configs=[], topic_config_error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        if t.error_code == 0 and not check.allowed(Op.DESCRIBE_CONFIGS, R.TOPIC, t.name) else t
        for t in response.topics])


def _cluster_operations(check, request, response, version, broker):
    if response.cluster_authorized_operations == NOT_PROVIDED:
        return response
    return attrs.evolve(response, cluster_authorized_operations=(
        check.operations(R.CLUSTER, CLUSTER_NAME)
        if check.allowed(Op.DESCRIBE, R.CLUSTER, CLUSTER_NAME) else 0))


def _list_groups(check, request, response, version, broker):
    """Every group with DESCRIBE on the cluster, else those the principal may describe."""
    if check.allowed(Op.DESCRIBE, R.CLUSTER, CLUSTER_NAME):
        return response
    return attrs.evolve(response, groups=[g for g in response.groups
                                          if check.allowed(Op.DESCRIBE, R.GROUP, g.group_id)])


def _offset_fetch(check, request, response, version, broker):
    """Topics the principal may not describe: left out of an all-topics fetch, else answered
    with TOPIC_AUTHORIZATION_FAILED and no offset (OffsetFetchResponse.UNAUTHORIZED_PARTITION)."""
    if version < 8:
        return attrs.evolve(response, topics=_offset_topics(check, request.topics is None,
                                                            response.topics))
    asked = {g.group_id: g.topics is None for g in request.groups}
    return attrs.evolve(response, groups=[
        attrs.evolve(g, topics=_offset_topics(check, asked.get(g.group_id, False), g.topics))
        for g in response.groups])


def _offset_topics(check, all_topics: bool, topics) -> list:
    out = []
    for t in topics:
        if check.allowed(Op.DESCRIBE, R.TOPIC, t.name):
            out.append(t)
        elif not all_topics:
            out.append(attrs.evolve(t, partitions=[
                attrs.evolve(p, committed_offset=-1, committed_leader_epoch=-1, metadata="",
                             error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                for p in t.partitions]))
    return out


def _list_transactions(check, request, response, version, broker):
    return attrs.evolve(response, transaction_states=[
        t for t in response.transaction_states
        if check.allowed(Op.DESCRIBE, R.TRANSACTIONAL_ID, t.transactional_id)])


_AFTER = {"list_transactions": _list_transactions, "created_topic_configs": _created_topic_configs,
          "described_topics": _described_topics,
          "transaction_topics": _transaction_topics, "metadata": _metadata, "describe_topic_partitions": _describe_topic_partitions,
          "group_operations": _group_operations, "cluster_operations": _cluster_operations,
          "list_groups": _list_groups, "offset_fetch": _offset_fetch}
