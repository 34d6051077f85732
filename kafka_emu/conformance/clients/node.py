"""Finding Node.js and kafkajs for the kafkajs verifiable client.

The kafkajs client is a single ``.mjs`` file shipped in this package. Node resolves
``import 'kafkajs'`` from the script's own directory upwards (ES modules ignore NODE_PATH), so
the kit keeps a small cache directory -- ``$KAFKA_EMU_CACHE`` or ``~/.cache/kafka-emu`` -- with a
``package.json`` pinning kafkajs, installs it there with ``npm install`` the first time, and
copies the script next to it. Without ``node``/``npm`` on PATH it says so plainly.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

from ...cache import cache_root

KAFKAJS_VERSION = "2.2.4"
SCRIPT = "kafkajs_verifiable.mjs"
NPM_TIMEOUT_S = 600


class NodeMissing(RuntimeError):
    """Node.js, npm or the kafkajs package is not available (the message says which)."""


def cache_dir(version: str = KAFKAJS_VERSION) -> Path:
    return cache_root() / f"kafkajs-{version}"


def kafkajs_command(version: str = KAFKAJS_VERSION, script: str = SCRIPT) -> list[str]:
    """``["node", "<cache>/kafkajs_verifiable.mjs"]`` (or another of the package's scripts,
    e.g. ``kafkajs_copier.mjs``), installing kafkajs ``version`` (the kit's pinned one unless
    the matrix asks for another) on first use."""
    node = shutil.which("node")
    if node is None:
        raise NodeMissing("the kafkajs client needs Node.js: `node` is not on PATH "
                          "(install Node.js 18+ with npm)")
    where = cache_dir(version)
    where.mkdir(parents=True, exist_ok=True)
    if not (where / "node_modules" / "kafkajs" / "package.json").exists():
        npm = shutil.which("npm")
        if npm is None:
            raise NodeMissing("the kafkajs client needs npm to install kafkajs: `npm` is not on "
                              "PATH")
        (where / "package.json").write_text(json.dumps({
            "name": "kafka-emu-conformance-kafkajs", "private": True, "type": "module",
            "dependencies": {"kafkajs": version}}, indent=2))
        print(f"kafka-emu: installing kafkajs {version} into {where} (once)",
              file=sys.stderr, flush=True)
        proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--silent"], cwd=where,
                              check=False, capture_output=True, text=True, timeout=NPM_TIMEOUT_S)
        if proc.returncode != 0:
            raise NodeMissing(f"npm install kafkajs@{version} in {where} failed: "
                              f"{(proc.stderr or proc.stdout).strip()[-500:]}")
    source = resources.files(__package__).joinpath(script).read_text(encoding="utf-8")
    target = where / script
    if not target.exists() or target.read_text(encoding="utf-8") != source:
        target.write_text(source, encoding="utf-8")
    return [node, str(target)]
