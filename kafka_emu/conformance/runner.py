"""Run scenarios against a client: one fresh emulator each, one verdict each.

A verdict is PASS (no violation), FAIL (the violations, or what the scenario was waiting for
when it gave up) or SKIP (the reason: the client lacks a feature, the emulator lacks the
control plane the scenario needs, or the scenario needs the several-broker cluster). The
verdict combines the scenario's own checks with the ones every scenario shares: the
clients' stream rules, no overlapping ownership, the checkpoints' assignments, and the
server-side rules read from the emulator's events.

Verdicts can be written as JUnit XML (one testcase per scenario) and, with a trace directory,
as trace records: each scenario's run is traced (labelled with scenario and client) and its
verdict written beside it as a ``scenario_verdict`` run, which the PySpark report turns into
the scenario x client-version matrix.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import attrs

from ..testing.emulator import make_config, run_in_thread
from . import known_bugs, verdicts
from .clients import ClientSpec
from .harness import (
    BROKER_SETTINGS,
    CONSUMER_PROTOCOL_SETTINGS,
    HEARTBEAT_MS,
    Harness,
    ScenarioFailed,
    ScenarioSkipped,
)
from .profiles import CAPABILITIES
from .record import Violation
from .scenarios import CATALOGUE, Scenario

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"


@attrs.frozen(kw_only=True)
class Result:
    scenario: str
    client: str
    verdict: str
    seconds: float
    reason: str = ""
    violations: tuple[Violation, ...] = ()
    metrics: dict[str, float] = attrs.field(factory=dict)

    def line(self) -> str:
        detail = f" -- {self.reason}" if self.reason else ""
        return f"{self.verdict:4}  {self.scenario:40} {self.seconds:6.1f}s{detail}"


def skip_reason(sc: Scenario, client: ClientSpec, group_protocol: str = "classic") -> str | None:
    """Why ``sc`` cannot run against ``client`` on ``group_protocol``, or None: always skipped,
    meaningless on that protocol (as Kafka's test matrix leaves it out), or needing what the
    client lacks (the consumer protocol itself among them)."""
    if sc.skip:
        return sc.skip
    if group_protocol in sc.not_on:
        return f"not on the {group_protocol} protocol: {sc.not_on[group_protocol]}"
    if sc.kind == "share":
        from .share_scenarios import share_skip_reason
        return share_skip_reason(client)
    needs = sorted(sc.needs | ({"consumer_protocol"} if group_protocol == "consumer" else set()))
    for need in needs:
        if need in client.unsupported:
            return (f"needs {CAPABILITIES.get(need, need)}, which {client.name} lacks: "
                    f"{client.unsupported[need]}")
    return None


def run_scenario(sc: Scenario, client: ClientSpec, *, workdir: Path | None = None,
                 settings: dict[str, Any] | None = None, wait_s: float | None = None,
                 trace_dir: Path | None = None, group_protocol: str = "classic",
                 remote_assignor: str | None = None) -> Result:
    """Run one scenario against a fresh emulator. Client logs go to ``workdir/<scenario>``
    (a temporary directory, removed after a pass, when ``workdir`` is None). With
    ``trace_dir`` the emulator writes the scenario's trace file there, labelled with the
    client and the scenario, and the verdict is recorded beside it as a ``scenario_verdict``
    run (``kafka_emu.trace.writer.write_scenario_verdict``). ``group_protocol`` "consumer"
    runs the consumers on KIP-848's protocol (``remote_assignor`` naming the broker's assignor),
    the emulator with the kit's ``CONSUMER_PROTOCOL_SETTINGS``."""
    started = time.monotonic()
    why = skip_reason(sc, client, group_protocol)
    if why is not None:
        return Result(scenario=sc.name, client=client.name, verdict=SKIP, seconds=0.0,
                      reason=why)
    own_dir = workdir is None
    where = Path(tempfile.mkdtemp(prefix=f"kafka-emu-{sc.name}-")) if own_dir else \
        workdir / sc.name
    where.mkdir(parents=True, exist_ok=True)
    topic, group = f"{sc.name}-topic", f"{sc.name}-{uuid.uuid4().hex[:6]}"
    protocol_settings = CONSUMER_PROTOCOL_SETTINGS if group_protocol == "consumer" else {}
    config = make_config({**BROKER_SETTINGS, **protocol_settings, **sc.settings,
                          **(settings or {})},
                         topics={topic: sc.partitions}, brokers=sc.brokers)
    tracing = {} if trace_dir is None else {
        "trace_dir": str(trace_dir),
        "trace_labels": {"suite": "conformance", "scenario": sc.name, "client": client.name,
                         "client_version": client.library_version or "",
                         "group_protocol": group_protocol,
                         # the interval the kit configures its clients with, so the report does
                         # not flag as too fast what the kit itself asked for
                         "heartbeat.interval.ms": str(HEARTBEAT_MS)}}
    violations: list[Violation] = []
    reason = ""
    skipped = None
    metrics: dict[str, float] = {}
    try:
        with run_in_thread(config, **tracing) as emu:
            h = _harness_class(sc)(emu, client, scenario=sc.name, topic=topic, partitions=sc.partitions,
                        group=group, workdir=where, group_protocol=group_protocol,
                        remote_assignor=remote_assignor,
                        **({"wait_s": wait_s} if wait_s else {}))
            try:
                violations += sc.run(h)
            except ScenarioSkipped as exc:
                skipped = str(exc)
            except ScenarioFailed as exc:
                reason = str(exc)
            finally:
                h.kill_everything()
                h.sync()
                h.server_events = emu.timeline(types=verdicts.SERVER_EVENT_TYPES)
            # share consumers have no assignment to check: their scenarios judge themselves
            violations = (_shared_checks(h) if sc.kind == "consumer" else []) + violations
            repeated = getattr(h.tracker, "repeated_lines", 0)
            if repeated:  # lines the client printed twice, left out of the checks: said here
                h.metrics["repeated_lines"] = repeated
            metrics = h.metrics
            if reason or violations:  # what the kit saw, for whoever reads the failure
                _dump(h, where / "events.jsonl")
    except Exception as exc:  # the emulator itself failed: a kafka-emu bug, reported as such
        reason = f"kafka-emu error: {exc!r}\n{traceback.format_exc(limit=5)}"
    seconds = time.monotonic() - started
    if skipped is not None:
        return Result(scenario=sc.name, client=client.name, verdict=SKIP, seconds=seconds,
                      reason=skipped)
    if own_dir and not reason and not violations:
        shutil.rmtree(where, ignore_errors=True)
    verdict = FAIL if reason or violations else PASS
    if not reason and violations:
        reason = "; ".join(str(v) for v in _first_per_rule(violations))
    elif reason and violations:
        reason += "; also " + "; ".join(str(v) for v in _first_per_rule(violations))
    if verdict == FAIL:
        reason += f" (client logs in {where})"
        known = known_bugs.label(client.known_bugs, client=client.name, scenario=sc.name,
                                 reason=reason, violations=violations)
        if known is not None:
            reason = known
        elif sc.name in client.emulator_gaps:
            reason = f"known kafka-emu gap: {client.emulator_gaps[sc.name]} -- {reason}"
    if trace_dir is not None:
        from ..trace.writer import write_scenario_verdict
        write_scenario_verdict(trace_dir, scenario=sc.name, client=client.name,
                               client_version=client.library_version or "",
                               verdict=verdict.lower(), reason=reason, seconds=seconds)
    return Result(scenario=sc.name, client=client.name, verdict=verdict, seconds=seconds,
                  reason=reason, violations=tuple(violations), metrics=metrics)


