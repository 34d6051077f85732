"""Recorded event streams: what the clients printed and the emulator saw, judged again offline.

A recording is a text file, one line per thing seen, in the order the kit saw them::

    # a comment
    #! {"log_end": {"orders-0": 20}, "group": "g"}     parameters of the judgement (JSON)
    105 c1.1 { "name": "partitions_assigned", "partitions": [ ... ] }
    106 c1.1 10:00:00.106: argument: --topic orders   a non-event line: ignored, as live
    110 kit:c1.1 started {"instance_id": null}          the kit's own event about a process
    300 kit checkpoint {"label": "both joined"}         a settled point of the group
    320 server {"type": "MemberRemoved", "member_id": "m1", "reason": "left"}
    fail: 330 c2.1 { ... }                             only in the "fail" variant
    pass: 330 c2.1 { ... }                             only in the "pass" variant (either tag
                                                       may also precede a #! line)

The number is the kit's receipt time in ms (it stands in for a missing client timestamp, and
is a server event's ``at_ms`` unless it has one). ``c1.1`` is node ``c1``'s first process
(its client id). Client lines go through ``record.parse_line`` exactly as a live process's
stdout does, so a recording keeps each client's own dialect.

:func:`judge` applies the checks a scenario run applies (``runner._shared_checks`` and the
scenario's ending, chosen by the parameters): ``log_end`` (``"topic-partition": end``) turns
on no-loss, duplicates (``duplicates``: ``none`` | ``uncommitted`` | ``any``) and, unless
``"commits": false``, the final commits; ``partitions`` (default: ``log_end``'s) the valid
assignment checks; ``revocations`` (``{"nodes": [...], "static": bool}``, counted from the
checkpoint labelled ``baseline``); ``producer`` (``{"node": "p1", "sent": N}``); ``fenced``
(nodes). A failed scenario's client logs directory holds its run as such a file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from . import verdicts
from .record import TP, Entry, RunLog, Tracker, Violation, parse_line


@attrs.define
class Recording:
    log: RunLog
    server: list[dict[str, Any]]
    params: dict[str, Any]


def load(path: Path | str, variant: str | None = None) -> Recording:
    """A recording from a file; ``variant`` ("pass" / "fail") keeps that variant's lines."""
    return parse(Path(path).read_text(encoding="utf-8"), variant, where=str(path))


def parse(text: str, variant: str | None = None, *, where: str = "recording") -> Recording:
    log, server, params = RunLog(), [], {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        for tag in ("pass:", "fail:"):
            if line.startswith(tag):
                line = line[len(tag):].strip() if variant == tag[:-1] else ""
        if line.startswith("#!"):
            params.update(json.loads(line[2:]))
            continue
        if not line or line.startswith("#"):
            continue
        try:
            ms_text, source, rest = (line.split(None, 2) + [""])[:3]
            ms = float(ms_text)
            _add(log, server, ms, source, rest)
        except (ValueError, KeyError) as exc:
            raise ValueError(f"{where}:{number}: {exc}: {raw!r}") from None
    return Recording(log, server, params)


def _node_life(text: str) -> tuple[str, int]:
    node, _, life = text.rpartition(".")
    return node, int(life)


def _add(log: RunLog, server: list[dict[str, Any]], ms: float, source: str, rest: str) -> None:
    if source == "server":
        event = json.loads(rest)
        server.append({"seq": len(server) + 1, "at_ms": ms, **event})
    elif source == "kit" or source.startswith("kit:"):
        name, _, fields = rest.partition(" ")
        node, life = _node_life(source[4:]) if source != "kit" else ("kit", 0)
        log.add(node, life, {"name": f"kit_{name}", "timestamp": ms,
                             **(json.loads(fields) if fields.strip() else {})})
    else:
        node, life = _node_life(source)
        event = parse_line(rest)
        if event is not None:
            log.add(node, life, event, raw=rest, received_ms=ms)


def _tp(text: str) -> TP:
    topic, _, partition = text.rpartition("-")
    return topic, int(partition)


def judge(rec: Recording) -> list[Violation]:
    """Every check the recording's parameters call for, as the runner applies them."""
    p = rec.params
    entries = rec.log.snapshot()
    tracker, baseline = _replay(entries)
    fenced = set(p.get("fenced", ()))
    group = p.get("group", "g")
    log_end = {_tp(k): v for k, v in p.get("log_end", {}).items()}
    partitions = [_tp(k) for k in p["partitions"]] if "partitions" in p else sorted(log_end)
    node_of = {f"{e.node}.{e.life}": e.node for e in entries}
    out = verdicts.stream_rules(tracker, fenced=fenced) + \
        verdicts.no_overlap(tracker, fenced=fenced,
                            left=verdicts.departures(rec.server, group_id=group)) + \
        verdicts.valid_assignments(tracker, partitions) + \
        verdicts.server_rules(rec.server, group_id=group, partitions=partitions,
                              node_of_client=node_of)
    if "producer" in p:
        out += verdicts.producer_delivery(entries, p["producer"]["node"], p["producer"]["sent"],
                                          log_end)
    elif log_end:
        out += verdicts.no_loss(tracker, log_end)
        duplicates = p.get("duplicates", "none")
        if duplicates != "any":
            out += verdicts.no_duplicates(tracker, excuse_failed_commits=duplicates ==
                                          "uncommitted", ignore_nodes=fenced)
        if p.get("commits", True):
            out += verdicts.final_commits(tracker, log_end)
    if "revocations" in p:
        r = p["revocations"]
        out += verdicts.revocations(tracker, r["nodes"], baseline, static=r["static"])
    return out


def _replay(entries: Iterable[Entry]) -> tuple[Tracker, dict[str, int]]:
    tracker, baseline = Tracker(), {}
    for entry in entries:
        tracker.feed([entry])
        if entry.name == "kit_checkpoint" and entry.event.get("label") == "baseline":
            baseline = {name: n.revoked_count for name, n in tracker.nodes.items()}
    return tracker, baseline


def rules(violations: Iterable[Violation]) -> set[str]:
    return {v.rule for v in violations}
