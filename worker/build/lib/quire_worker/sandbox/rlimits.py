"""Resource limits for one command, applied by util-linux ``prlimit`` just before it runs.

A ``prlimit`` prefix rather than ``preexec_fn``: the agent has threads (heartbeats, transfers)
and Python documents ``preexec_fn`` as unsafe in a threaded program. ``prlimit`` sets the
limits in the child and then executes the command, so they hold for it and all it starts.
"""

import shutil

from quire_worker.contracts import ExecutorError, Limits

# SIGXCPU at the soft limit lets a process die with a recognisable signal; SIGKILL follows.
CPU_HARD_GRACE_SECONDS = 2


def prlimit_program() -> str:
    program = shutil.which("prlimit", path="/usr/bin:/bin")
    if program is None:
        raise ExecutorError("prlimit (util-linux) is not installed on this worker")
    return program


def rlimit_prefix(limits: Limits, *, bound_processes: bool) -> list[str]:
    """The argv prefix that runs a command under ``limits``.

    ``bound_processes`` adds RLIMIT_NPROC. The kernel counts it per real uid across the whole
    host, so it only bounds one job when that job has a uid of its own.
    """
    options = [
        f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + CPU_HARD_GRACE_SECONDS}",
        f"--as={limits.memory_bytes}",
        f"--fsize={limits.file_size_bytes}",
        f"--nofile={limits.max_open_files}",
        # SIGXFSZ and SIGXCPU dump core by default; a core file would land in the work directory.
        "--core=0",
    ]
    if bound_processes:
        options.append(f"--nproc={limits.max_processes}")
    return [prlimit_program(), *options, "--"]
