"""Processors: bounded transformations from an unpacked input to candidate outputs."""
