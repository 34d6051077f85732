"""Conformance matrix benchmark (issue 37): the catalogue against several versions of every
built-in client, each in its own cached environment, and how long that takes.

Run with ``make bench`` (or ``.venv/bin/python bench/bench_conformance_matrix.py [--matrix SPEC]
[--scenario NAME ...] [--out DIR]``). Not a test: it prints the matrix and the times and always
exits 0. Default SPEC: ``kafka_emu.conformance.matrix.DEFAULT`` (four versions each of
confluent-kafka, kafka-python and aiokafka across their last three years, kafkajs 2.1.0 and
2.2.4; confluent-kafka 2.4+ on both group protocols).

Prints, per column (client, version, group protocol): the install time when the environment was
not cached yet, the catalogue's wall time and its pass / fail / skip counts; then the whole
matrix's wall time, the matrix as ``kafka-emu conformance --matrix`` prints it, and where its
``matrix.jsonl`` is (``kafka-emu report DIR --out R`` renders it).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from kafka_emu.conformance import envs, matrix, runner


def _ensure_envs(parsed: dict[str, tuple[str, ...]]) -> dict[tuple[str, str], str]:
    """Install what is not cached yet, timing each; (client, version) -> how it went."""
    how: dict[tuple[str, str], str] = {}
    for client, versions in parsed.items():
        for version in versions:
            started = time.monotonic()
            try:
                matrix.client_for(client, version)
            except envs.EnvUnavailable as exc:
                how[(client, version)] = f"not installable: {str(exc)[:200]}"
                continue
            took = time.monotonic() - started
            how[(client, version)] = "cached" if took < 1.0 else f"installed in {took:.1f}s"
    return how


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matrix", default="default", metavar="SPEC")
    parser.add_argument("--scenario", dest="scenarios", action="append", default=[])
    parser.add_argument("--group-protocol", choices=["classic", "consumer"])
    parser.add_argument("--out", type=Path, help="where the traces and matrix.jsonl go "
                        "(default: a temporary directory, kept)")
    args = parser.parse_args()
    parsed = matrix.parse(args.matrix)
    scenarios = runner.select(args.scenarios)
    out = args.out or Path(tempfile.mkdtemp(prefix="kafka-emu-matrix-bench-"))
    print(f"== conformance matrix: {args.matrix} x {len(scenarios)} scenario(s) into {out}")
    installs = _ensure_envs(parsed)
    print(f"{'column':<40} {'env':<24} {'wall s':>8} {'pass':>5} {'fail':>5} {'skip':>5}")
    walls: dict[str, float] = {}

    def on_cell(col, result) -> None:
        walls[col.name] = walls.get(col.name, 0.0) + result.seconds

    started = time.monotonic()
    cells = matrix.run(parsed, scenarios, out, only_protocol=args.group_protocol,
                       on_cell=on_cell)
    total = time.monotonic() - started
    for col in matrix.columns(parsed, args.group_protocol):
        mine = [c for c in cells if c["column"] == col.name]
        n = {v: sum(c["verdict"] == v for c in mine) for v in ("pass", "fail", "skip")}
        env = installs.get((col.client, col.version), "")
        print(f"{col.name:<40} {env[:24]:<24} {walls.get(col.name, 0.0):8.1f} {n['pass']:5} "
              f"{n['fail']:5} {n['skip']:5}")
    ran = [w for w in walls.values() if w > 0]
    if ran:
        print(f"per catalogue: median {sorted(ran)[len(ran) // 2]:.1f}s, "
              f"min {min(ran):.1f}s, max {max(ran):.1f}s over {len(ran)} column(s)")
    print(f"whole matrix: {total:.1f}s ({len(cells)} cells)")
    print()
    print(matrix.table(cells))
    print(f"summary: {out / matrix.MATRIX_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
