"""Resource limits, applied by util-linux ``prlimit`` just before the command runs.

A ``prlimit`` prefix rather than ``preexec_fn``: both callers have threads, and Python documents
``preexec_fn`` as unsafe in a threaded program. ``prlimit`` sets the limits in the child and then executes
the command, so they hold for it and all it starts.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Rlimits:
    address_space_bytes: int
    cpu_seconds: int
    file_bytes: int
    open_files: int
    # RLIMIT_NPROC counts every process of the real uid across the host: a bound on one run only when the run
    # has a uid of its own (``identity``); None leaves it alone.
    processes: int | None = None
    # A hard CPU limit above the soft one lets the command die of SIGXCPU, a recognisable signal, before SIGKILL.
    cpu_hard_seconds: int | None = None
    core_bytes: int | None = None


def prlimit_options(limits: Rlimits) -> list[str]:
    """prlimit's options for ``limits``, ending with ``--``: the command follows."""
    cpu = limits.cpu_seconds if limits.cpu_hard_seconds is None else f"{limits.cpu_seconds}:{limits.cpu_hard_seconds}"
    options = [
        f"--cpu={cpu}",
        f"--as={limits.address_space_bytes}",
        f"--fsize={limits.file_bytes}",
        f"--nofile={limits.open_files}",
    ]
    if limits.core_bytes is not None:
        options.append(f"--core={limits.core_bytes}")
    if limits.processes is not None:
        options.append(f"--nproc={limits.processes}")
    return [*options, "--"]
