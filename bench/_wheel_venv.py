"""A kafka-emu installed as users get it, for bench_broker's start table.

``make setup`` installs the checkout editable: its ``.pth`` runs setuptools' editable finder at
every interpreter start (it imports pathlib, urllib.parse, ipaddress, ...), which a
``pip install kafka-emu`` does not. ``wheel_python(tmp)`` builds a wheel of the checkout once
(pip, build isolation: it needs the package index or pip's cache), installs it without
dependencies into a fresh venv under ``tmp`` and points that venv at the running environment's
site-packages for trio, attrs and the rest (a plain path line in a ``.pth``, so that
directory's own ``.pth`` files, the editable finder's among them, are not run). It returns the
venv's python, or None (with the reason printed) when the wheel cannot be built.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import sysconfig

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wheel_python(tmp: str) -> str | None:
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    wheels = os.path.join(tmp, "wheels")
    venv = os.path.join(tmp, "venv")
    try:
        subprocess.run(pip + ["wheel", "--no-deps", "-w", wheels, REPO], check=True,
                       capture_output=True, text=True, timeout=300)
        subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv",
                        "--without-pip", venv], check=True, capture_output=True, timeout=120)
        python = os.path.join(venv, "bin", "python")
        subprocess.run(pip + ["--python", python, "install", "--no-deps", "--no-index",
                              *glob.glob(os.path.join(wheels, "kafka_emu-*.whl"))],
                       check=True, capture_output=True, text=True, timeout=120)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        detail = (getattr(exc, "stderr", "") or "").strip().splitlines()[-1:]
        print(f"(no wheel install measured: {' '.join(detail) or exc})")
        return None
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    with open(os.path.join(site, "_bench_dependencies.pth"), "w") as f:
        f.write(sysconfig.get_path("purelib") + "\n")
    return python
