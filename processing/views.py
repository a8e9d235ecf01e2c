"""Processing — views (filled in by its own issue)."""
