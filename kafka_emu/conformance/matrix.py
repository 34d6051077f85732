"""The client x version matrix: the catalogue against several versions of each built-in client.

    kafka-emu conformance --matrix 'confluent-kafka==2.3.0,2.16.1;kafka-python==2.0.6,3.0.12' \
        [--scenario NAME ...] [--group-protocol classic|consumer] [--trace-dir DIR]
    kafka-emu conformance --matrix default

SPEC is ``CLIENT==VERSION[,VERSION...]`` groups separated by ``;`` (spaces ignored), CLIENT one
of the built-in clients, each VERSION an exact release on PyPI (npm for kafkajs); ``default`` is
:data:`DEFAULT`. A column is one (client, version, group protocol): every version runs on the
classic protocol, and also on the consumer protocol (KIP-848) where that version has it
(:func:`protocols`); ``--group-protocol`` keeps one of the two.

Each version runs in its own environment (``envs.py``: a venv per Python library version, an
npm prefix per kafkajs version, cached in kafka-emu's cache directory) with the kit's own
client programs. A version that cannot be installed is a column of SKIP cells saying why. Every
cell is run by ``runner.run_scenario`` exactly as a single-client run is, traced into the
column's directory, and appended to ``DIR/matrix.jsonl`` as soon as it is known (one JSON object
per cell: scenario, client, version, group_protocol, column, verdict, reason, seconds, run, trace
file and client logs, relative to DIR), which ``kafka-emu report DIR`` renders as the matrix.

A known client bug (``known_bugs.py``) labels only the versions its evidence came from (its
``seen_on``); librdkafka's early-access consumer protocol (before 2.10) labels that column's
failures with what was seen on 2.6.1. The FAIL stays either way.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from . import envs
from . import known_bugs as known
from .clients import BUILT_IN, EMULATOR_GAPS, UNSUPPORTED, ClientSpec
from .runner import SKIP, Result, run_scenario
from .scenarios import CATALOGUE, Scenario

# At least four versions of each Python library across its last three years (as of 2026-11,
# from `pip index versions`), kafkajs's last releases (2.2.4, 2023-02, is its newest).
DEFAULT = ("confluent-kafka==2.3.0,2.6.1,2.10.1,2.16.1;"
           "kafka-python==2.0.6,2.2.21,2.3.3,3.0.12;"
           "aiokafka==0.10.0,0.11.0,0.12.0,0.14.0;"
           "kafkajs==2.1.0,2.2.4")

MATRIX_FILE = "matrix.jsonl"
# an exact release: 2.6.1, 0.11.0rc1, 2.0.0.post1, npm's 2.3.0-beta.3 (no ranges, no wildcards)
_VERSION = re.compile(r"\d+(\.\d+)+([-.]?(a|b|rc|post|dev|alpha|beta)[0-9.]*)*\Z")

# Capabilities (profiles.CAPABILITIES) a library gained at a release, read in its source: older
# versions lack them, so the scenarios needing them are skipped naming why, never failed.
CAPABILITY_FLOORS: dict[str, dict[str, tuple[tuple[int, ...], str]]] = {
    "kafka-python": {"static": ((2, 3), "kafka-python {v} has no static membership (no "
                                "group_instance_id config before 2.3.0)")},
}


class SpecError(ValueError):
    """A SPEC the matrix cannot read (the message says where)."""


@attrs.frozen(kw_only=True)
class Column:
    client: str
    version: str
    group_protocol: str

    @property
    def name(self) -> str:
        proto = "" if self.group_protocol == "classic" else f" ({self.group_protocol})"
        return f"{self.client} {self.version}{proto}"

    @property
    def slug(self) -> str:
        return f"{self.client}-{self.version}-{self.group_protocol}"


def parse(spec: str) -> dict[str, tuple[str, ...]]:
    """``"a==1,2;b==3"`` -> {"a": ("1", "2"), "b": ("3",)}; SpecError names the bad part."""
    spec = spec.strip()
    if spec == "default":
        spec = DEFAULT
    out: dict[str, tuple[str, ...]] = {}
    groups = [g.strip() for g in spec.split(";")]
    if not any(groups):
        raise SpecError("empty matrix spec (expected CLIENT==VERSION[,VERSION...][;...] or "
                        "'default')")
    for group in groups:
        if not group:
            continue
        client, sep, versions = group.partition("==")
        client = client.strip()
        if not sep:
            raise SpecError(f"{group!r}: expected CLIENT==VERSION[,VERSION...]")
        if client not in BUILT_IN:
            raise SpecError(f"{group!r}: unknown client {client!r} (built in: "
                            f"{', '.join(BUILT_IN)})")
        if client in out:
            raise SpecError(f"{client!r} appears twice (list its versions in one group)")
        got = tuple(v.strip() for v in versions.split(","))
        bad = [v for v in got if not _VERSION.match(v)]
        if bad or not got:
            raise SpecError(f"{group!r}: {bad[0] if bad else ''!r} is not an exact version "
                            "(e.g. 2.6.1)")
        if len(set(got)) != len(got):
            raise SpecError(f"{group!r}: a version appears twice")
        out[client] = got
    return out


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version.split("+")[0])[:3])


def protocols(client: str, version: str) -> tuple[str, ...]:
    """The group protocols this version speaks: the consumer protocol (KIP-848) came with
    librdkafka 2.4 (confluent-kafka 2.4.0, ``group.protocol=consumer``); the other built-in
    clients have none."""
    if client == "confluent-kafka" and _release(version) >= (2, 4):
        return ("classic", "consumer")
    return ("classic",)


def columns(parsed: dict[str, tuple[str, ...]], only_protocol: str | None = None) -> list[Column]:
    return [Column(client=c, version=v, group_protocol=p)
            for c, versions in parsed.items() for v in versions
            for p in protocols(c, v) if only_protocol in (None, p)]


def client_for(client: str, version: str, *, group_protocol: str = "classic",
               log: Callable[[str], None] | None = None) -> ClientSpec:
    """The built-in client ``client`` running on library ``version`` in its own environment;
    envs.EnvUnavailable when that version cannot be installed here."""
    unsupported = dict(UNSUPPORTED.get(client, {}))
    if "consumer" not in protocols(client, version):
        unsupported.setdefault("consumer_protocol", f"{client} {version} has no consumer group "
                               "protocol (KIP-848 came with librdkafka 2.4)")
    for capability, (floor, why) in CAPABILITY_FLOORS.get(client, {}).items():
        if _release(version) < floor:
            unsupported.setdefault(capability, why.format(v=version))
    bugs = known.of(client, version)
    if client == "confluent-kafka" and group_protocol == "consumer" and \
            _release(version) < (2, 10):  # KIP-848 as early access: every failure labelled so
        early = known.EARLY_KIP_848.format(v=version)
        bugs = tuple(known.KnownBug(scenario=name, bug=early) for name in CATALOGUE) + bugs
    common = dict(name=client, unsupported=unsupported, library_version=version,
                  known_bugs=bugs, emulator_gaps=dict(EMULATOR_GAPS.get(client, {})))
    if client == "kafkajs":
        from .clients.node import NodeMissing, kafkajs_command
        try:
            cmd = tuple(kafkajs_command(version))
        except NodeMissing as exc:
            raise envs.EnvUnavailable(str(exc)) from None
        return ClientSpec(consumer=cmd + ("--consumer",), producer=cmd + ("--producer",),
                          **common)
    python = envs.python_env(client, version, log=log)
    module = {"confluent-kafka": "confluent_kafka", "kafka-python": "kafka_python",
              "aiokafka": "aiokafka"}[client]
    base = (str(python), "-m", f"kafka_emu.conformance.clients.{module}")
    return ClientSpec(consumer=base + ("--consumer",), producer=base + ("--producer",), **common)


def run(parsed: dict[str, tuple[str, ...]], scenarios: list[Scenario], out: Path, *,
        only_protocol: str | None = None, on_cell: Callable[[Column, Result], None] | None = None,
        log: Callable[[str], None] | None = None) -> list[dict]:
    """Every column's scenarios; the cells as written to ``out/matrix.jsonl``."""
    out.mkdir(parents=True, exist_ok=True)
    summary = out / MATRIX_FILE
    summary.write_text("", encoding="utf-8")
    cells: list[dict] = []
    for col in columns(parsed, only_protocol):
        where = out / col.slug
        traces, logs = where / "traces", where / "client-logs"
        started = time.monotonic()
        try:
            client: ClientSpec | None = client_for(col.client, col.version,
                                                   group_protocol=col.group_protocol, log=log)
            unavailable = ""
        except envs.EnvUnavailable as exc:
            client, unavailable = None, f"not installable: {exc}"
        if log is not None:
            log(f"{col.name}: " + (unavailable or f"{len(scenarios)} scenario(s)"))
        for sc in scenarios:
            if client is None:
                result = Result(scenario=sc.name, client=col.client, verdict=SKIP, seconds=0.0,
                                reason=unavailable)
                run_file = None
            else:
                before = set(traces.rglob("run=*")) if traces.exists() else set()
                result = run_scenario(sc, client, workdir=logs, trace_dir=traces,
                                      group_protocol=col.group_protocol)
                run_file = _scenario_run(set(traces.rglob("run=*")) - before)
            cell = {"scenario": sc.name, "client": col.client, "version": col.version,
                    "group_protocol": col.group_protocol, "column": col.name,
                    "verdict": result.verdict.lower(), "reason": result.reason,
                    "seconds": round(result.seconds, 2),
                    "run": _run_id(run_file),
                    "trace": str(run_file.relative_to(out)) if run_file else None,
                    "client_logs": str((logs / sc.name).relative_to(out))
                    if client is not None and result.verdict != SKIP else None}
            cells.append(cell)
            with open(summary, "a", encoding="utf-8") as f:
                f.write(json.dumps(cell) + "\n")
            if on_cell is not None:
                on_cell(col, result)
        if log is not None and client is not None:
            log(f"{col.name}: catalogue in {time.monotonic() - started:.1f}s")
    return cells


