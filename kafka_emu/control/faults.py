"""Fault rules: which requests a test makes fail, and how.

Theory of operation. A ``Rule`` is a matcher (API by name or key, an optional version range,
a client id glob, group id, member id or group.instance.id, topic, the connection's principal
(a glob) and listener), an action, and a trigger. The broker asks
``FaultRules.match(api, version, client_id, request, principal, listener)`` for every request
while any rule exists (``broker.faults`` is None otherwise: one attribute check on the hot path) and
gets the ``Firing`` of the first rule, in the order they were added, that matches and whose
trigger says "now". The connection carries the action out (``broker/connection.py``):

- ``error``: answer with error code E, shaped for that API and version by the one
  error-response builder (per partition where the API has them); the request is not applied;
- ``delay``: wait D ms before handling the request (a slow way in); a client that closes
  meanwhile is forgotten and its request never applied;
- ``close_before``: close the connection without applying the request;
- ``close_after``: apply the request, then close without answering (the client never learns
  that it succeeded: what an idempotent producer's retry is for);
- ``blackhole``: never answer; the request waits until the client closes the connection;
- ``throttle``: as a quota does (KIP-219). The response carries ``throttle_time_ms`` = T. To a
  client whose version knows KIP-219 it is sent at once, and the broker then reads nothing more
  from that connection for T ms; to older versions the response itself is held back T ms.

Logins. A SASL listener's SaslAuthenticate requests are answered by the authenticator at the
connection (security/sasl.py), not by a handler; it asks ``match(..., login=True)`` once a
token would pass, with the principal the client is logging in as. Only rules naming
SaslAuthenticate match there (a rule for "every request of User:alice" must not break her
login), and ``broker/fault_actions.py`` carries them out as Kafka fails a login: ``error``
answers that code (SASL_AUTHENTICATION_FAILED, with Kafka's invalid-credentials message unless
the rule has one) and closes the connection -- a failed login without a wrong password.

Triggers (all deterministic): the rule ignores its first ``skip`` matches, then fires on the
next ``count`` (default 1; ``always`` for no limit); with ``probability`` p each of those
matches fires only if the rule's own RNG, seeded with ``seed``, draws below p. A rule whose
count is used up stays listed (with how often it matched and fired) until removed. Options that
would be silently dropped contradict the rule and are refused naming both: ``count`` with
``always``, ``seed`` without ``probability``, ``error``/``message`` or ``delay_ms``/
``throttle_ms`` on another action, ``min_version`` above ``max_version``.

Pure except for the seeded RNG: no trio, no clock, no I/O.
"""

from __future__ import annotations

import fnmatch
import random
from typing import Any

import attrs

from ..broker.event_rows import request_identity
from ..errors import ErrorCode
from ..protocol.registry import APIS, BY_NAME
from ..protocol.schema import Array, fields_of
from .operations import ControlError

ACTIONS = ("error", "delay", "close_before", "close_after", "blackhole", "throttle")
SASL_AUTHENTICATE = 36
# what the authenticator can do to a login (security/sasl.py, broker/fault_actions.py)
LOGIN_ACTIONS = ("error", "delay", "close_before", "blackhole")
MAX_VERSION = 0x7FFF  # an api version is an int16 on the wire

def api_key_of(api: str | int) -> int:
    """An API key from a name ("OffsetCommit", any case) or a key (8, "8"); ControlError else."""
    if isinstance(api, int) or (isinstance(api, str) and api.strip().isascii()
                                and api.strip().isdigit()):
        # an API key has at most five digits (int() of thousands of them raises ValueError)
        key = int(api) if isinstance(api, int) or len(api.strip()) <= 5 else None
        if key not in APIS:
            shown = key if key is not None else f"{str(api).strip()[:12]}..."
            raise ControlError(f"unknown api key {shown} (known: {', '.join(map(str, APIS))})")
        return key
    found = BY_NAME.get(api)
    if found is None:
        lowered = {name.lower(): a for name, a in BY_NAME.items()}
        found = lowered.get(str(api).strip().lower())
    if found is None:
        raise ControlError(f"unknown api {api!r} (known: {', '.join(BY_NAME)})")
    return found.key


