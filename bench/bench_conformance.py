"""Conformance kit benchmark (issue 11): the catalogue's wall time per client, the client x
scenario matrix, and consumer failure with a 45 s session timeout.

Run with ``make bench`` (or ``.venv/bin/python bench/bench_conformance.py [--client NAME ...]``).
Not a test: it prints tables and always exits 0; a missed target is printed as "target missed".

1. The whole catalogue against each built-in verifiable client that is installed (kafkajs needs
   Node.js): wall time per client, target < 120 s; and the matrix of verdicts, one row per
   scenario (PASS / FAIL / SKIP; the reasons of failures are printed below it).
2. consumer_failure with ``session.timeout.ms=45000`` (the Java client's default): wall time from
   the SIGKILL of the partition owner to the partition owned by a survivor. The kit moves the
   emulator's clock to the dead member's session deadline instead of waiting; on real Kafka the
   same step takes at least the 45 s session timeout. Target < 2 s, printed as a ratio to 45 s.

Both group protocols by default (``--group-protocol classic|consumer`` for one): a client runs
on the consumer protocol (KIP-848) only if it has it (confluent-kafka); there the 45 s is the
broker's ``group.consumer.session.timeout.ms``, since the consumer protocol's session timeout is
not a client config.
"""

from __future__ import annotations

import argparse
import time

from kafka_emu.conformance import runner, scenarios
from kafka_emu.conformance.clients import BUILT_IN, ClientUnavailable, built_in

CATALOGUE_TARGET_S = 120.0
FAILURE_TARGET_S = 2.0
REAL_KAFKA_S = 45.0


def _clients(names: list[str]) -> list:
    out = []
    for name in names:
        try:
            out.append(built_in(name))
        except ClientUnavailable as exc:
            print(f"(skipping {name}: {exc})")
    return out


def _runs(clients: list, protocols: list[str]) -> list[tuple[str, object, str]]:
    """(column, client, protocol): each client on each protocol it speaks."""
    out = []
    for client in clients:
        for protocol in protocols:
            if protocol == "consumer" and "consumer_protocol" in client.unsupported:
                print(f"(not on the consumer protocol: {client.name}: "
                      f"{client.unsupported['consumer_protocol']})")
                continue
            column = client.name if protocol == "classic" else f"{client.name}/848"
            out.append((column, client, protocol))
    return out


def catalogue(clients: list, protocols: list[str]) -> None:
    print("== the conformance catalogue per client (/848: on the consumer protocol)")
    print(f"{'client':<32} {'wall s':>8} {'pass':>5} {'fail':>5} {'skip':>5}  target < "
          f"{CATALOGUE_TARGET_S:.0f} s")
    matrix: dict[str, dict[str, runner.Result]] = {}
    runs = _runs(clients, protocols)
    for column, client, protocol in runs:
        started = time.monotonic()
        results = runner.run_all(runner.select(None), client, group_protocol=protocol)
        wall = time.monotonic() - started
        for r in results:
            matrix.setdefault(r.scenario, {})[column] = r
        counts = {v: sum(r.verdict == v for r in results) for v in ("PASS", "FAIL", "SKIP")}
        label = f"{column} {client.library_version or ''}".strip()
        verdict = "ok" if wall < CATALOGUE_TARGET_S else "target missed"
        print(f"{label:<32} {wall:8.1f} {counts['PASS']:5} {counts['FAIL']:5} "
              f"{counts['SKIP']:5}  {verdict}", flush=True)
    print()
    names = [column for column, _client, _protocol in runs]
    print(f"{'scenario':<52}" + "".join(f"{n:>17}" for n in names))
    for scenario, row in matrix.items():
        cells = []
        for n in names:
            r = row.get(n)
            cells.append(f"{r.verdict} {r.seconds:4.1f}s" if r else "-")
        print(f"{scenario:<52}" + "".join(f"{c:>17}" for c in cells))
    for row in matrix.values():
        for column, r in row.items():
            if r.verdict == "FAIL":
                print(f"  FAIL {column} {r.scenario}: {r.reason[:400]}")
    print()


def consumer_failure_45s(clients: list, protocols: list[str]) -> None:
    print("== consumer_failure with a 45 s session timeout: SIGKILL -> partition reassigned")
    print(f"{'client':<32} {'wall s':>8} {'kill->owned s':>14} {'45 s / that':>12}  target < "
          f"{FAILURE_TARGET_S:.0f} s")
    scenarios.FAILURE_SESSION_MS = 45000  # the client's session.timeout.ms (classic)
    broker_session = {"group.consumer.session.timeout.ms": 45000}  # the consumer protocol's
    try:
        for column, client, protocol in _runs(clients, protocols):
            r = runner.run_scenario(scenarios.CATALOGUE["consumer_failure"], client,
                                    group_protocol=protocol,
                                    settings=broker_session if protocol == "consumer" else None)
            took = r.metrics.get("kill_to_reassigned_s")
            if r.verdict != "PASS" or took is None:
                print(f"{column:<32} {r.seconds:8.1f} {'-':>14} {'-':>12}  {r.verdict}: "
                      f"{r.reason[:200]}")
                continue
            verdict = "ok" if took < FAILURE_TARGET_S else "target missed"
            print(f"{column:<32} {r.seconds:8.1f} {took:14.2f} {REAL_KAFKA_S / took:11.0f}x"
                  f"  {verdict}", flush=True)
    finally:
        scenarios.FAILURE_SESSION_MS = scenarios.SESSION_TIMEOUT_MS
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--client", action="append", choices=sorted(BUILT_IN),
                        help="only these clients (default: every installed one)")
    parser.add_argument("--failure-only", action="store_true",
                        help="only the 45 s consumer-failure measurement")
    parser.add_argument("--group-protocol", choices=["classic", "consumer"],
                        help="only this group protocol (default: both)")
    args = parser.parse_args()
    clients = _clients(args.client or list(BUILT_IN))
    protocols = [args.group_protocol] if args.group_protocol else ["classic", "consumer"]
    consumer_failure_45s(clients, protocols)
    if not args.failure_only:
        catalogue(clients, protocols)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
