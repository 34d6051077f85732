"""A one-partition OffsetCommit (and a Heartbeat beside it) through the request path in process,
counted in machine instructions and in Python calls (issue 40, item 4).

``callgrind_wire.py`` counts the whole server over sockets, where what it counts moves with
timing (a read that finds the next request there is cheaper than a wait for it). This forms a
classic group of MEMBERS members in this process (JoinGroup and SyncGroup frames through the
broker, as bench_wire's ``own_work`` does), then drives ``dispatch.handle_frame`` a request at a
time -- header, codec, handler, coordinator, reply, encoding; no socket, no trio scheduling --
for the members' OffsetCommit v8 frames (bench_wire's ``member_frames``, one partition each) or
Heartbeat v4 frames. Under callgrind only the measured loop is counted (``--toggle-collect`` on
its ``functools.reduce``), PYTHONHASHSEED=0, so an A/B of a change is exact to the instruction.

    python bench/callgrind_commit.py [--apis OffsetCommit,Heartbeat] [--emu-dir DIR]
    python bench/callgrind_commit.py --calls OffsetCommit   # Python calls per request, by function
    python bench/callgrind_commit.py --bytecodes OffsetCommit   # bytecodes per request, by function

``--calls`` runs without valgrind and counts, per request, every Python function entered and
every C function called from Python (sys.setprofile): where the calls a commit costs are.
``--bytecodes`` counts bytecodes per request by function (sys.settrace with opcode events): a
proxy, as a bytecode costs 10-70 instructions, but it names Python functions, which callgrind
cannot.
Not a test: prints and exits 0.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import subprocess
import sys
import tempfile

from _callgrind import count_bytecodes, instructions

HERE = os.path.dirname(os.path.abspath(__file__))
MEMBERS = 16
COUNT = 2000
WARM = 200
APIS = ("OffsetCommit", "Heartbeat")


def _child(api_name: str, calls: str) -> None:
    """Runs in the measured process: form the group, warm up, then COUNT requests."""
    import trio

    sys.path.insert(0, HERE)
    from bench_wire import (EMPTY_ASSIGNMENT, JOIN, MEMBER_ID_REQUIRED, SYNC, TOPIC, V_JOIN,
                            V_SYNC, Group, decode, errors_of, member_frames, request)

    from kafka_emu.broker import dispatch
    from kafka_emu.broker.config import BrokerConfig
    from kafka_emu.broker.context import ConnectionInfo
    from kafka_emu.broker.request_facts import answer_parked
    from kafka_emu.broker.state import Broker, Pending
    from kafka_emu.protocol.messages.join_group import JoinGroupRequestProtocol
    from kafka_emu.protocol.messages.sync_group import SyncGroupRequestAssignment

    class Conn:  # what handle_frame reads of a connection
        def __init__(self, i: int) -> None:
            self.id, self.peer, self.auth = i, "127.0.0.1:1", None

    async def main() -> None:
        broker = Broker(BrokerConfig.from_kafka({"group.initial.rebalance.delay.ms": "100",
                                                 "emu.timeline.max.events": "0"}))
        broker.topics.create(TOPIC, 1)
        info = ConnectionInfo("127.0.0.1", 1, "127.0.0.1", 9092)
        protocols = [JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01\x00\x00\x00\x01"
                                                                      b"\x00\x05bench\x00\x00\x00\x00")]
        joined: dict[str, int] = {}

        async def process(conn, frame: bytes) -> bytes:
            out = await dispatch.handle_frame(broker, conn, info, frame)
            if out.__class__ is Pending:  # a parked JoinGroup/SyncGroup, as serve_connection
                await out.done.wait()
                out = answer_parked(broker, conn, out)
            return bytes(out)[4:]

        async def member(i: int) -> None:
            conn, member_id = Conn(i), ""
            while True:
                r = decode(JOIN, V_JOIN, await process(conn, request(JOIN, V_JOIN, JOIN.request(
                    group_id="commits", session_timeout_ms=300_000, rebalance_timeout_ms=60_000,
                    member_id=member_id, group_instance_id=None, protocol_type="consumer",
                    protocols=protocols))[4:]))
                if r.error_code != MEMBER_ID_REQUIRED:
                    break
                member_id = r.member_id
            s = decode(SYNC, V_SYNC, await process(conn, request(SYNC, V_SYNC, SYNC.request(
                group_id="commits", generation_id=r.generation_id, member_id=r.member_id,
                group_instance_id=None, assignments=[
                    SyncGroupRequestAssignment(member_id=m.member_id, assignment=EMPTY_ASSIGNMENT)
                    for m in r.members]))[4:]))
            if r.error_code or s.error_code:
                raise RuntimeError(f"formation failed: {r.error_code} {s.error_code}")
            joined[r.member_id] = r.generation_id

        async with trio.open_nursery() as nursery:
            nursery.start_soon(broker.run_timers)
            for i in range(MEMBERS):
                nursery.start_soon(member, i)
            while len(joined) < MEMBERS:
                await trio.sleep(0.02)
            nursery.cancel_scope.cancel()

        group = Group("commits", [], list(joined), next(iter(joined.values())), 0.0, 0.0)
        frames = [f[4:] for f in member_frames(api_name, group)]
        conn = Conn(0)

        def handle(k: int):
            # handle_frame awaits nothing on these paths: one send runs it to its end
            coroutine = dispatch.handle_frame(broker, conn, info, frames[k % MEMBERS])
            try:
                coroutine.send(None)
            except StopIteration as stop:
                return stop.value
            raise RuntimeError(f"{api_name}: handle_frame waited")

        for k in range(WARM):
            if errors_of(api_name, bytes(handle(k))[4:]) - {0}:
                raise RuntimeError(f"{api_name} answered with an error")
        if calls == "bytecodes":
            def run() -> None:
                for k in range(COUNT):
                    handle(k)
            count_bytecodes(api_name, run, COUNT, 30,
                            ignore=(__file__.split("kafka_emu/")[-1], "run"))
        elif calls:
            _count_calls(api_name, lambda k: handle(k))
        else:
            functools.reduce(lambda acc, k: (handle(k), acc)[1], range(COUNT), 0)

    trio.run(main)


def _count_calls(api_name: str, step) -> None:
    counts: collections.Counter = collections.Counter()

    def profiler(frame, event, arg):
        if event == "call":
            code = frame.f_code
            counts[(code.co_filename.split("kafka_emu/")[-1], code.co_name)] += 1
        elif event == "c_call":
            counts[("C", getattr(arg, "__qualname__", repr(arg)))] += 1

    sys.setprofile(profiler)
    for k in range(COUNT):
        step(k)
    sys.setprofile(None)
    counts.pop(("C", "setprofile"), None)
    counts.pop((__file__.split("kafka_emu/")[-1], "<lambda>"), None)
    python = sum(n for (where, _), n in counts.items() if where != "C")
    print(f"== {api_name}: {python / COUNT:.1f} Python calls, "
          f"{(sum(counts.values()) - python) / COUNT:.1f} C calls per request")
    for (where, name), n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {n / COUNT:6.2f}  {where}:{name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--apis", default=",".join(APIS))
    parser.add_argument("--emu-dir", action="append", default=[],
                        help="another checkout whose kafka_emu is measured too (repeatable)")
    parser.add_argument("--calls", metavar="API")
    parser.add_argument("--bytecodes", metavar="API")
    parser.add_argument("--child", metavar="API", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, calls=args.mode)
        return 0
    roots = [("kafka-emu", os.path.dirname(HERE))] + [
        (os.path.basename(d.rstrip("/")), os.path.abspath(d)) for d in args.emu_dir]
    if args.calls or args.bytecodes:
        # each tree in a child of its own, its kafka_emu first on the path: in this process the
        # import would find the one installed in the venv, whichever tree this file is run from
        mode = "bytecodes" if args.bytecodes else "calls"
        for name, root in roots:
            print(f"== {name} ({root})", flush=True)
            subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                            args.calls or args.bytecodes, "--mode", mode],
                           check=True, env=dict(os.environ, PYTHONPATH=root), cwd=root)
        return 0
    print(f"== instructions per request in process (handle_frame, {MEMBERS}-member classic "
          "group, callgrind, PYTHONHASHSEED=0)")
    with tempfile.TemporaryDirectory() as tmp:
        for api_name in args.apis.split(","):
            figures = [(name, instructions(__file__, api_name, root, tmp, COUNT))
                       for name, root in roots]
            first = figures[0][1]
            print(f"  {api_name:<13} " + "   ".join(
                f"{name} {n / 1e3:7.1f}k" + (f" ({n / first:.3f}x)" if i else "")
                for i, (name, n) in enumerate(figures)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
