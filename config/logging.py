"""Core logs with the same structured lines as the worker agent: one formatter, in the wire package both ship."""

from quire_wire.log_lines import StructuredFormatter

__all__ = ["StructuredFormatter"]