def _scenario_run(new_files: Iterable[Path]) -> Path | None:
    """Of the trace files a scenario added, the emulator's run (labelled suite=conformance; the
    other is its verdict's run)."""
    for path in sorted(new_files):
        try:
            with open(path, encoding="utf-8") as f:
                first = json.loads(f.readline() or "{}")
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if (first.get("labels") or {}).get("suite") == "conformance":
            return path
    return None


def _run_id(path: Path | None) -> str | None:
    if path is None:
        return None
    return path.name.split("=", 1)[1].split(".", 1)[0]


def table(cells: list[dict]) -> str:
    """The matrix as terminal text: a row per scenario, a column per client version, then each
    failure's reason (and each column that could not be installed, once)."""
    cols = list(dict.fromkeys(c["column"] for c in cells))
    rows = list(dict.fromkeys(c["scenario"] for c in cells))
    at = {(c["scenario"], c["column"]): c for c in cells}
    width = max([len(r) for r in rows] + [8])
    heads = [f"#{i + 1}" for i in range(len(cols))]
    lines = [f"{'':{width}}  " + " ".join(f"{h:>5}" for h in heads)]
    mark = {"pass": "pass", "fail": "FAIL", "skip": "skip"}
    for r in rows:
        lines.append(f"{r:{width}}  " + " ".join(
            f"{mark.get(at[(r, c)]['verdict'], '?') if (r, c) in at else '':>5}" for c in cols))
    lines.append("")
    for h, c in zip(heads, cols, strict=True):
        mine = [x for x in cells if x["column"] == c]
        n = {v: sum(x["verdict"] == v for x in mine) for v in ("pass", "fail", "skip")}
        lines.append(f"{h:>4} {c}: {n['pass']} pass, {n['fail']} fail, {n['skip']} skip")
    unavailable = {c["column"]: c["reason"] for c in cells
                   if c["reason"].startswith("not installable")}
    for c, why in unavailable.items():
        lines.append(f"  {c}: {why}")
    for x in cells:
        if x["verdict"] == "fail":
            first = x["reason"].splitlines()[0] if x["reason"] else ""
            if first.startswith("known ") and " -- " in first:  # the bug's label, what broke
                first = f"{first.split(':', 1)[0]}: {first.split(' -- ', 1)[1]}"
            lines.append(f"  FAIL {x['scenario']} on {x['column']}: {first[:300]}")
    return "\n".join(lines)


def failed(cells: list[dict]) -> bool:
    return any(c["verdict"] == "fail" for c in cells)


__all__ = ["DEFAULT", "MATRIX_FILE", "Column", "SpecError", "client_for", "columns", "failed",
           "parse", "protocols", "run", "table"]
