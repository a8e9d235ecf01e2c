"""Processing — services (filled in by its own issue)."""
