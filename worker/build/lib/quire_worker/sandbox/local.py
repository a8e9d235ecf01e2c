"""The development executor: a plain subprocess with the sandbox's limits but none of its walls."""

import logging
import threading
from pathlib import Path

from quire_worker.contracts import CompletedRun, Limits
from quire_worker.sandbox.rlimits import rlimit_prefix
from quire_worker.sandbox.supervision import resolve_program, spawn, supervise

logger = logging.getLogger(__name__)


class LocalExecutor:
    """Runs commands as the agent's own user, for trusted development only.

    It applies the same rlimits, wall clock, cancellation and group kill as the sandbox, but
    the command sees the whole filesystem and the network. RLIMIT_NPROC is left out: it would
    count every process of the developer's user, not the job's.
    """

    name = "local"
    is_sandbox = False

    def __init__(self):
        logger.warning("local executor in use: commands run unconfined, this is not a security boundary")

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        writable: list[Path],
        readable: list[Path],
        env: dict[str, str],
        limits: Limits,
        cancel: threading.Event,
    ) -> CompletedRun:
        """Run ``argv`` in ``cwd``; ``readable`` is not enforced, ``writable`` is only measured."""
        argv = resolve_program(argv, env)
        process = spawn([*rlimit_prefix(limits, bound_processes=False), *argv], cwd=cwd, env=env)
        return supervise(process, limits=limits, cancel=cancel, watched=writable)
