"""Trace files of every run: the schema declared once (``schema``) and the writer fed by the
observer seam (``writer``). See docs/how-to/traces-and-report.md."""

from .schema import SCHEMA_VERSION, to_record
from .run_file import TraceError, parse_labels
from .writer import TraceWriter, write_scenario_verdict

__all__ = ["SCHEMA_VERSION", "TraceError", "TraceWriter", "parse_labels", "to_record",
           "write_scenario_verdict"]
