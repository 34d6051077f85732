"""``kafka-emu conformance``: Kafka's consumer system-test scenarios against a client.

    kafka-emu conformance --client confluent-kafka
    kafka-emu conformance --consumer 'my-verifiable-client --consumer' [--producer '...'] \
        [--profile java|librdkafka|contract|kafka-emu|FILE.toml] [--bootstrap-flag broker-list]
    kafka-emu conformance --list
    kafka-emu conformance --client aiokafka --scenario consumer_failure --junit-xml out.xml
    kafka-emu conformance --client confluent-kafka --group-protocol consumer
    kafka-emu conformance --matrix 'kafka-python==2.0.6,3.0.12;aiokafka==0.12.0' --trace-dir DIR
    kafka-emu conformance --matrix default [--scenario NAME ...]
    kafka-emu conformance --transactions [--client confluent-kafka | --copier CMD]
    kafka-emu conformance --librdkafka-share-tests [0170 0178 ...] [--junit-xml FILE]

``--group-protocol consumer`` runs the consumers on KIP-848's protocol (the kit passes
``group.protocol=consumer``, to Kafka's VerifiableConsumer as ``--group-protocol consumer``);
the scenarios Kafka's test matrix runs on the classic protocol only are skipped naming why,
a client without the consumer protocol is refused (exit 2) with the reason.

``--matrix SPEC`` runs the catalogue for several versions of the built-in clients, each in its
own cached environment, on both group protocols where a version has them (``matrix.py``), and
writes ``DIR/matrix.jsonl`` (one line per scenario x client version) for ``kafka-emu report``.

An external program's profile (how it takes flags and properties, what it lacks) is detected
from its ``--help`` output unless ``--profile`` names one (``profiles.py``).

Starts its own emulator per scenario, prints one line per scenario (PASS / FAIL / SKIP and the
reason) and a summary. Exit codes: 0 every selected scenario passed (skips allowed), 1 some
failed, 2 bad usage (one line), a built-in client whose library is missing, or a client
without the group protocol asked for.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .clients import BUILT_IN
from .contract import GROUP_PROTOCOLS


def _flag(text: str) -> str:
    name = text.lstrip("-")
    if name not in ("bootstrap-server", "broker-list"):
        raise argparse.ArgumentTypeError(f"expected bootstrap-server or broker-list, got {text!r}")
    return f"--{name}"


def add_commands(sub) -> None:
    p = sub.add_parser("conformance", help="run Kafka's consumer system-test scenarios against "
                       "a client", description="Run Kafka's consumer system-test scenarios "
                       "(VerifiableConsumer contract) against a client, each against a fresh "
                       "emulator.")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--client", choices=sorted(BUILT_IN), help="one of kafka-emu's own "
                     "verifiable clients")
    who.add_argument("--consumer", metavar="CMD", help="command of a verifiable consumer (the "
                     "kit appends the contract's flags)")
    who.add_argument("--matrix", metavar="SPEC", help="run the built-in clients at several "
                     "versions, each installed in its own cached environment: "
                     "'CLIENT==V1,V2;CLIENT==V3' (exact versions from PyPI, npm for kafkajs) or "
                     "'default' (four versions each of confluent-kafka, kafka-python, aiokafka "
                     "and kafkajs 2.1.0, 2.2.4); both group protocols where a version has them "
                     "unless --group-protocol names one; writes TRACE_DIR/matrix.jsonl")
    who.add_argument("--copier", metavar="CMD", help="with --transactions: command of a "
                     "transactional message copier (Kafka's TransactionalMessageCopier flags)")
    p.add_argument("--transactions", action="store_true", help="run Kafka's transactions "
                   "system test (txn_scenarios.py) against a transactional copier: --client "
                   "names a built-in one (confluent-kafka), --copier an external one")
    p.add_argument("--librdkafka-share-tests", nargs="*", metavar="NUMBER", default=None,
                   help="build librdkafka's own test runner (its source from npm, pinned) and "
                   "run its real-broker share consumer test programs (0170-0190; default: all "
                   "of them), each against a fresh emulator (librdkafka_share_tests.py)")
    p.add_argument("--producer", metavar="CMD", help="command of a verifiable producer "
                   "(with --consumer)")
    p.add_argument("--name", default="external", help="the external client's name in results")
    p.add_argument("--profile", metavar="NAME|FILE", help="how the external client takes its "
                   "flags: java (Kafka's VerifiableConsumer/Producer), librdkafka "
                   "(kafkatest_verifiable_client), contract (Kafka's documented contract), "
                   "kafka-emu, or a .toml/.json profile file; default: detected from its --help "
                   "output")
    p.add_argument("--bootstrap-flag", default=None, type=_flag,
                   metavar="{bootstrap-server,broker-list}",
                   help="the flag the kit passes the bootstrap address with, overriding the "
                   "profile's (librdkafka's client takes broker-list)")
    p.add_argument("--scenario", dest="scenarios", action="append", default=[], metavar="NAME",
                   help="run only this scenario (repeatable; default: all)")
    p.add_argument("--group-protocol", choices=GROUP_PROTOCOLS, default=None,
                   help="the consumers' group protocol: classic (JoinGroup/SyncGroup) or "
                   "consumer (KIP-848, ConsumerGroupHeartbeat); default classic (with "
                   "--matrix: both, where the client version has them)")
    p.add_argument("--group-remote-assignor", metavar="NAME", help="with --group-protocol "
                   "consumer: the broker's assignor the consumers name (uniform, range); "
                   "default: the scenario's")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument("--markdown", action="store_true", help="with --list: as a Markdown table "
                   "(what each checks, its Kafka test, what a client needs for it)")
    p.add_argument("--trace-dir", type=Path, metavar="DIR", help="write each scenario's trace "
                   "and its verdict (scenario_verdict) here, labelled with client and scenario, "
                   "and keep the client logs under DIR/client-logs (with --matrix: one "
                   "directory per column and DIR/matrix.jsonl; default ./conformance-matrix)")
    p.add_argument("--junit-xml", type=Path, metavar="FILE", help="write JUnit XML results")
    p.set_defaults(run=lambda args: _run(p, args))


def _run(parser: argparse.ArgumentParser, args) -> int:
    from . import profiles, runner
    from .clients import ClientUnavailable, built_in, external
    from .scenarios import CATALOGUE

    if args.librdkafka_share_tests is not None:
        from .librdkafka_share_tests import run_cli as run_librdkafka_tests
        return run_librdkafka_tests(args)
    if args.transactions or args.copier:
        from .txn_scenarios import run_cli
        return run_cli(args)
    if args.matrix is not None:
        return _run_matrix(parser, args)
    args.group_protocol = args.group_protocol or "classic"
    if args.markdown and not args.list:
        parser.error("--markdown goes with --list")
    if args.list and args.markdown:
        from .docs import markdown
        print(markdown())
        return 0
    if args.list:
        for sc in CATALOGUE.values():
            why = sc.skip or sc.not_on.get(args.group_protocol)
            flag = f" [skipped on {args.group_protocol}: {why}]" if why else ""
            print(f"{sc.name:50} {sc.summary}{flag}\n{'':50} from {sc.kafka_test}")
        return 0
    if not args.client and not args.consumer:
        parser.error("one of --client or --consumer is required (or --list)")
    if args.producer and not args.consumer:
        parser.error("--producer goes with --consumer")
    if args.profile and not args.consumer:
        parser.error("--profile goes with --consumer (a built-in client has its own)")
    if args.group_remote_assignor and args.group_protocol != "consumer":
        parser.error("--group-remote-assignor goes with --group-protocol consumer (the classic "
                     "protocol's consumers assign themselves)")
    try:
        scenarios = runner.select(args.scenarios)
    except KeyError as exc:
        parser.error(exc.args[0])
    if args.client:
        try:
            client = built_in(args.client)
        except ClientUnavailable as exc:
            print(f"kafka-emu conformance: error: {exc}", file=sys.stderr)
            return 2
    else:
        try:
            profile, why = _profile(args)
        except profiles.ProfileError as exc:
            parser.error(str(exc))
        client = external(args.consumer, args.producer, profile=profile,
                          bootstrap_flag=args.bootstrap_flag, name=args.name)
    if args.group_protocol == "consumer" and "consumer_protocol" in client.unsupported:
        # every scenario would be skipped: say so once, as for a missing library
        print(f"kafka-emu conformance: error: {client.name} cannot run on the consumer "
              f"protocol: {client.unsupported['consumer_protocol']}", file=sys.stderr)
        return 2
    version = f" {client.library_version}" if client.library_version else ""
    print(f"kafka-emu conformance: {client.name}{version}, {len(scenarios)} scenario(s), "
          f"{args.group_protocol} protocol", flush=True)
    if args.consumer:
        lacks = "; lacks " + ", ".join(sorted(client.unsupported)) if client.unsupported else ""
        print(f"profile {client.profile.name} ({why}): bootstrap "
              f"{client.profile.bootstrap_flag}{lacks}", flush=True)
    def report(result) -> None:
        print(result.line(), flush=True)

    logs = args.trace_dir / "client-logs" / client.name if args.trace_dir else None
    results = runner.run_all(scenarios, client, on_result=report, workdir=logs,
                             trace_dir=args.trace_dir, group_protocol=args.group_protocol,
                             remote_assignor=args.group_remote_assignor)
    counts = {v: sum(r.verdict == v for r in results) for v in (runner.PASS, runner.FAIL,
                                                                 runner.SKIP)}
    total = sum(r.seconds for r in results)
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped "
          f"in {total:.1f}s")
    if args.junit_xml:
        runner.junit_xml(results, args.junit_xml, suite=f"kafka-emu conformance {client.name}"
                         f" ({args.group_protocol} protocol)")
    if args.trace_dir:
        print(f"traces (each scenario's run and its verdict) and client logs in "
              f"{args.trace_dir}", file=sys.stderr)
    return 0 if counts["FAIL"] == 0 else 1


def _run_matrix(parser: argparse.ArgumentParser, args) -> int:
    from . import matrix, runner
    for flag, given in (("--list", args.list), ("--producer", args.producer),
                        ("--profile", args.profile), ("--junit-xml", args.junit_xml),
                        ("--bootstrap-flag", args.bootstrap_flag),
                        ("--group-remote-assignor", args.group_remote_assignor)):
        if given:
            parser.error(f"{flag} does not go with --matrix")
    try:
        parsed = matrix.parse(args.matrix)
        scenarios = runner.select(args.scenarios)
    except matrix.SpecError as exc:
        parser.error(f"--matrix: {exc}")
    except KeyError as exc:
        parser.error(exc.args[0])
    out = args.trace_dir or Path("conformance-matrix")
    cols = matrix.columns(parsed, args.group_protocol)
    if not cols:
        parser.error(f"--matrix: no client version there speaks the {args.group_protocol} "
                     "protocol")
    print(f"kafka-emu conformance: matrix of {len(cols)} column(s) x {len(scenarios)} "
          f"scenario(s) into {out}", flush=True)

    def log(message: str) -> None:
        print(message, flush=True)

    def report(col, result) -> None:
        print(f"  [{col.name}] {result.line()}", flush=True)

    started = time.monotonic()
    cells = matrix.run(parsed, scenarios, out, only_protocol=args.group_protocol,
                       on_cell=report, log=log)
    print()
    print(matrix.table(cells))
    print(f"matrix in {time.monotonic() - started:.1f}s; summary {out / matrix.MATRIX_FILE} "
          f"(render it with: kafka-emu report {out} --out REPORT_DIR)")
    return 1 if matrix.failed(cells) else 0


def _profile(args):
    """(profile, how it was chosen) for an external client."""
    import shlex

    from . import profiles
    if args.profile:
        return profiles.load(args.profile), "as given"
    profile, why = profiles.detect(shlex.split(args.consumer))
    return profile, f"detected: {why}"
