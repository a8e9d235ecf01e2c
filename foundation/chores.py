"""Periodic chores: each context registers its own when its app is ready, and the maintenance loop
(``processing_maintain``, Processing's reapers' ``sweep``) runs every registered one on each pass, so the loop's
owner imports no other context to keep it tidy.

A chore takes no arguments and returns what it did as counts by name; the loop reports each count as
``<chore>_<name>``. A chore that raises is logged and named among the pass's failures; the others still run.
"""

from collections.abc import Callable

Chore = Callable[[], dict[str, int]]

_chores: dict[str, Chore] = {}


def chore_register(*, name: str, chore: Chore) -> None:
    """Run ``chore`` on every pass of the maintenance loop; registering a name again replaces its chore."""
    _chores[name] = chore


def chores_registered() -> list[tuple[str, Chore]]:
    """The registered chores by name, so a pass runs them in the same order whichever app was ready first."""
    return sorted(_chores.items())
