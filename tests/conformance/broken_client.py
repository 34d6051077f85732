"""A deliberately broken verifiable consumer (confluent-kafka underneath), for the kit's tests.

    python broken_client.py --break commit-ahead --consumer --topic T --group-id G ...

``--break commit-ahead``: commits 25 offsets beyond the last record it processed (a client that
commits what it has not processed); the next owner of the partition skips those records.
``--break ignore-revocation``: never acts on a revocation (no partitions_revoked, and it goes on
treating every partition it ever had as its own).
"""

from __future__ import annotations

import sys

from confluent_kafka import Consumer, TopicPartition

from kafka_emu.conformance import contract
from kafka_emu.conformance.contract import Events, StopFlag

AHEAD = 25


def main() -> int:
    argv = sys.argv[1:]
    mode = argv[argv.index("--break") + 1]
    del argv[argv.index("--break"):argv.index("--break") + 2]
    _, args = contract.parse(argv, "broken client")
    stop = StopFlag().install()
    events = Events()
    conf = {"bootstrap.servers": args.bootstrap, "group.id": args.group_id,
            "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "session.timeout.ms": args.session_timeout, **args.properties}
    if args.group_instance_id:
        conf["group.instance.id"] = args.group_instance_id
    c = Consumer(conf)
    believed: set[tuple[str, int]] = set()

    def on_assign(_c, partitions):
        tps = {(tp.topic, tp.partition) for tp in partitions}
        if mode == "ignore-revocation":
            believed.update(tps)
            tps = set(believed)
        events.partitions("partitions_assigned", tps)

    def on_revoke(_c, partitions):
        if mode != "ignore-revocation":
            events.partitions("partitions_revoked", [(tp.topic, tp.partition) for tp in partitions])

    events.emit("startup_complete")
    c.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
    try:
        while not stop:
            batches: dict[tuple[str, int], list[int]] = {}
            for m in c.consume(num_messages=500, timeout=0.1):
                if not m.error():
                    batches.setdefault((m.topic(), m.partition()), []).append(m.offset())
            if not events.records_consumed(batches):
                continue
            extra = AHEAD if mode == "commit-ahead" else 0
            offsets = {tp: offs[-1] + 1 + extra for tp, offs in batches.items()}
            try:
                c.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()],
                         asynchronous=False)
                events.offsets_committed(offsets)
            except Exception as exc:
                events.offsets_committed(offsets, error=str(exc))
    finally:
        c.close()
        events.emit("shutdown_complete")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
