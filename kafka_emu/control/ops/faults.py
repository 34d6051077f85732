"""Fault operations: add a rule, list the rules (with how often each fired), remove one, clear.

The rule model, its validation and matching live in ``control/faults.py``; these operations are
how every surface (Python, HTTP, ``kafka-emu ctl``) reaches it.
"""

from __future__ import annotations

import attrs

from ..faults import rule_spec, rules_of
from .. import results as r
from ..operations import operation


@attrs.frozen(kw_only=True)
class AddFault:
    """A fault rule. Match: api (name or key), min/max_version, client_id (glob), group_id,
    member_id (member id or group.instance.id), topic; unset matches anything. Action: error
    (with error: a code name or number, optional message), delay (delay_ms), close_before,
    close_after, blackhole, throttle (throttle_ms). Trigger: the next ``count`` matches (1)
    after skipping ``skip``, or ``always``; with ``probability`` each fires under ``seed``."""

    action: str
    api: str | int | None = None
    min_version: int | None = None
    max_version: int | None = None
    client_id: str | None = None
    group_id: str | None = None
    member_id: str | None = None
    topic: str | None = None
    error: str | int | None = None
    message: str | None = None
    delay_ms: int | None = None
    throttle_ms: int | None = None
    count: int = 1
    always: bool = False
    skip: int = 0
    probability: float | None = None
    seed: int = 0


@attrs.frozen(kw_only=True)
class FaultId:
    rule_id: int


@operation("POST", "/faults", AddFault)
def add_fault(broker, params: AddFault) -> r.FaultRule:
    """Add a fault rule; returns it with its id."""
    spec = rule_spec(**attrs.asdict(params))  # ControlError before anything changes
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
