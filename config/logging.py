"""Core logs with the same structured lines as the worker agent (the formatter needs no Django)."""

from processing.worker.structured_logging import StructuredFormatter

__all__ = ["StructuredFormatter"]
