"""What the in-process callgrind harnesses share (callgrind_handle_frame.py, callgrind_commit.py,
callgrind_trace_encoder.py): running a harness's child under callgrind with another tree's
kafka_emu, counting only its measured loop, and counting bytecodes per function without
valgrind."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from typing import Callable


def instructions(script: str, arg: str, root: str, out_dir: str, per: int) -> float:
    """Instructions per request: ``script --child arg`` with ``root``'s kafka_emu first on the
    path, under callgrind, counting only inside the measured loop (``--toggle-collect`` on the
    loop's ``functools.reduce``), PYTHONHASHSEED=0; the count over ``per`` requests."""
    out = os.path.join(out_dir, f"{arg}.{abs(hash(root))}.out")
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=root)
    subprocess.run(["valgrind", "--tool=callgrind", "--quiet", "--collect-atstart=no",
                    "--toggle-collect=functools_reduce", f"--callgrind-out-file={out}",
                    sys.executable, os.path.abspath(script), "--child", arg],
                   check=True, env=env, cwd=root)
    with open(out) as f:
        total = next(int(line.split()[1]) for line in f if line.startswith("summary:"))
    return total / per


def count_bytecodes(label: str, run: Callable[[], None], per: int, top: int,
                    ignore: tuple[str, str] | None = None) -> None:
    """Print the bytecodes per request of ``run()`` (``per`` requests) by function, the ``top``
    first (sys.settrace with opcode events); ``ignore``: a (file, function) of the harness's
    own loop, left out."""
    counts: collections.Counter = collections.Counter()

    def tracer(frame, event, arg):
        frame.f_trace_opcodes, frame.f_trace_lines = True, False
        if event == "opcode":
            code = frame.f_code
            counts[(code.co_filename.split("kafka_emu/")[-1], code.co_name)] += 1
        return tracer

    sys.settrace(tracer)
    run()
    sys.settrace(None)
    if ignore is not None:
        counts.pop(ignore, None)
    print(f"== {label}: {sum(counts.values()) / per:.0f} bytecodes per request")
    for (where, name), n in counts.most_common(top):
        print(f"  {n / per:8.1f}  {where}:{name}")
