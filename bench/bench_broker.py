"""Broker benchmark (issue 4): how fast kafka-emu starts, and how fast a consumer group settles.

Run with ``make bench`` (or ``.venv/bin/python bench/bench_broker.py``). Not a test: it prints a
table and ratios, and always exits 0; a missed target is printed as "target missed".

1. In-process start: ``run_in_thread(make_config())`` entered, then a raw TCP socket sends an
   ApiVersions v0 request and reads the answer. Median over 30 starts; target < 10 ms.
2. CLI start: ``python -m kafka_emu serve --port 0`` as a subprocess, read the address it prints,
   then the same ApiVersions round trip. Median over 5 starts; target < 100 ms. Timed in the same
   rounds, interleaved: the serve from the editable install ``make setup`` makes, the serve from
   a wheel of the checkout installed into a temporary venv (as users get it: no editable finder
   run at every start; see _wheel_venv.py, skipped when the wheel cannot be built), and the
   floor, a bare trio server that answers one fixed ApiVersions frame (_bare_trio_serve.py):
   what a serve takes over it is kafka-emu's own. A bare ``python -c pass`` start is printed
   for scale, and the CPU time each has used by its first answer beside that of a bare python
   that has started (wall time on a shared machine moves with the load; CPU time much less).
   ``--only start`` runs 1 and 2. The CLI is timed with a warm bytecode
   cache (in a temporary PYTHONPYCACHEPREFIX, as an installed package has), and once more without
   one for information: this environment sets PYTHONDONTWRITEBYTECODE.
   Then where that start goes, stage by stage from exec (each stage a child python that stops
   there; median wall and CPU ms): python started; + ``import trio``; + the rest of the stdlib
   and then kafka-emu's own modules, those a serve has loaded by its first answer; the serve
   listening; its first answer. ``--callgrind`` adds each stage's instruction count, and each
   start case's (deterministic, so a loaded machine does not blur where the time goes).
3. Consumer group, against kafka-emu and against librdkafka's own mock cluster started here (the
   peer; see _mock_cluster.py), same settings on both (heartbeat.interval.ms=500,
   session.timeout.ms=6000, initial rebalance delay 0 on both, so the join itself is measured):
   * join:  three confluent-kafka consumers subscribe -> each owns >= 1 partition, together all
   * leave: one consumer closes -> the two survivors own all partitions
   Target: each phase under 1 s on kafka-emu and >= 10x faster than the mock. Every wait is
   bounded (30 s per phase).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable

from confluent_kafka import Consumer

from kafka_emu.protocol.headers import encode_request
from kafka_emu.protocol.messages.api_versions import API as API_VERSIONS
from kafka_emu.testing import make_config, run_in_thread

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _mock_cluster import MockCluster  # noqa: E402
from _proc_cpu import cpu_ns  # noqa: E402
from _wheel_venv import wheel_python  # noqa: E402

TARGET_INPROCESS_MS = 10.0
TARGET_CLI_MS = 100.0  # issue 14
TARGET_PHASE_S = 1.0
TARGET_GROUP_RATIO = 10.0
PHASE_LIMIT_S = 30.0
PARTITIONS = 6

_API_VERSIONS_V0 = encode_request(API_VERSIONS, 0, 1, "bench", API_VERSIONS.request())


def _verdict(ok: bool) -> str:
    return "ok" if ok else "target missed"


def api_versions_roundtrip(host: str, port: int) -> None:
    """One ApiVersions v0 over a fresh socket; raises unless the answer is a success."""
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(_API_VERSIONS_V0)
        buf = b""
        while len(buf) < 4 or len(buf) < 4 + int.from_bytes(buf[:4], "big"):
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed before the ApiVersions answer")
            buf += chunk
    correlation_id = int.from_bytes(buf[4:8], "big")
    error_code = int.from_bytes(buf[8:10], "big", signed=True)
    if correlation_id != 1 or error_code != 0:
        raise RuntimeError(f"ApiVersions answered correlation {correlation_id}, error {error_code}")


# -- 1 and 2: start-up --------------------------------------------------------------------------

def in_process_start_ms(starts: int) -> list[float]:
    times = []
    for _ in range(starts):
        t0 = time.perf_counter()
        with run_in_thread(make_config()) as emu:
            api_versions_roundtrip(emu.host, emu.port)
            times.append((time.perf_counter() - t0) * 1000)
    return times


def _env(pycache: str | None) -> dict[str, str]:
    """The environment for a child Python: with a bytecode cache in ``pycache``, or none at all."""
    env = dict(os.environ)
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:  # a private cache dir, so nothing is written into the checkout
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    return env


def _cpu_ms(pid: int) -> float:
    """CPU time a process has used so far (all its threads)."""
    return cpu_ns(pid) / 1e6


CLI_CPU: dict[str, list[float]] = {}  # CPU ms of each timed start by its first answer (Linux)

SERVE = ["-m", "kafka_emu", "serve", "--port", "0", "--log-level", "WARNING"]
BARE_TRIO = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bare_trio_serve.py")]


def start_cases(wheel: str | None, tmp: str) -> dict[str, tuple[list[str], str | None]]:
    """name -> (argv, cwd) of each start timed: the serve as ``make setup`` installs it
    (editable), as a wheel installs it (run from ``tmp``, so that the checkout is not on its
    path), and the bare trio server, the floor (_bare_trio_serve.py)."""
    cases = {"CLI serve, editable install": ([sys.executable, *SERVE], None)}
    if wheel is not None:
        cases["CLI serve, wheel install"] = ([wheel, *SERVE], tmp)
    # the floor with the wheel's python when there is one: no editable finder there either
    cases["(floor: bare trio server)"] = ([wheel or sys.executable, *BARE_TRIO], None)
    return cases


def cli_start_ms(starts: int, pycache: str | None,
                 cases: dict[str, tuple[list[str], str | None]]) -> dict[str, list[float]]:
    """Wall ms from exec to the first answer of each case, ``starts`` times, the cases
    interleaved so that a change in the machine's load hits them alike."""
    env = _env(pycache)
    if pycache is not None:  # fill the cache once, as installing the package would
        for argv, cwd in cases.values():
            subprocess.run([argv[0], "-c", "import trio, kafka_emu.cli, kafka_emu.broker.server; "
                            "kafka_emu.cli.build_parser()"], env=env, cwd=cwd, check=True)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(starts):
        for name, (argv, cwd) in cases.items():
            t0 = time.perf_counter()
            proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
            try:
                line = proc.stdout.readline().strip()
                host, _, port = line.rpartition(":")
                api_versions_roundtrip(host, int(port))
                times[name].append((time.perf_counter() - t0) * 1000)
                if pycache is not None and os.path.isdir(f"/proc/{proc.pid}"):
                    CLI_CPU.setdefault(name, []).append(_cpu_ms(proc.pid))
            finally:
                proc.terminate()
                proc.wait(timeout=10)
    return times


