"""Processing — selectors (filled in by its own issue)."""
