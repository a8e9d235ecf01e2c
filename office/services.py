"""Office — services (filled in by its own issue)."""