def error_code_of(code: str | int) -> ErrorCode:
    """An ErrorCode from a name ("REBALANCE_IN_PROGRESS") or a number (27, "27")."""
    try:
        if isinstance(code, int) or (isinstance(code, str) and
                                     code.strip().lstrip("-").isdigit()):
            return ErrorCode(int(code))
        return ErrorCode[str(code).strip().upper()]
    except (KeyError, ValueError):
        raise ControlError(f"unknown error code {code!r} (a name such as "
                           "REBALANCE_IN_PROGRESS or a number such as 27)") from None


@attrs.frozen(kw_only=True)
class Firing:
    """What the connection must do to one request."""

    rule_id: int
    action: str
    error_code: ErrorCode | None = None
    message: str | None = None
    delay_ms: int = 0


@attrs.define(eq=False, kw_only=True)
class Rule:
    id: int
    action: str
    api_key: int | None = None
    min_version: int | None = None
    max_version: int | None = None
    client_id: str | None = None  # a glob (fnmatch)
    group_id: str | None = None
    member_id: str | None = None  # matches a member id or a group.instance.id
    topic: str | None = None
    principal: str | None = None  # a glob over "User:alice" (KafkaPrincipal type:name)
    listener: str | None = None  # a listener name (upper case, as Kafka normalizes them)
    error_code: ErrorCode | None = None
    message: str | None = None
    delay_ms: int = 0
    count: int | None = 1  # None: always
    skip: int = 0
    probability: float | None = None
    seed: int = 0
    matched: int = 0
    fired: int = 0
    rng: random.Random = attrs.field(factory=random.Random, repr=False)

    def __attrs_post_init__(self) -> None:
        self.rng.seed(self.seed)

    @property
    def exhausted(self) -> bool:
        return self.count is not None and self.fired >= self.count

    def matches(self, api_key: int, version: int, client_id: str, request: Any,
                principal: str = "User:ANONYMOUS", listener: str = "PLAINTEXT",
                login: bool = False) -> bool:
        if self.api_key is not None and api_key != self.api_key:
            return False
        if login and self.api_key is None:
            return False  # only rules naming SaslAuthenticate touch a login
        if self.principal is not None and not fnmatch.fnmatchcase(principal, self.principal):
            return False
        if self.listener is not None and listener != self.listener:
            return False
        if self.min_version is not None and version < self.min_version:
            return False
        if self.max_version is not None and version > self.max_version:
            return False
        if self.client_id is not None and not fnmatch.fnmatchcase(client_id or "",
                                                                  self.client_id):
            return False
        if self.group_id is not None and self.group_id not in request_groups(request):
            return False
        if self.member_id is not None and self.member_id not in request_members(request):
            return False
        if self.topic is not None and self.topic not in request_topics(request):
            return False
        return True

    def trigger(self) -> bool:
        """Count one match; whether the rule fires on it."""
        self.matched += 1
        if self.matched <= self.skip or self.exhausted:
            return False
        if self.probability is not None and self.rng.random() >= self.probability:
            return False
        self.fired += 1
        return True

    def describe(self) -> dict[str, Any]:
        match = {k: v for k, v in (
            ("api", APIS[self.api_key].name if self.api_key is not None else None),
            ("min_version", self.min_version), ("max_version", self.max_version),
            ("client_id", self.client_id), ("group_id", self.group_id),
            ("member_id", self.member_id), ("topic", self.topic),
            ("principal", self.principal), ("listener", self.listener)) if v is not None}
        action: dict[str, Any] = {"action": self.action}
        if self.action == "error":
            action["error"] = self.error_code.name
            action["error_code"] = int(self.error_code)
            if self.message is not None:
                action["message"] = self.message
        if self.action in ("delay", "throttle"):
            action["delay_ms" if self.action == "delay" else "throttle_ms"] = self.delay_ms
        return {"id": self.id, **action, "match": match,
                "count": self.count, "skip": self.skip, "probability": self.probability,
                "seed": self.seed if self.probability is not None else None,
                "matched": self.matched, "fired": self.fired,
                "active": not self.exhausted}


