"""Processing — models (filled in by its own issue)."""
