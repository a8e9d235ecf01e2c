"""Collaboration reads live in services (the log is only read to project it)."""
