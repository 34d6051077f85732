"""``python -m kafka_emu.reference_pages [--check]``: regenerate docs/reference/ (or report drift)."""

from __future__ import annotations

import argparse
import sys

from . import REGENERATE, reference_dir, stale, write_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafka_emu.reference_pages",
                                     description="Regenerate the reference pages in docs/reference.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming each page that would change")
    args = parser.parse_args(argv)
    if not (reference_dir().parents[1] / "mkdocs.yml").exists():  # an installed copy
        print("run this from a kafka-emu checkout (no mkdocs.yml beside docs/ here)",
              file=sys.stderr)
        return 2
    if args.check:
        changed = stale()
        for page in changed:
            print(f"docs/reference/{page} is out of date", file=sys.stderr)
        if changed:
            print(f"regenerate with: {REGENERATE}", file=sys.stderr)
        return 1 if changed else 0
    for path in write_all():
        print(f"wrote {path.relative_to(reference_dir().parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
