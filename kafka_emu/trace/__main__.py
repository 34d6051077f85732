"""``python -m kafka_emu.trace``: rewrite the committed JSON Schema from the declaration."""

from .schema import KINDS, SCHEMA_FILE, render_json_schema

SCHEMA_FILE.write_text(render_json_schema())
print(f"wrote {SCHEMA_FILE.name} ({len(KINDS)} kinds)")
