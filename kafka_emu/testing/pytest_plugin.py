"""pytest plugin (filled in by the broker work)."""
