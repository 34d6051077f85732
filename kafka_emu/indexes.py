"""Regenerate the two generated indexes from the code: ``python -m kafka_emu.indexes``.

- ``protocol/messages/_index.py``: every declared API's name, module and version ranges;
- ``broker/handlers/_index.py``: every handler's module and the versions it serves.

They let a process import only the declarations and handlers it uses (a serve answers its first
ApiVersions without importing the other thirty). Run this after adding an API or changing a
declared or served version range; tests/protocol/test_api_index.py fails until then, and so
does loading the changed API.
"""

from __future__ import annotations

from pathlib import Path


def write() -> list[Path]:
    from .broker import handlers
    from .protocol import messages, registry

    written = []
    for package, text in ((messages, registry.index_text()), (handlers, handlers.index_text())):
        path = Path(package.__file__).with_name("_index.py")
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    return written


if __name__ == "__main__":
    for path in write():
        print(f"wrote {path}")