def _harness_class(sc: Scenario) -> type[Harness]:
    if sc.kind == "share":
        from .share_scenarios import ShareHarness
        return ShareHarness
    return Harness


def _dump(h: Harness, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for e in h.log.snapshot():
            f.write(json.dumps({"seq": e.seq, "node": e.node, "life": e.life, **e.event}) + "\n")
        for e in h.server_events:
            f.write(json.dumps({"server": True, **e}, default=str) + "\n")
    _dump_recording(h, path.with_suffix(".stream"))


def _dump_recording(h: Harness, path: Path) -> None:
    """The run as a recording (``replay.py``): ``kafka_emu.conformance.replay.load`` and
    ``judge`` read it back, the clients' lines exactly as they printed them."""
    ends = {f"{t}-{p}": end for (t, p), end in h.log_end().items()}
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# {h.scenario}, client {h.client.name} (profile {h.client.profile.name})\n")
        f.write(f"#! {json.dumps({'group': h.group, 'log_end': ends})}\n")
        for e in h.log.snapshot():
            if e.name.startswith("kit_"):
                fields = {k: v for k, v in e.event.items() if k not in ("name", "timestamp")}
                source = "kit" if e.node == "kit" else f"kit:{e.node}.{e.life}"
                f.write(f"{e.t_ms:.0f} {source} {e.name[4:]} {json.dumps(fields, default=str)}\n")
            else:
                f.write(f"{e.t_ms:.0f} {e.node}.{e.life} {e.raw or json.dumps(e.event)}\n")
        for e in h.server_events:
            f.write(f"{e.get('at_ms', 0)} server {json.dumps(e, default=str)}\n")


def _first_per_rule(violations: Iterable[Violation]) -> list[Violation]:
    seen: dict[str, Violation] = {}
    for v in violations:
        seen.setdefault(v.rule, v)
    return list(seen.values())


def _shared_checks(h: Harness) -> list[Violation]:
    t = h.tracker
    left = verdicts.departures(h.server_events, group_id=h.group)
    out = verdicts.stream_rules(t, fenced=h.fenced_nodes) + \
        verdicts.no_overlap(t, fenced=h.fenced_nodes, left=left) + \
        verdicts.valid_assignments(t, h.all_partitions)
    node_of = {f"{n}.{life}": n for n, lives in h.lives.items() for life in range(1, lives + 1)}
    out += verdicts.server_rules(h.server_events, group_id=h.group, partitions=h.all_partitions,
                                 node_of_client=node_of)
    return out


def select(names: Iterable[str] | None) -> list[Scenario]:
    """Scenarios by name (all of them when ``names`` is empty); KeyError names unknown ones."""
    names = list(names or ())
    if not names:
        return list(CATALOGUE.values())
    unknown = [n for n in names if n not in CATALOGUE]
    if unknown:
        raise KeyError(f"unknown scenario(s): {', '.join(unknown)} (see --list)")
    return [CATALOGUE[n] for n in names]


def run_all(scenarios: Iterable[Scenario], client: ClientSpec, *,
            on_result: Callable[[Result], None] | None = None,
            workdir: Path | None = None, wait_s: float | None = None,
            trace_dir: Path | None = None, group_protocol: str = "classic",
            remote_assignor: str | None = None) -> list[Result]:
    results = []
    for sc in scenarios:
        result = run_scenario(sc, client, workdir=workdir, wait_s=wait_s, trace_dir=trace_dir,
                              group_protocol=group_protocol, remote_assignor=remote_assignor)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def junit_xml(results: list[Result], path: Path, *, suite: str) -> None:
    """One ``<testsuite>`` with a ``<testcase>`` per scenario (failure / skipped elements)."""
    root = ET.Element("testsuite", name=suite, tests=str(len(results)),
                      failures=str(sum(r.verdict == FAIL for r in results)),
                      skipped=str(sum(r.verdict == SKIP for r in results)),
                      time=f"{sum(r.seconds for r in results):.3f}")
    for r in results:
        case = ET.SubElement(root, "testcase", classname=f"kafka_emu.conformance.{r.client}",
                             name=r.scenario, time=f"{r.seconds:.3f}")
        if r.verdict == FAIL:
            failure = ET.SubElement(case, "failure", message=r.reason.split("\n")[0][:500])
            failure.text = "\n".join([r.reason, *(str(v) for v in r.violations)])
        elif r.verdict == SKIP:
            ET.SubElement(case, "skipped", message=r.reason)
    ET.indent(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
