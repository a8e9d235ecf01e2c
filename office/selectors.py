"""Office — selectors (filled in by its own issue)."""
