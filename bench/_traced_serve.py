"""``kafka-emu serve`` under tracemalloc, for bench_wire's memory view.

    python bench/_traced_serve.py OUT_PREFIX FRAMES serve ARGS...

On SIGUSR1 the server writes to OUT_PREFIX.N (N counts the signals from 0) the bytes
tracemalloc holds right now ("held": garbage in reference cycles included, as in RSS) and
the bytes still held after a ``gc.collect()`` ("live") and the most held at any moment since
the previous signal ("peak"); with FRAMES > 0 also a snapshot (taken
after the collection, tracebacks of FRAMES frames) to OUT_PREFIX.N.snap, so the driver can diff
where the live growth between two points was allocated.
tracemalloc's own bookkeeping is not counted (it slows the server, so the RSS run is separate).
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import tracemalloc


def main() -> None:
    prefix, frames = sys.argv[1], int(sys.argv[2])
    tracemalloc.start(max(frames, 1))
    count = [0]

    def dump(_signum, _frame) -> None:
        path = f"{prefix}.{count[0]}"
        count[0] += 1
        held, peak = tracemalloc.get_traced_memory()
        gc.collect()  # what of it is garbage in reference cycles, not yet collected
        live = tracemalloc.get_traced_memory()[0]
        if frames > 0:
            tracemalloc.take_snapshot().dump(path + ".snap")
        with open(path + ".tmp", "w") as f:
            f.write(f"{held} {live} {peak}")
        tracemalloc.reset_peak()
        os.replace(path + ".tmp", path)  # the driver waits for this file

    signal.signal(signal.SIGUSR1, dump)
    from kafka_emu.cli import main as cli_main
    raise SystemExit(cli_main(sys.argv[3:]))


if __name__ == "__main__":
    main()
