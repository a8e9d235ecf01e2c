"""Resource limits for one command: the job's ``Limits`` as ``prlimit`` options (``quire_sandbox.limits``)."""

import shutil

from quire_sandbox import Rlimits, prlimit_options
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
    rlimits = Rlimits(
        address_space_bytes=limits.memory_bytes,
        cpu_seconds=limits.cpu_seconds,
        cpu_hard_seconds=limits.cpu_seconds + CPU_HARD_GRACE_SECONDS,
        file_bytes=limits.file_size_bytes,
        open_files=limits.max_open_files,
        processes=limits.max_processes if bound_processes else None,
        # SIGXFSZ and SIGXCPU dump core by default; a core file would land in the work directory.
        core_bytes=0,
    )
    return [prlimit_program(), *prlimit_options(rlimits)]
