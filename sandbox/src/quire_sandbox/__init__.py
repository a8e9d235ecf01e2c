"""The argv prefix that confines a command: bubblewrap's view of the system, setpriv's uid, prlimit's bounds.

One profile for both of Quire's confined programs, the worker agent's processors and Core's Office converter,
so a wall added or a hole closed is closed in both. Only the standard library: each program decides how it
finds the three tools, which uid a run gets and what it reports when the sandbox cannot start; this package
only says what the sandbox is.
"""

from quire_sandbox.identity import drop_privileges, hand_over
from quire_sandbox.limits import Rlimits, prlimit_options
from quire_sandbox.profile import TOP_LEVEL_PATHS, Bind, Profile, bwrap_options

__all__ = [
    "TOP_LEVEL_PATHS",
    "Bind",
    "Profile",
    "Rlimits",
    "bwrap_options",
    "drop_privileges",
    "hand_over",
    "prlimit_options",
]
