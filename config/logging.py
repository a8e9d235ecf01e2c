"""Core logs with the same structured lines as the worker agent: one formatter, in the wire package both ship."""

import logging

from quire_wire.log_lines import StructuredFormatter

__all__ = ["GroupWithoutListeners", "StructuredFormatter"]


class GroupWithoutListeners(logging.Filter):
    """Drops channels-postgres's warning that a group has no member: a project's events go to its group whether
    or not anyone has the project open (collaboration/live/project_events.py), so an empty group is the usual
    case, not a mistake."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().endswith("does not exist, did you call group_add?")