class FaultRules:
    """The rules of one broker, in the order they were added."""

    def __init__(self, broker: Any) -> None:
        self._broker = broker
        self.rules: dict[int, Rule] = {}
        self._next_id = 1

    def _sync(self) -> None:
        # the broker consults us only while a rule that can still fire exists
        live = any(not r.exhausted for r in self.rules.values())
        self._broker.faults = self if live else None

    def add(self, **spec: Any) -> Rule:
        rule = Rule(id=self._next_id, **spec)
        self._next_id += 1
        self.rules[rule.id] = rule
        self._sync()
        return rule

    def remove(self, rule_id: int) -> Rule:
        rule = self.rules.pop(rule_id, None)
        if rule is None:
            raise ControlError(f"no fault rule {rule_id} (rules: "
                               f"{', '.join(map(str, self.rules)) or 'none'})", status=404)
        self._sync()
        return rule

    def clear(self) -> int:
        n = len(self.rules)
        self.rules.clear()
        self._sync()
        return n

    def match(self, api_key: int, version: int, client_id: str, request: Any,
              principal: str = "User:ANONYMOUS", listener: str = "PLAINTEXT",
              login: bool = False) -> Firing | None:
        """The firing for this request, if a rule fires on it (counting the match).
        ``login``: a SaslAuthenticate at a SASL listener's door (``principal`` is the one the
        client is logging in as)."""
        for rule in self.rules.values():
            if rule.exhausted or not rule.matches(api_key, version, client_id, request,
                                                  principal, listener, login):
                continue
            if not rule.trigger():
                continue
            if rule.exhausted:
                self._sync()
            return Firing(rule_id=rule.id, action=rule.action, error_code=rule.error_code,
                          message=rule.message, delay_ms=rule.delay_ms)
        return None


def rules_of(broker: Any) -> FaultRules:
    rules = broker.fault_rules
    if rules is None:
        rules = broker.fault_rules = FaultRules(broker)
    return rules


# -- what a request names, read from any declaration ------------------------------------------

def request_groups(request: Any) -> set[str]:
    """Every group id the request names: ``group_id``, FindCoordinator's group keys, and the
    entries of group arrays (DescribeGroups, DeleteGroups, OffsetFetch v8+ groups)."""
    group, _, _, _ = request_identity(request)
    found = {group} if group else set()
    if getattr(request, "key_type", None) == 0:
        found.update(getattr(request, "coordinator_keys", None) or ())
    for spec in fields_of(type(request)):
        if "group" in spec.name and isinstance(spec.type, Array):
            for item in getattr(request, spec.name) or ():
                found.add(item if isinstance(item, str) else getattr(item, "group_id", None))
    found.discard(None)
    return found


def request_members(request: Any) -> set[str]:
    """Every member id and group.instance.id the request names (LeaveGroup v3+'s members)."""
    _, member, instance, _ = request_identity(request)
    found = {member, instance}
    for item in getattr(request, "members", None) or ():
        found.add(getattr(item, "member_id", None))
        found.add(getattr(item, "group_instance_id", None))
    found.discard(None)
    found.discard("")
    return found


def request_topics(request: Any) -> set[str]:
    """Every topic name the request names: the entries of arrays whose field name says topic
    (topics, topic_data, topic_names, ...), also inside other arrays (OffsetFetch v8 groups)."""
    found: set[str] = set()
    _collect_topics(request, found)
    return found


def _collect_topics(struct: Any, found: set[str]) -> None:
    for spec in fields_of(type(struct)):
        if not isinstance(spec.type, Array):
            continue
        items = getattr(struct, spec.name) or ()
        if "topic" in spec.name:
            for item in items:
                name = item if isinstance(item, str) else (
                    getattr(item, "name", None) or getattr(item, "topic", None))
                if isinstance(name, str):
                    found.add(name)
        elif isinstance(spec.type.element, type):
            for item in items:
                _collect_topics(item, found)


# -- building a rule from control input ---------------------------------------------------

