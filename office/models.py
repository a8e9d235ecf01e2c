"""Office — models (filled in by its own issue)."""