def bare_python_ms(starts: int, pycache: str) -> list[float]:
    env = _env(pycache)
    times = []
    for _ in range(starts):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def bare_python_cpu_ms(starts: int, pycache: str) -> list[float]:
    """CPU ms of a bare python once started (it prints, then waits on stdin)."""
    env = _env(pycache)
    cpu = []
    for _ in range(starts):
        proc = subprocess.Popen([sys.executable, "-c", "print(1, flush=True); input()"], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()
        if os.path.isdir(f"/proc/{proc.pid}"):
            cpu.append(_cpu_ms(proc.pid))
        proc.communicate("\n", timeout=10)
    return cpu


# -- 2b: where a serve's start goes ------------------------------------------------------------

# Each stage is a child python that prints a line once it got there and then waits; the stages
# before the serve disable the cyclic collector as the serve does for its start (cli._serve).
_WAIT = "print(1, flush=True); input()"
_NO_GC = "import gc; gc.disable(); "


def serve_modules(pycache: str) -> list[str]:
    """The modules a ``serve`` has imported by its first ApiVersions answer (from one run with
    ``-X importtime``, whose lines come as each import finishes)."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "kafka_emu", "serve",
                             "--port", "0", "--log-level", "WARNING"], env=_env(pycache),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        host, _, port = proc.stdout.readline().strip().rpartition(":")
        api_versions_roundtrip(host, int(port))
    finally:
        proc.kill()  # not a clean stop: its imports are not a start's
        _, err = proc.communicate(timeout=10)
    names = [line.rpartition("|")[2].strip() for line in err.splitlines()
             if line.startswith("import time:") and "|" in line]
    # [0] is the header; a name shows again for each failed attempt (``nt`` on Linux)
    return list(dict.fromkeys(n for n in names[1:] if n and not n.endswith("__main__")))


def _stage_code(modules: list[str] | None) -> str:
    if modules is None:
        return _WAIT
    return (_NO_GC + "import importlib, sys\n"
            f"for m in {modules!r}:\n"
            "    if m not in sys.modules:\n"
            "        try: importlib.import_module(m)\n"
            "        except ImportError: pass\n" + _WAIT)


def _time_child(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall ms from exec to the child's first line, CPU ms the child used by then)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        proc.stdout.readline()
        wall = (time.perf_counter() - t0) * 1000
        cpu = _cpu_ms(proc.pid) if os.path.isdir(f"/proc/{proc.pid}") else float("nan")
    finally:
        proc.kill()
        proc.wait(timeout=10)
    return wall, cpu


def _time_serve(env: dict[str, str]) -> tuple[float, float, float, float]:
    """(wall ms to the address line, CPU ms by then, wall ms to the first answer, CPU ms)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                             "--log-level", "WARNING"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline().strip()
        listening = (time.perf_counter() - t0) * 1000
        listening_cpu = _cpu_ms(proc.pid)
        host, _, port = line.rpartition(":")
        api_versions_roundtrip(host, int(port))
        answered = (time.perf_counter() - t0) * 1000
        return listening, listening_cpu, answered, _cpu_ms(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


STAGES = ("python started", "+ import trio (with attrs, ssl, ...)",
          "+ the stdlib modules a serve adds", "+ kafka-emu's own modules",
          "serve: listening (address printed)", "serve: first ApiVersions answer")


def _stage_codes(modules: list[str]) -> list[str]:
    """The import stages: python, + trio, + the rest of the stdlib a serve loads (argparse,
    uuid, ...), + kafka-emu's modules -- each of them a serve has loaded by its answer."""
    stdlib = [m for m in modules if m.split(".")[0] != "kafka_emu"]
    return [_stage_code(None), _NO_GC + "import trio; " + _WAIT, _stage_code(stdlib),
            _stage_code(modules)]


def start_breakdown(starts: int, pycache: str) -> dict[str, list[tuple[float, float]]]:
    """Wall and CPU ms of each stage, ``starts`` times each, the stages interleaved so that a
    change in the machine's load hits them alike."""
    env = _env(pycache)
    codes = _stage_codes(serve_modules(pycache))
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in STAGES}
    for _ in range(starts):
        for name, code in zip(STAGES, codes):
            out[name].append(_time_child([sys.executable, "-c", code], env))
        listening, listening_cpu, answered, answered_cpu = _time_serve(env)
        out[STAGES[-2]].append((listening, listening_cpu))
        out[STAGES[-1]].append((answered, answered_cpu))
    return out


def start_instructions(pycache: str, cases: dict[str, tuple[list[str], str | None]]
                       ) -> dict[str, int] | None:
    """The same stages counted in instructions under callgrind (deterministic, whatever the
    load; hash seed fixed): a stage's child exits where the timed one prints, a serve is
    stopped by a signal it does not handle right after its first answer, so neither counts
    Python's exit. Then each start case of the table the same way (the editable serve is the
    last stage). None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    env = dict(_env(pycache), PYTHONHASHSEED="0")
    exit_now = "import os; os._exit(0)"
    codes = [code.replace(_WAIT, exit_now) for code in _stage_codes(serve_modules(pycache))]
    counts: dict[str, int] = {}
    for name, code in zip(STAGES, codes):
        done = subprocess.run(_GRIND + [sys.executable, "-c", code], env=env,
                              capture_output=True, text=True, timeout=600)
        counts[name] = _collected(done.stderr)
    for name, (argv, cwd) in cases.items():
        counts[name] = _count_start(argv, env, cwd)
    counts[STAGES[-1]] = counts[next(iter(cases))]
    return counts


_GRIND = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]


def _count_start(argv: list[str], env: dict[str, str], cwd: str | None) -> int:
    """Instructions from exec to the first ApiVersions answer of a server (``argv``)."""
    proc = subprocess.Popen(_GRIND + argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        host, _, port = proc.stdout.readline().strip().rpartition(":")
        api_versions_roundtrip(host, int(port))
    finally:
        proc.send_signal(signal.SIGUSR1)  # fatal, unhandled: callgrind writes its totals
        _, err = proc.communicate(timeout=60)
    return _collected(err)


def _collected(stderr: str) -> int:
    for line in stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    raise RuntimeError("no instruction count from callgrind:\n" + stderr[-2000:])


def print_breakdown(stages: dict[str, list[tuple[float, float]]],
                    counts: dict[str, int] | None) -> None:
    n = len(next(iter(stages.values())))
    print()
    print(f"== where a serve's start goes (median of {n}; each stage from exec)")
    header = f"{'stage':<40} {'wall ms':>8} {'+wall':>7} {'CPU ms':>8} {'+CPU':>7}"
    if counts:
        header += f" {'M instr':>9} {'+M':>7}"
    print(header)
    prev = prev_count = None
    for name, values in stages.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        line = f"{name:<40} {wall:8.1f} "
        line += f"{wall - prev[0]:+7.1f}" if prev else " " * 7
        line += f" {cpu:8.1f} "
        line += f"{cpu - prev[1]:+7.1f}" if prev else " " * 7
        if counts and name in counts:  # not counted: listening (the serve runs on to answer)
            line += f" {counts[name] / 1e6:9.1f} "
            if prev_count is not None:
                line += f"{(counts[name] - prev_count) / 1e6:+7.1f}"
            prev_count = counts[name]
        print(line)
        prev = (wall, cpu)
    print("(a stage's + is over the stage above; trio's import is trio's own cost, not ours)")


# -- 3: consumer group ------------------------------------------------------------------------

class Tracked:
    """A consumer that records its current assignment through the rebalance callbacks."""

    def __init__(self, bootstrap: str, group: str, topic: str, index: int) -> None:
        self.owned: set[int] = set()
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "client.id": f"bench-{index}",
            "heartbeat.interval.ms": 500, "session.timeout.ms": 6000,
            "auto.offset.reset": "earliest", "enable.auto.commit": False, "log_level": 3,
        })
        self.consumer.subscribe([topic], on_assign=self._assign, on_revoke=self._revoke)

    def _assign(self, consumer, partitions) -> None:
        self.owned = {p.partition for p in partitions}

    def _revoke(self, consumer, partitions) -> None:
        self.owned = set()


def _settled(members: list[Tracked]) -> bool:
    owned = [m.owned for m in members]
    union = set().union(*owned)
    return (all(owned) and union == set(range(PARTITIONS))
            and sum(len(o) for o in owned) == PARTITIONS)


def _wait_until(cond: Callable[[], bool], members: list[Tracked]) -> float | None:
    """Poll every member round-robin until cond() holds; seconds taken, None past the limit."""
    t0 = time.perf_counter()
    while not cond():
        if time.perf_counter() - t0 > PHASE_LIMIT_S:
            return None
        for m in members:
            m.consumer.poll(0.005)
    return time.perf_counter() - t0


def group_phases(bootstrap: str, topic: str) -> tuple[float | None, float | None]:
    group = f"bench-{uuid.uuid4().hex[:8]}"
    t0 = time.perf_counter()
    members = [Tracked(bootstrap, group, topic, i) for i in range(3)]
    try:
        waited = _wait_until(lambda: _settled(members), members)
        join = None if waited is None else time.perf_counter() - t0
        leave = None
        if join is not None:
            t1 = time.perf_counter()
            members[0].consumer.close()
            survivors = members[1:]
            members = survivors
            waited = _wait_until(lambda: _settled(survivors), survivors)
            leave = None if waited is None else time.perf_counter() - t1
        return join, leave
    finally:
        for m in members:
            m.consumer.close()


def _fmt_s(value: float | None) -> str:
    return f"{value * 1000:.0f} ms" if value is not None else f"> {PHASE_LIMIT_S:.0f} s"


def _median(values: list[float | None]) -> float | None:
    """Median of the rounds; None (a timeout) if any round timed out."""
    return None if any(v is None for v in values) else statistics.median(values)


def _row(name: str, times: list[float], target: float | None = None) -> None:
    med = statistics.median(times)
    verdict = "" if target is None else f"{'< %g ms' % target:>10}  {_verdict(med < target)}"
    print(f"{name:<40} {med:10.2f} {min(times):8.2f}-{max(times):<8.2f} {verdict}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=30, help="in-process starts")
    parser.add_argument("--cli-starts", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2, help="group rounds per broker")
    parser.add_argument("--only", choices=("start",), help="the start figures only")
    parser.add_argument("--callgrind", action="store_true",
                        help="also count each start stage's instructions (needs valgrind)")
    args = parser.parse_args()

    in_process_start_ms(2)  # warm: imports, first trio.run
    inproc = in_process_start_ms(args.starts)
    with tempfile.TemporaryDirectory(prefix="kafka-emu-pycache-") as pycache, \
            tempfile.TemporaryDirectory(prefix="kafka-emu-wheel-") as tmp:
        cases = start_cases(wheel_python(tmp), tmp)
        cli = cli_start_ms(args.cli_starts, pycache, cases)
        bare = bare_python_ms(args.cli_starts, pycache)
        bare_cpu = bare_python_cpu_ms(args.cli_starts, pycache)
        stages = start_breakdown(args.cli_starts, pycache)
        counts = start_instructions(pycache, cases) if args.callgrind else None
    serve = next(iter(cases))
    cli_cold = cli_start_ms(args.cli_starts, None, {serve: cases[serve]})[serve]
    print("== start to first ApiVersions v0 answer")
    print(f"{'case':<40} {'median ms':>10} {'min-max ms':>17} {'target':>10}")
    _row(f"in-process run_in_thread (n={len(inproc)})", inproc, TARGET_INPROCESS_MS)
    for name, times in cli.items():
        target = TARGET_CLI_MS if name.startswith("CLI") else None
        _row(f"{name} (n={len(times)})", times, target)
    _row("CLI serve, editable, no bytecode cache", cli_cold)
    _row("(scale: python -c pass)", bare)
    for name, cpu in CLI_CPU.items():
        _row(f"{name.split(',')[-1].strip(' ()')}: CPU ms", cpu)
    if bare_cpu:
        _row("(scale: CPU ms of a started python)", bare_cpu)
    print("(the bytecode-cached cases, interleaved; a serve's figure over the floor's is "
          "kafka-emu's own)")
    print_breakdown(stages, counts)
    if counts:
        floor = counts[list(cases)[-1]]
        print()
        print("== instructions from exec to the first answer (callgrind, millions)")
        for name in cases:
            over = "" if counts[name] == floor else f"  {(counts[name] - floor) / 1e6:+7.1f} " \
                f"over the floor ({100 * (counts[name] - floor) / counts[name]:.0f}% of it)"
            print(f"{name:<40} {counts[name] / 1e6:9.1f}{over}")
    if args.only == "start":
        return 0

    topic = "bench-group"
    emu_rounds, mock_rounds = [], []
    with run_in_thread(make_config({"group.initial.rebalance.delay.ms": 0},
                                   topics={topic: PARTITIONS})) as emu:
        for _ in range(args.rounds):
            emu_rounds.append(group_phases(emu.bootstrap_servers, topic))
    # initial rebalance delay 0 on the mock too (its default is 3000 ms), as on kafka-emu above.
    with MockCluster(brokers=1, topics={topic: PARTITIONS}, initial_rebalance_delay_ms=0) as mock:
        for _ in range(args.rounds):
            mock_rounds.append(group_phases(mock.bootstrap_servers, topic))
        version = mock.version
    print()
    print(f"== consumer group: 3 confluent-kafka consumers, {PARTITIONS} partitions, heartbeat "
          f"500 ms, session 6000 ms; peer: librdkafka {version} mock cluster; "
          f"median of {args.rounds} rounds")
    print(f"{'phase':<40} {'kafka-emu':>10} {'mock':>10} {'mock/emu':>9}  targets: emu < 1 s, "
          f">= {TARGET_GROUP_RATIO:g}x")
    for i, name in enumerate(("join: 3 subscribe -> all assigned",
                              "leave: 1 closes -> survivors own all")):
        e = _median([r[i] for r in emu_rounds])
        m = _median([r[i] for r in mock_rounds])
        ratio = (m / e) if (e and m) else None
        ratio_text = f"{ratio:8.1f}x" if ratio else "      n/a"
        under = e is not None and e < TARGET_PHASE_S
        fast = ratio is not None and ratio >= TARGET_GROUP_RATIO
        rounds = " ".join(f"{_fmt_s(r[i])}" for r in emu_rounds)
        print(f"{name:<40} {_fmt_s(e):>10} {_fmt_s(m):>10} {ratio_text}  "
              f"< 1 s: {_verdict(under)}; >= 10x: {_verdict(fast)}  (emu rounds: {rounds})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
