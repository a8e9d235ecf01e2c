"""Processing — admin (filled in by its own issue)."""
