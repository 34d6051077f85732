"""What a first group still loads or compiles once the server has warmed up (issue 40, item 2).

A diagnostic for ``bench_first_group.py``'s figure, not a benchmark: it starts a server in this
process as ``kafka-emu serve`` does (garbage collector off during start, then frozen), waits
until ``warm.py`` has run all its steps and the server is idle, and then, from a client thread
speaking over a socket as a Java consumer does (bench_first_group's requests), forms a first
group and then a later one. For each it prints what happened on the server meanwhile: modules
imported, codec functions generated (``generated_source.Source.compile``), ``__init__``s
compiled (``frozen.compile_init``), other ``exec``-ed functions, and, with ``--profile``, the
server thread's functions by own time (cProfile, enabled in the server's thread) that the first
group called and the later one did not. Anything listed under "first" is a candidate for a
warm-up step.
"""

from __future__ import annotations

import argparse
import builtins
import cProfile
import gc
import io
import os
import pstats
import sys
import threading
import time
from functools import partial

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import trio  # noqa: E402

import bench_first_group as fg  # noqa: E402
from kafka_emu.broker import warm  # noqa: E402
from kafka_emu.protocol import generated_source  # noqa: E402
from kafka_emu import frozen  # noqa: E402

events: list[str] = []


def _hooks() -> None:
    compile_source = generated_source.Source.compile

    def compiled(self, *args, **kwargs):
        if threading.current_thread() is threading.main_thread():  # (the server's, not ours)
            events.append(f"codec   {getattr(self, 'name', '?')}")
        return compile_source(self, *args, **kwargs)
    generated_source.Source.compile = compiled
    init = frozen.compile_init

    def compiled_init(cls, *args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            events.append(f"init    {cls.__module__}.{cls.__qualname__}")
        return init(cls, *args, **kwargs)
    frozen.compile_init = compiled_init
    real_exec = builtins.exec

    def traced_exec(source, *args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            head = source if isinstance(source, str) else repr(source)
            events.append(f"exec    {head.strip().splitlines()[0][:100] if head.strip() else ''}")
        return real_exec(source, *args, **kwargs)
    builtins.exec = traced_exec


class Server:
    def __init__(self) -> None:
        self.token = None
        self.bound = None
        self.ready = threading.Event()
        self.broker = None

    def run(self) -> None:
        gc.disable()
        trio.run(self._main)

    async def _main(self) -> None:
        from kafka_emu.broker.server import serve
        from kafka_emu.testing import make_config
        config = make_config({"group.initial.rebalance.delay.ms": 0}, topics={"t": 1})
        async with trio.open_nursery() as nursery:
            self.bound = await nursery.start(partial(serve, config))
            gc.freeze()
            gc.enable()
            self.broker = self.bound.broker
            self.token = trio.lowlevel.current_trio_token()
            self.ready.set()
            await trio.sleep_forever()


def _snapshot() -> tuple[set[str], int]:
    return set(sys.modules), len(events)


def _report(title: str, before: tuple[set[str], int]) -> None:
    modules, count = before
    new = sorted(set(sys.modules) - modules)  # (the client thread imports none: done first)
    print(f"\n== {title}: {len(new)} modules imported, {len(events) - count} compilations")
    for name in new:
        print(f"  module  {name}")
    for line in events[count:]:
        print(f"  {line}")


def client(server: Server, profile: bool) -> None:
    server.ready.wait()
    deadline = time.monotonic() + 30
    while not warm.warmed(server.broker) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    print(f"warmed: {warm.warmed(server.broker)}")
    host, port = server.bound.bootstrap.rsplit(":", 1)
    c = fg.Client(host, int(port), os.getpid())
    profiler = cProfile.Profile()
    profiles = []
    for tag, group in (("first", "g0"), ("later", "g1")):
        before = _snapshot()
        if profile:
            profiler = cProfile.Profile()
            trio.from_thread.run_sync(profiler.enable, trio_token=server.token)
        if tag == "first":
            c.request("ApiVersions", 3, client_software_name="bench",
                      client_software_version="1")
            c.request("FindCoordinator", 4, key_type=0, coordinator_keys=[group])
        member, generation = fg.form_group(c, group, tag)
        fg.after_join(c, group, member, generation, tag)
        if profile:
            trio.from_thread.run_sync(profiler.disable, trio_token=server.token)
            profiles.append(profiler)
        _report(f"{tag} group", before)
    for label, wall, cpu in c.timed:
        print(f"  {label:40s} wall {wall:7.2f} ms  process CPU {cpu:7.2f} ms")
    c.close()
    if profile:
        first, later = (pstats.Stats(p, stream=io.StringIO()) for p in profiles)
        seen_later = set(later.stats)
        rows = [(st[2], key) for key, st in first.stats.items() if key not in seen_later]
        rows.sort(reverse=True)
        print("\n== functions the first group called and the later did not, by own time")
        for tt, (path, line, name) in rows[:40]:
            print(f"  {tt * 1000:7.3f} ms  {name}  {path.replace(os.getcwd(), '.')}:{line}")
        print(f"  ... {len(rows)} in all, {sum(t for t, _ in rows) * 1000:.2f} ms")
        for label, stats in (("first", first), ("later", later)):
            total = sum(st[2] for st in stats.stats.values())
            print(f"  {label}: {total * 1000:.2f} ms own time in all (profiled)")
    os._exit(0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    _hooks()
    server = Server()
    threading.Thread(target=client, args=(server, args.profile), daemon=True).start()
    server.run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
