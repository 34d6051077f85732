"""ACL benchmark (issue 38): what authorization costs a request, with the authorizer off and on.

Run with ``.venv/bin/python bench/bench_acls.py [--acls N] [--requests N] [--rounds N]``. Not a
test: it prints figures and always exits 0.

1. The check alone (in process, no sockets): ``security.authorize.authorized`` in front of a
   handler that does nothing, for a Heartbeat (one whole-request row: READ on the group) and a
   Produce of four topics (a per-topic split, two topics denied: the error entries are built and
   merged), against calling the handler directly; microseconds per request.
2. Over a socket: Heartbeat v4 round trips one at a time (each waits for its answer, as a client
   does) against a broker without an authorizer and one with ``--acls`` ACLs (literal group ACLs
   and prefixed topic ACLs of other principals, plus the one that lets the caller in); requests
   per second and the ratio, best of ``--rounds`` alternating runs (the machine is shared, so a
   single run moves with the load).
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace as NS

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kafka_emu.broker.server import serve  # noqa: E402
from kafka_emu.protocol import BY_NAME  # noqa: E402
from kafka_emu.protocol.messages import produce as pr  # noqa: E402
from kafka_emu.security.acls import Authorizer, parse_acl_specs  # noqa: E402
from kafka_emu.security.authorize import authorized  # noqa: E402
from kafka_emu.testing import make_config  # noqa: E402
from kafka_emu.testing.wire import WireClient  # noqa: E402

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def acl_specs(count: int) -> str:
    half = max(count // 2, 1)
    return "; ".join([f"ALLOW User:u{i} READ GROUP g{i}" for i in range(half)]
                     + [f"ALLOW User:u{i} WRITE TOPIC:PREFIXED p{i}-" for i in range(half)]
                     + ["ALLOW User:ANONYMOUS READ GROUP g",
                        "ALLOW User:ANONYMOUS WRITE TOPIC:PREFIXED mine-"])


async def check_alone(acls: int, requests: int) -> None:
    authorizer = Authorizer()
    for binding in parse_acl_specs(acl_specs(acls)):
        authorizer.add(binding)

    async def nothing(ctx, request):
        return None

    async def echo(ctx, request):  # a Produce answered: every partition, no error
        from kafka_emu.broker.error_response import error_entries
        return error_entries(ctx.api, ctx.version, request, 0)

    def ctx_for(name: str, version: int):
        return NS(broker=NS(authorizer=authorizer, observer=None), api=BY_NAME[name],
                  version=version, connection=NS(principal="User:ANONYMOUS",
                                                 peer_host="127.0.0.1", peer="127.0.0.1:1"),
                  client_id="bench", now_ms=lambda: 0)

    beat = BY_NAME["Heartbeat"].request(group_id="g", generation_id=1, member_id="m")
    produce = pr.ProduceRequest(acks=1, timeout_ms=1000, topic_data=[
        pr.TopicProduceData(name=n, partition_data=[pr.PartitionProduceData(index=0,
                                                                          records=None)])
        for n in ("mine-a", "mine-b", "theirs-a", "theirs-b")])
    for name, version, request, fn in (("Heartbeat", 4, beat, nothing),
                                       ("Produce", 9, produce, echo)):
        ctx, handler = ctx_for(name, version), NS(fn=fn)
        start = time.perf_counter()
        for _ in range(requests):
            await fn(ctx, request)
        direct = (time.perf_counter() - start) / requests
        start = time.perf_counter()
        for _ in range(requests):
            await authorized(ctx, handler, request)
        checked = (time.perf_counter() - start) / requests
        print(f"{name:10s} handler alone {direct * 1e6:7.2f} us, through the check "
              f"{checked * 1e6:7.2f} us: +{(checked - direct) * 1e6:.2f} us per request")


async def heartbeats(settings: dict, requests: int) -> float:
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, make_config(settings)))
        wire = await WireClient.connect(bound.host, bound.port)
        api = BY_NAME["Heartbeat"]
        request = api.request(group_id="g", generation_id=1, member_id="m")
        for _ in range(200):  # warm up
            await wire.request(api, 4, request)
        start = time.perf_counter()
        for _ in range(requests):
            await wire.request(api, 4, request)
        elapsed = time.perf_counter() - start
        await wire.aclose()
        nursery.cancel_scope.cancel()
    return requests / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--acls", type=int, default=200)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"1. the check alone ({args.acls + 2} ACLs)")
    trio.run(check_alone, args.acls, 20000)
    print(f"2. Heartbeat round trips over a socket ({args.requests} per run, best of "
          f"{args.rounds})")
    on = {"authorizer.class.name": STANDARD, "emu.acls": acl_specs(args.acls)}
    off_best = on_best = 0.0
    for _ in range(args.rounds):
        off_best = max(off_best, trio.run(heartbeats, {}, args.requests))
        on_best = max(on_best, trio.run(heartbeats, on, args.requests))
    print(f"   no authorizer {off_best:8.0f} /s; StandardAuthorizer with {args.acls + 2} ACLs "
          f"{on_best:8.0f} /s; ratio {on_best / off_best:.2f}")


if __name__ == "__main__":
    main()
