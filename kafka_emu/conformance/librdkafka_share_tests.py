"""librdkafka's own share consumer tests (KIP-932) against kafka-emu, one program at a time.

librdkafka tests its share consumer against a real Kafka 4.2 cluster with test programs
``tests/0170``-``0190`` (``TEST_BRKVER(4, 2, 0, 0)``). The kit runs them as librdkafka's CI
does, with the runner built by ``librdkafka_tests_build.py``:

- a fresh emulator per program, with the broker settings librdkafka's CI gives its cluster
  (``BROKER_SETTINGS``: a record lock may be as short as 1 s, which the tests' group configs
  ask for; topics created on first use), on three brokers where a test counts on partitions
  having different leaders (``BROKERS``);
- ``TESTS=<number> TEST_KAFKA_VERSION=4.2.0 RDKAFKA_TEST_CONF=<file naming the emulator>
  test-runner -p1`` (the program's ``_local`` sibling, which needs no broker, runs too);
- its output read back: each ``[ sub-test ]`` with its ``PASS (n s)`` / ``SKIP`` line or the
  ``### Test "... (sub-test)" failed at ...`` report, and each test's final
  ``Test NAME PASSED|FAILED|SKIPPED`` line.

A program is PASS when every test it ran passed, FAIL otherwise; a failure listed in
``KNOWN_FAILURES`` (understood: a deviation of kafka-emu, or a cause outside it) is reported as
XFAIL with its reason, and as a skipped JUnit test case. The output of each program is kept
(``<workdir>/<number>.log``) for reading a failure. 0190 (telemetry) skips itself: it reads
what a broker plugin exports through an OpenTelemetry collector into a topic, which kafka-emu
does not emulate.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from . import librdkafka_tests_build as build

PASS, FAIL, XFAIL, SKIP = "PASS", "FAIL", "XFAIL", "SKIP"
KAFKA_VERSION = "4.2.0"
# librdkafka's CI cluster (packaging/tools/run-share-consumer-tests.sh: trivup's KafkaCluster,
# whose brokers auto-create topics with 4 partitions; .semaphore/semaphore.yml's share settings).
# With Kafka's default of 1 partition, 0184 fails: its producer's metadata refresh re-creates a
# deleted topic, and a late delivery to its partition 1 is "Local: Unknown partition".
BROKER_SETTINGS = {"group.share.min.record.lock.duration.ms": 1000,
                   "auto.create.topics.enable": "true", "num.partitions": 4}
# test.conf's test.timeout.multiplier: the programs' time budgets (0170: 200 s for all its
# sub-tests) are a real cluster's on a CI machine; a loaded two-core machine running the
# emulator in Python beside the runner needs more
TIMEOUT_MULTIPLIER = 2.0
# 0179's do_test_destroy_with_explicit_ack expects each poll to return one partition's records:
# its two partitions have different leaders on librdkafka's three-broker CI cluster.
BROKERS = {"0179": 3}
KNOWN_FAILURES = {
    "0172": "do_test_mixed_ack_mode_same_group (sometimes): kafka-emu assigns a "
            "share-partition as soon as the assignor gives it, so the first member can take all "
            "400 records before the second joins; Kafka assigns it only once the share "
            "coordinator has initialised its state, a heartbeat later, by when both have joined "
            "(docs/explanation/differences-from-kafka.md: share-partitions assignable at once)",
}
TIMEOUT_S = 1200
UNFINISHED = "did not finish"

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# TEST_SAY's prefix: "[<test name padded>/<seconds>s] "
_PREFIX = re.compile(r"^\[(?P<test>[0-9]{4}\w*?)\s*/\s*[0-9.]+s\] ")
_SUB_START = re.compile(r"^\[ (?P<sub>.+) \]$")
_SUB_PASS = re.compile(r"^\[ (?P<sub>.+): PASS \((?P<s>[0-9.]+)s\) \]$")
_SUB_SKIP = re.compile(r"^\[ (?P<sub>.+): SKIP: (?P<why>.*) \]$")
_FAILED_AT = re.compile(r'^### Test "(?P<test>\w+)(?: \((?P<sub>.+)\))?" failed at (?P<where>\S+)')
_TEST_END = re.compile(r"=+ Test (?P<test>\w+) (?P<state>PASSED|FAILED|SKIPPED) =+")


@attrs.frozen(kw_only=True)
class SubTest:
    test: str
    name: str
    verdict: str
    seconds: float = 0.0
    reason: str = ""


@attrs.frozen(kw_only=True)
class ProgramResult:
    number: str
    verdict: str
    seconds: float
    tests: dict[str, str] = attrs.field(factory=dict)  # test name -> PASSED / FAILED / SKIPPED
    subtests: tuple[SubTest, ...] = ()
    reason: str = ""
    log: Path | None = None

    def line(self) -> str:
        passed = sum(s.verdict == PASS for s in self.subtests)
        detail = f" -- {self.reason}" if self.reason else ""
        return (f"{self.verdict:5} {self.number}  {passed:3}/{len(self.subtests):<3} sub-tests "
                f"{self.seconds:7.1f}s{detail}")


def parse_output(text: str) -> tuple[dict[str, str], list[SubTest]]:
    """Each test's final state and each sub-test's verdict, in order, from a test-runner's
    output. Sub-test names repeat (a helper run with several scenarios is ``func:line`` each
    time): a PASS, SKIP or failure report closes the latest one of its name; repeats are
    numbered (``name #2``)."""
    tests: dict[str, str] = {}
    subs: list[SubTest] = []
    open_: dict[tuple[str, str], int] = {}  # (test, sub-test) -> its index in subs, while open
    lines = [_ANSI.sub("", line).rstrip() for line in text.splitlines()]

    def close(test: str, name: str, sub: SubTest) -> None:
        at = open_.pop((test, name), None)
        if at is None:
            subs.append(sub)
        else:
            subs[at] = sub

    for i, raw in enumerate(lines):
        prefixed = _PREFIX.match(raw)
        test = prefixed.group("test") if prefixed else ""
        line = raw[prefixed.end():] if prefixed else raw.strip()
        if (m := _TEST_END.search(line)) is not None:
            tests[m.group("test")] = m.group("state")
        elif (m := _FAILED_AT.match(line)) is not None:
            message = _PREFIX.sub("", lines[i + 1].strip()) if i + 1 < len(lines) else ""
            name = m.group("sub") or ""
            close(m.group("test"), name,
                  SubTest(test=m.group("test"), name=name or "(outside any sub-test)",
                          verdict=FAIL, reason=f"{m.group('where')}: {message}"))
        elif (m := _SUB_PASS.match(line)) is not None:
            close(test, m.group("sub"), SubTest(test=test, name=m.group("sub"), verdict=PASS,
                                                seconds=float(m.group("s"))))
        elif (m := _SUB_SKIP.match(line)) is not None:
            close(test, m.group("sub"), SubTest(test=test, name=m.group("sub"), verdict=SKIP,
                                                reason=m.group("why")))
        elif prefixed and (m := _SUB_START.match(line)) is not None:
            open_[(test, m.group("sub"))] = len(subs)
            subs.append(SubTest(test=test, name=m.group("sub"), verdict=FAIL, reason=UNFINISHED))
    seen: dict[tuple[str, str], int] = {}
    out = []
    for sub in subs:
        if sub.reason == UNFINISHED and tests.get(sub.test) == "PASSED":
            # a sub-test some tests never close (no SUB_TEST_PASS) in a test that passed
            sub = attrs.evolve(sub, verdict=PASS, reason="no PASS line; its test passed")
        seen[(sub.test, sub.name)] = n = seen.get((sub.test, sub.name), 0) + 1
        out.append(sub if n == 1 else attrs.evolve(sub, name=f"{sub.name} #{n}"))
    return tests, out


def verdict_of(number: str, returncode: int | None, tests: dict[str, str],
               subtests: list[SubTest], *, timeout_s: float = TIMEOUT_S) -> tuple[str, str]:
    """(verdict, reason) of one program's run."""
    failed = [s for s in subtests if s.verdict == FAIL]
    if returncode is None:
        why = f"killed after {timeout_s:g}s"
    elif failed:
        why = f"{failed[0].name}: {failed[0].reason}"
    elif not tests:
        why = f"no test of {number} ran (exit {returncode})"
    elif all(state in ("PASSED", "SKIPPED") for state in tests.values()) and returncode == 0:
        skipped = [t for t, state in tests.items() if state == "SKIPPED"]
        return (SKIP, "skipped: " + ", ".join(skipped)) if len(skipped) == len(tests) \
            else (PASS, "")
    else:
        why = ", ".join(f"{t} {state}" for t, state in tests.items() if state != "PASSED") \
            or f"exit {returncode}"
    if number in KNOWN_FAILURES:
        return XFAIL, f"known: {KNOWN_FAILURES[number]} [{why}]"
    return FAIL, why


def run_program(number: str, *, workdir: Path, runner: Path | None = None,
                timeout_s: float = TIMEOUT_S, trace_dir: Path | None = None,
                timeout_multiplier: float = TIMEOUT_MULTIPLIER,
                brokers: int | None = None) -> ProgramResult:
    """Program ``number`` (``"0170"``) against a fresh emulator (``brokers``: default
    ``BROKERS``' count, else one); its output in ``workdir/<number>.log``. An unexpected error
    inside the emulator (a kafka-emu bug) fails the program, naming it."""
    from ..testing.emulator import EmulatorError, make_config, run_in_thread
    runner = runner or build.runner()
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / f"{number}.log"
    config = make_config(BROKER_SETTINGS, brokers=brokers or BROKERS.get(number, 1))
    labels = {"client": f"librdkafka-{build.LIBRDKAFKA_VERSION}-tests", "scenario": number}
    started = time.monotonic()
    returncode: int | None = None
    emulator_error = ""
    try:
        with run_in_thread(config, trace_dir=str(trace_dir) if trace_dir else None,
                           trace_labels=labels) as emu:
            conf = workdir / f"{number}.conf"
            conf.write_text(f"bootstrap.servers={emu.bootstrap_servers}\n"
                            f"test.timeout.multiplier={timeout_multiplier}\n", encoding="utf-8")
            with open(log, "w", encoding="utf-8") as out:
                try:
                    returncode = subprocess.run(
                        [str(runner), "-p1"], cwd=workdir, env=_env(number, conf), stdout=out,
                        stderr=subprocess.STDOUT, timeout=timeout_s, check=False).returncode
                except subprocess.TimeoutExpired:
                    returncode = None
    except EmulatorError as exc:
        emulator_error = str(exc).splitlines()[0]
    seconds = time.monotonic() - started
    tests, subtests = parse_output(log.read_text(encoding="utf-8", errors="replace"))
    verdict, reason = verdict_of(number, returncode, tests, subtests, timeout_s=timeout_s)
    if emulator_error:
        verdict, reason = FAIL, f"{emulator_error} (then: {verdict} {reason})".rstrip()
    return ProgramResult(number=number, verdict=verdict, seconds=seconds, tests=tests,
                         subtests=tuple(subtests), reason=reason, log=log)


def _env(number: str, conf: Path) -> dict[str, str]:
    # the runner links the tree's shared libraries, not the system's librdkafka
    libs = [str(p) for p in build.library_dirs()] + [
        p for p in [os.environ.get("LD_LIBRARY_PATH", "")] if p]
    return {**os.environ, "TESTS": number, "TEST_KAFKA_VERSION": KAFKA_VERSION,
            "RDKAFKA_TEST_CONF": str(conf), "LD_LIBRARY_PATH": os.pathsep.join(libs)}


def run_all(numbers: Iterable[str], *, workdir: Path | None = None,
            on_result: Callable[[ProgramResult], None] | None = None,
            trace_dir: Path | None = None) -> list[ProgramResult]:
    runner = build.runner()
    results = []
    with tempfile.TemporaryDirectory(prefix="kafka-emu-librdkafka-") as tmp:
        where = workdir or Path(tmp)
        for number in numbers:
            results.append(run_program(number, workdir=where, runner=runner,
                                       trace_dir=trace_dir))
            if on_result is not None:
                on_result(results[-1])
    return results


def select(numbers: Iterable[str]) -> list[str]:
    """Program numbers, all of them when none are given; KeyError names an unknown one."""
    chosen = [n.zfill(4) for n in numbers] or list(build.TEST_PROGRAMS)
    unknown = [n for n in chosen if n not in build.TEST_PROGRAMS]
    if unknown:
        raise KeyError(f"not a real-broker share test of librdkafka {build.LIBRDKAFKA_VERSION}: "
                       f"{', '.join(unknown)} (these are: {', '.join(build.TEST_PROGRAMS)})")
    return chosen


def junit_results(results: list[ProgramResult]) -> list:
    """The kit's Result rows for runner.junit_xml: one per sub-test and one per program."""
    from .runner import Result
    rows = []
    for r in results:
        program_verdict = SKIP if r.verdict == XFAIL else r.verdict
        for s in r.subtests:
            verdict = SKIP if (r.verdict == XFAIL and s.verdict == FAIL) else s.verdict
            reason = r.reason if verdict != s.verdict else s.reason
            rows.append(Result(scenario=s.name, client=f"librdkafka.{s.test}", verdict=verdict,
                               seconds=s.seconds, reason=reason))
        rows.append(Result(scenario=f"program {r.number}", client="librdkafka",
                           verdict=program_verdict, seconds=r.seconds, reason=r.reason))
    return rows


def run_cli(args) -> int:
    """``kafka-emu conformance --librdkafka-share-tests [NUMBER ...]``."""
    import sys

    from . import runner
    try:
        numbers = select(args.librdkafka_share_tests)
    except KeyError as exc:
        print(f"kafka-emu conformance: error: {exc.args[0]}", file=sys.stderr)
        return 2
    try:
        path = build.runner() if build.find() else build.build(
            log=lambda message: print(message, flush=True))
    except build.BuildUnavailable as exc:
        print(f"kafka-emu conformance: error: librdkafka's test-runner unavailable: {exc}",
              file=sys.stderr)
        return 2
    print(f"kafka-emu conformance: librdkafka {build.LIBRDKAFKA_VERSION}'s share consumer "
          f"tests, {len(numbers)} program(s), runner {path}", flush=True)
    logs = args.trace_dir / "client-logs" / "librdkafka-tests" if args.trace_dir else None
    results = run_all(numbers, workdir=logs, trace_dir=args.trace_dir,
                      on_result=lambda r: print(r.line(), flush=True))
    counts = {v: sum(r.verdict == v for r in results) for v in (PASS, FAIL, XFAIL, SKIP)}
    print(f"{counts[PASS]} passed, {counts[FAIL]} failed, {counts[XFAIL]} known failures, "
          f"{counts[SKIP]} skipped in {sum(r.seconds for r in results):.1f}s")
    if args.junit_xml:
        runner.junit_xml(junit_results(results), args.junit_xml,
                         suite=f"librdkafka {build.LIBRDKAFKA_VERSION} share consumer tests")
    return 1 if counts[FAIL] else 0
