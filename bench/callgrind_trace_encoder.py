"""The trace encoder's cost per request recorded by its frames, in process, counted in machine
instructions (issue 40, item 3).

``bench_trace.py --callgrind`` counts the encoder process of a whole traced server, which takes
minutes per figure and moves a little with how the writer's packs happen to fall. This builds the
records a traced server hands its encoder for one request kind -- ``REQUEST_FRAME`` records as
``broker/dispatch.py`` makes them, on four connections, packed 64 to a message as the writer
packs them -- and counts ``marshal.loads`` + ``format_lines`` + ``encode`` per message under
callgrind, only inside the measured loop (``--toggle-collect`` on its ``functools.reduce``),
with PYTHONHASHSEED=0: the same count every run.

Shapes (``commit`` OffsetCommit v8, one partition, as bench_trace sends it; ``fetch`` Fetch v16
by topic id, one partition; ``heartbeat`` Heartbeat v4):

* ``commit-same`` / ``fetch-same``: the same offset every time (an idle partition);
* ``commit-moving`` / ``fetch-moving``: a new offset every time, never one seen before (what a
  consuming member sends; the encoder has decoded none of these frames before);
* ``commit-moving3`` / ``fetch-moving3``: three partitions, every offset moving;
* ``commit-metadata``: a moving offset with a moving metadata string of the same length (as a
  Kafka Streams task commits its partition time): frames no table of the encoder's can find;
* ``commit-same-both`` / ``commit-moving-both``: ``commit-same`` / ``commit-moving`` with the
  commit's offsets_committed line too, as a traced server now hands it over (``COMMIT_FRAME``,
  the record inside it) -- or, for a checkout from before that (``--emu-dir``), as the
  coordinator's row: both lines of a commit, before and after;
* ``heartbeat``: for reference.

    python bench/callgrind_trace_encoder.py [--shapes commit-moving,fetch-moving] [--emu-dir DIR]

Not a test: prints and exits 0. The offsets_committed line a commit also makes is part of the
count only in the ``-both`` shapes.
"""

from __future__ import annotations

import argparse
import functools
import os
import tempfile

from _callgrind import instructions

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = ("commit-same", "commit-moving", "commit-moving3", "commit-metadata",
          "commit-same-both", "commit-moving-both", "fetch-same", "fetch-moving", "fetch-moving3",
          "heartbeat")
COUNT, WARM, PACK, CONNECTIONS = 2560, 1280, 64, 4


def records(shape: str, first: int, count: int) -> list:
    """``count`` records of ``shape``, the i-th (from ``first``) with correlation id i and, for
    a moving shape, offset i (per partition)."""
    import uuid

    from kafka_emu.broker import event_rows
    from kafka_emu.broker.event_rows import REQUEST_FRAME
    COMMIT_FRAME = getattr(event_rows, "COMMIT_FRAME", None)  # (None: a checkout from before)
    from kafka_emu.protocol import BY_NAME
    from kafka_emu.protocol.headers import encode_request, encode_response
    from kafka_emu.protocol.messages import fetch, heartbeat, offset_commit as oc

    member, topic_id = "rdkafka-6f1c2a8e-93b4-4d2e-b1f0-0c8a0d7e5b21", uuid.UUID(int=7)
    partitions = range(3 if shape.endswith("3") else 1)
    out = []
    for i in range(first, first + count):
        offset = i if "moving" in shape or "metadata" in shape else 0
        metadata = f"{i:012d}" if "metadata" in shape else ""
        if shape.startswith("commit"):
            api, version = BY_NAME["OffsetCommit"], 8
            body = oc.OffsetCommitRequest(
                group_id="bench", generation_id_or_member_epoch=3, member_id=member,
                topics=[oc.OffsetCommitRequestTopic(name="t", partitions=[
                    oc.OffsetCommitRequestPartition(partition_index=p, committed_offset=offset,
                                                    committed_leader_epoch=0,
                                                    committed_metadata=metadata)
                    for p in partitions])])
            answer = encode_response(api, version, i, oc.OffsetCommitResponse(topics=[
                oc.OffsetCommitResponseTopic(name="t", partitions=[
                    oc.OffsetCommitResponsePartition(partition_index=p, error_code=0)
                    for p in partitions])]))
        elif shape.startswith("fetch"):
            api, version = BY_NAME["Fetch"], 16
            body = fetch.FetchRequest(
                max_wait_ms=500, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                topics=[fetch.FetchTopic(topic_id=topic_id, partitions=[
                    fetch.FetchPartition(partition=p, fetch_offset=offset, current_leader_epoch=0,
                                         partition_max_bytes=1 << 20)
                    for p in partitions])])
            answer = (0, (), 0)  # (what answer_reader reads of an answer with no error)
        else:
            api, version = BY_NAME["Heartbeat"], 4
            body = heartbeat.HeartbeatRequest(group_id="bench", generation_id=3,
                                              member_id=member)
            answer = encode_response(api, version, i, api.response())
        frame = encode_request(api, version, i, "rdkafka", body)[4:]
        started = 100.0 + i * 1e-4
        done = started + 3.7e-5
        connection = i % CONNECTIONS
        record = (REQUEST_FRAME, frame, answer, started, done, (1_764_000_000_000, 12.5, 90.0),
                  (connection, f"127.0.0.1:{40000 + connection}", "librdkafka", "2.16.0"))
        if shape.endswith("-both"):  # (its offsets_committed first, as the server emits it)
            at_ms = 1_764_000_000_000 + i // 10
            out.append((COMMIT_FRAME, record, at_ms) if COMMIT_FRAME is not None else
                       ("OffsetsCommitted", at_ms, "bench", member, 3, (("t", 0, offset),)))
        out.append(record)
    return out


def _child(shape: str) -> None:
    import marshal

    from kafka_emu.trace.encoder import TOPIC_NAMES_TAG, format_lines, message

    def packed(items: list, seq: int) -> list[bytes]:
        return [message(seq + n, items[n:n + PACK]) for n in range(0, len(items), PACK)]

    format_lines(TOPIC_NAMES_TAG, {(7).to_bytes(16, "big"): "t"}, "run-1")  # (Fetch's topic)

    def step(data: bytes) -> int:
        first, items = marshal.loads(memoryview(data)[4:])
        return len(format_lines(first, items, "run-1").encode())

    for data in packed(records(shape, 0, WARM), 0):
        step(data)
    measured = packed(records(shape, WARM, COUNT), WARM)
    functools.reduce(lambda acc, data: acc + step(data), measured, 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--emu-dir", action="append", default=[],
                        help="another checkout whose kafka_emu is measured too (repeatable)")
    parser.add_argument("--child", metavar="SHAPE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return 0
    roots = [("kafka-emu", os.path.dirname(HERE))] + [
        (os.path.basename(d.rstrip("/")), os.path.abspath(d)) for d in args.emu_dir]
    print("== trace encoder instructions per request in process (callgrind, PYTHONHASHSEED=0)")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            figures = [(name, instructions(__file__, shape, root, tmp, COUNT)) for name, root in roots]
            first = figures[0][1]
            print(f"  {shape:<15} " + "   ".join(
                f"{name} {n / 1e3:7.1f}k" + (f" ({n / first:.3f}x)" if i else "")
                for i, (name, n) in enumerate(figures)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
