"""Office — facade (filled in by its own issue)."""
