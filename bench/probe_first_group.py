"""What a first group loads or compiles on its requests' path (issue 40, item 2).

A diagnostic for ``bench_first_group.py``'s figures, not a benchmark. It starts a server in this
process as ``kafka-emu serve`` does (garbage collector off during start, then frozen) and drives
it from a client in another process (so nothing the client loads counts as the server's),
speaking over a socket as a Java consumer does (bench_first_group's requests): a first group,
then a later one. Two cases:

* default: the client connects once ``warm.py`` has run all its steps and the server is idle;
* ``--at-once``: the client connects as soon as the server listens (a test that starts a fresh
  emulator and forms a group at once), so whatever the server loads then is on its path.

For each request the server handled it prints the server thread's CPU time for it and what
happened meanwhile: modules imported, codec functions generated
(``generated_source.Source.compile``), ``__init__``s compiled (``frozen.compile_init``), other
``exec``-ed functions; and whether warm-up steps ran before the first group was formed. With
``--profile``, the functions the first group's requests called, by cumulative time (cProfile,
per request), so an import shows with what it cost. Anything listed for a first request and not
for a later one is a candidate for loading ahead.
"""

from __future__ import annotations

import argparse
import builtins
import cProfile
import gc
import io
import json
import os
import pstats
import subprocess
import sys
import time
from functools import partial

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

events: list[str] = []
requests: list[dict] = []
warm_steps: list[float] = []


def _client() -> None:
    """The client process: ready before the server starts, it reads the address on stdin, then
    forms a first group and a later one (bench_first_group's requests)."""
    import bench_first_group as fg
    print("ready", flush=True)
    host, port, pid = sys.stdin.readline().split()
    c = fg.Client(host, int(port), int(pid))
    for tag, group in (("first", "g0"), ("later", "g1")):
        if tag == "first":
            c.request("ApiVersions", 3, client_software_name="bench",
                      client_software_version="1")
            c.request("FindCoordinator", 4, key_type=0, coordinator_keys=[group])
        member, generation = fg.form_group(c, group, tag)
        fg.after_join(c, group, member, generation, tag)
    print(json.dumps(c.timed))
    c.close()


def _hooks(profile: bool) -> None:
    """Record compilations and each request's cost, in the server's (this) thread."""
    from kafka_emu import frozen
    from kafka_emu.broker import connection, warm
    from kafka_emu.protocol import generated_source
    from kafka_emu.protocol.headers import peek_api
    from kafka_emu.protocol.registry import APIS
    compile_source = generated_source.Source.compile

    def compiled(self, *args, **kwargs):
        events.append(f"codec   {getattr(self, 'name', '?')}")
        return compile_source(self, *args, **kwargs)
    generated_source.Source.compile = compiled
    init = frozen.compile_init

    def compiled_init(cls, *args, **kwargs):
        events.append(f"init    {cls.__module__}.{cls.__qualname__}")
        return init(cls, *args, **kwargs)
    frozen.compile_init = compiled_init
    real_exec = builtins.exec

    def traced_exec(source, *args, **kwargs):
        head = source if isinstance(source, str) else repr(source)
        events.append(f"exec    {head.strip().splitlines()[0][:100] if head.strip() else ''}")
        return real_exec(source, *args, **kwargs)
    builtins.exec = traced_exec
    handle = connection.handle_frame

    async def handle_frame(broker, conn, info, frame):
        key, version, _ = peek_api(frame)
        before = (set(sys.modules), len(events))
        profiler = cProfile.Profile() if profile else None
        cpu = time.thread_time()
        if profiler:
            profiler.enable()
        try:
            return await handle(broker, conn, info, frame)
        finally:
            if profiler:
                profiler.disable()
            requests.append({
                "api": f"{APIS[key].name} v{version}" if key in APIS else str(key),
                "cpu_ms": (time.thread_time() - cpu) * 1000,
                "modules": sorted(set(sys.modules) - before[0]),
                "compiled": events[before[1]:], "profile": profiler,
                "at": time.monotonic()})
    connection.handle_frame = handle_frame
    group_path, later_steps = warm.group_path, warm.later_steps

    def timed_group_path(*args, **kwargs):
        group_path(*args, **kwargs)
        warm_steps.append(time.monotonic())

    def timed_steps():
        for step in later_steps():
            warm_steps.append(time.monotonic())
            yield step
    warm.group_path, warm.later_steps = timed_group_path, timed_steps


async def _server(at_once: bool) -> list:
    import trio
    client = subprocess.Popen([sys.executable, __file__, "--client"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert client.stdout.readline().strip() == "ready"
    from kafka_emu.broker import warm
    from kafka_emu.broker.server import serve
    from kafka_emu.broker.config import BrokerConfig
    # as ``kafka-emu serve`` makes it (kafka_emu.testing would import more than a serve does)
    config = BrokerConfig.from_kafka({"group.initial.rebalance.delay.ms": "0"}, host="127.0.0.1",
                                     port=0, topics=(("t", 1),))
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, config))
        gc.freeze()
        gc.enable()
        if not at_once:
            with trio.fail_after(60):
                while not warm.warmed(bound.broker):
                    await trio.sleep(0.05)
            await trio.sleep(0.3)
        host, port = bound.bootstrap.rsplit(":", 1)
        client.stdin.write(f"{host} {port} {os.getpid()}\n")
        client.stdin.flush()
        out = await trio.to_thread.run_sync(client.stdout.read)
        nursery.cancel_scope.cancel()
    return json.loads(out)


def _report(timed: list, profile: bool) -> None:
    formed = requests[5]["at"] if len(requests) > 5 else float("inf")  # (the SyncGroup)
    print(f"warm-up steps run before the first group was formed: "
          f"{sum(1 for t in warm_steps if t <= formed)} of {len(warm_steps)} (the first: the "
          f"group path in one go)")
    for n, (request, (label, wall, _cpu)) in enumerate(zip(requests, timed)):
        print(f"\n== {label} ({request['api']}): server thread CPU {request['cpu_ms']:.2f} ms, "
              f"wall at the client {wall:.2f} ms; {len(request['modules'])} modules imported, "
              f"{len(request['compiled'])} compilations")
        for name in request["modules"]:
            print(f"  module  {name}")
        for line in request["compiled"]:
            print(f"  {line}")
        if profile and request["profile"] and n < len(requests) // 2 + 2:
            stream = io.StringIO()
            stats = pstats.Stats(request["profile"], stream=stream)
            stats.sort_stats("cumulative").print_stats(25)
            print("\n".join(line for line in stream.getvalue().splitlines()[6:] if line))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--at-once", action="store_true",
                        help="connect as soon as the server listens")
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        _client()
        return 0
    gc.disable()
    _hooks(args.profile)
    import trio
    timed = trio.run(_server, args.at_once)
    _report(timed, args.profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