def rule_spec(*, action: str, api: str | int | None = None, min_version: int | None = None,
              max_version: int | None = None, client_id: str | None = None,
              group_id: str | None = None, member_id: str | None = None,
              topic: str | None = None, principal: str | None = None,
              listener: str | None = None, error: str | int | None = None,
              message: str | None = None, delay_ms: int | None = None,
              throttle_ms: int | None = None, count: int | None = None, always: bool = False,
              skip: int = 0, probability: float | None = None,
              seed: int | None = None) -> dict[str, Any]:
    """Validated keyword arguments of ``Rule`` (ControlError naming the first problem). Numbers
    arrive within their bounds (``ops/faults.py`` declares them); what is checked here is how
    the options go together."""
    if action not in ACTIONS:
        raise ControlError(f"unknown action {action!r} (one of {', '.join(ACTIONS)})")
    spec: dict[str, Any] = {"action": action}
    if api is not None:
        spec["api_key"] = api_key_of(api)
    for name, value in (("min_version", min_version), ("max_version", max_version)):
        if value is not None and not 0 <= value <= MAX_VERSION:
            raise ControlError(f"{name} must be >= 0 and <= {MAX_VERSION}, got {value}")
    if min_version is not None and max_version is not None and min_version > max_version:
        raise ControlError(f"min_version {min_version} is above max_version {max_version}")
    spec.update(min_version=min_version, max_version=max_version, client_id=client_id,
                group_id=group_id, member_id=member_id, topic=topic)
    if principal is not None:
        # Kafka's KafkaPrincipal "type:name"; a glob may stand for either part ("User:*")
        kind, sep, name = principal.partition(":")
        if not sep or not kind or not name:
            raise ControlError(f"principal must be a KafkaPrincipal type:name such as "
                               f"User:alice (a glob: User:*), got {principal!r}")
        spec["principal"] = principal
    if listener is not None:
        if not listener.strip():
            raise ControlError("listener must be a listener name such as SASL_PLAINTEXT")
        spec["listener"] = listener.strip().upper()
    if spec.get("api_key") == SASL_AUTHENTICATE and action not in LOGIN_ACTIONS:
        # a login is answered at the connection's door: it cannot be applied and then
        # unanswered (close_after), and SaslAuthenticate has no throttle_time_ms (throttle)
        raise ControlError(f"action {action} does not apply to SaslAuthenticate: one of "
                           f"{', '.join(LOGIN_ACTIONS)}")
    if action == "error":
        if error is None:
            raise ControlError("action error needs error (a code name or number)")
        spec["error_code"] = error_code_of(error)
        spec["message"] = message
    elif error is not None or message is not None:
        given = "error" if error is not None else "message"
        raise ControlError(f"error and message belong to action error, not {action}: action "
                           f"{action} and {given} contradict each other")
    if action == "delay":
        if delay_ms is None:
            raise ControlError("action delay needs delay_ms")
        spec["delay_ms"] = _within("delay_ms", delay_ms, 0, _INT32_MAX)
    elif action == "throttle":
        if throttle_ms is None:
            raise ControlError("action throttle needs throttle_ms")
        spec["delay_ms"] = _within("throttle_ms", throttle_ms, 0, _INT32_MAX)
    elif delay_ms is not None or throttle_ms is not None:
        given = "delay_ms" if delay_ms is not None else "throttle_ms"
        raise ControlError(f"delay_ms/throttle_ms do not apply to action {action}: action "
                           f"{action} and {given} contradict each other")
    if action == "delay" and throttle_ms is not None:
        raise ControlError("throttle_ms does not apply to action delay (delay_ms does): action "
                           "delay and throttle_ms contradict each other")
    if action == "throttle" and delay_ms is not None:
        raise ControlError("delay_ms does not apply to action throttle (throttle_ms does): "
                           "action throttle and delay_ms contradict each other")
    if always and count is not None:
        # the rule would fire without limit and the count would be dropped without a word
        raise ControlError(f"count ({count}) and always contradict each other: always fires on "
                           "every match, count on that many; give one")
    spec["count"] = None if always else _within("count", 1 if count is None else count, 1,
                                                 _INT32_MAX)
    spec["skip"] = _within("skip", skip, 0, _INT32_MAX)
    if probability is not None and not 0.0 <= probability <= 1.0:  # (NaN too)
        raise ControlError(f"probability must be >= 0.0 and <= 1.0, got {probability}")
    if seed is not None and probability is None:
        raise ControlError(f"seed ({seed}) without probability: the seed drives only "
                           "probability's draws, so it would be dropped; give probability too, "
                           "or no seed")
    spec.update(probability=probability, seed=0 if seed is None else seed)
    return spec


_INT32_MAX = 0x7FFF_FFFF


def _within(name: str, value: int, minimum: int, maximum: int) -> int:
    if not minimum <= value <= maximum:
        raise ControlError(f"{name} must be >= {minimum} and <= {maximum}, got {value}")
    return value
