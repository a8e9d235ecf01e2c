"""Office — views (filled in by its own issue)."""
