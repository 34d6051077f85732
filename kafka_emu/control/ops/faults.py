"""Fault operations: add a rule, list the rules (with how often each fired), remove one, clear.

The rule model, its validation and matching live in ``control/faults.py``; these operations are
how every surface (Python, HTTP, ``kafka-emu ctl``) reaches it.
"""

from __future__ import annotations

import attrs

from ..faults import rule_spec, rules_of
from .. import results as r
from ..operations import ControlError, INT16_MAX, INT32_MAX, INT64_MAX, bounded, operation


@attrs.frozen(kw_only=True)
class AddFault:
    """A fault rule. Match: api (name or key), min/max_version, client_id (glob), group_id,
    member_id (member id or group.instance.id), topic, principal (a glob over the connection's
    KafkaPrincipal, User:alice), listener (its name); unset matches anything. A rule naming
    SaslAuthenticate also matches a SASL login, by the principal logging in. Action: error
    (with error: a code name or number, optional message), delay (delay_ms), close_before,
    close_after, blackhole, throttle (throttle_ms). Trigger: the next ``count`` matches (1)
    after skipping ``skip``, or ``always``; with ``probability`` each fires under ``seed``.
    Options that contradict each other (``count`` with ``always``, ``seed`` without
    ``probability``, an action's option on another action) are refused, naming both."""

    action: str
    # api keys, versions and error codes are int16 on the wire
    api: str | int | None = bounded(0, INT16_MAX, default=None)
    min_version: int | None = bounded(0, INT16_MAX, default=None)
    max_version: int | None = bounded(0, INT16_MAX, default=None)
    client_id: str | None = None
    group_id: str | None = None
    member_id: str | None = None
    topic: str | None = None
    principal: str | None = None
    listener: str | None = None
    error: str | int | None = bounded(-INT16_MAX - 1, INT16_MAX, default=None)
    message: str | None = None
    delay_ms: int | None = bounded(0, INT32_MAX, default=None)
    throttle_ms: int | None = bounded(0, INT32_MAX, default=None)
    # None: 1, unless always (an explicit count and always contradict each other)
    count: int | None = bounded(1, INT32_MAX, default=None)
    always: bool = False
    skip: int = bounded(0, INT32_MAX, default=0)
    probability: float | None = bounded(0.0, 1.0, default=None)
    seed: int | None = bounded(0, INT64_MAX, default=None)  # only with probability (0 if unset)


@attrs.frozen(kw_only=True)
class FaultId:
    rule_id: int = bounded(0, INT64_MAX)


@operation("POST", "/faults", AddFault)
def add_fault(broker, params: AddFault) -> r.FaultRule:
    """Add a fault rule; returns it with its id."""
    spec = rule_spec(**attrs.asdict(params))  # ControlError before anything changes
    if spec.get("listener") is not None:
        names = [li.name for li in broker.config.security.listeners] or ["PLAINTEXT"]
        if spec["listener"] not in names:
            raise ControlError(f"unknown listener {params.listener!r} (listeners: "
                               f"{', '.join(names)})")
    return rules_of(broker).add(**spec).describe()


@operation("GET", "/faults")
def list_faults(broker, params) -> list[r.FaultRule]:
    """The fault rules in the order they apply, with how often each matched and fired."""
    return [rule.describe() for rule in rules_of(broker).rules.values()]


@operation("DELETE", "/faults/{rule_id}", FaultId)
def remove_fault(broker, params: FaultId) -> r.FaultRule:
    """Remove one fault rule; returns it as it was."""
    return rules_of(broker).remove(params.rule_id).describe()


@operation("DELETE", "/faults")
def clear_faults(broker, params) -> r.Removed:
    """Remove every fault rule."""
    return {"removed": rules_of(broker).clear()}
