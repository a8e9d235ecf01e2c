"""Sandbox uids: one unprivileged uid per running job, reserved across the agents of a host.

Why a uid per job: RLIMIT_NPROC is the only process bound that needs neither cgroups nor a
user namespace, and the kernel counts it per real uid across the whole host. A shared
sandbox uid would let one job's processes use up another's budget, and processes running as
root are exempt from the limit altogether. With a uid of its own the job's count is exactly
its own processes, and "nothing of this job is left" becomes "no process has this uid".

The reservation is an abstract Unix socket named after the uid: binding it fails while any
process of the same network namespace (the host's, for agents) holds it, and the kernel
drops it when its holder dies, so a crashed agent never leaves a uid locked.
"""

import contextlib
import errno
import logging
import os
import signal
import socket
import time
from collections.abc import Iterator

from quire_worker.contracts import ExecutorError
from quire_worker.sandbox.proc import processes_of_uid

logger = logging.getLogger(__name__)

# Far above the ranges that adduser and /etc/subuid hand out; reserve them for sandboxes.
DEFAULT_SANDBOX_UIDS = range(1_000_000_000, 1_000_000_000 + 1024)
EVICTION_SECONDS = 5.0
# A killed sandbox is torn down by the kernel; its last processes can take a moment to exit.
TEARDOWN_GRACE_SECONDS = 2.0
# A job's runs may overlap (a LaTeX build's word count runs beside its passes), so a pool with no uid free waits
# this long for one to come back before it refuses the run.
RESERVE_WAIT_SECONDS = 30.0


class SandboxUidPool:
    def __init__(self, uids: range = DEFAULT_SANDBOX_UIDS):
        self.uids = uids

    @contextlib.contextmanager
    def lease(self) -> Iterator[int]:
        """Reserve a free uid for one run; on both ends no process of it may be left."""
        uid, reservation = self._reserve()
        try:
            evict_processes_of(uid)  # leftovers of an agent that died mid-job
            yield uid
        finally:
            try:
                evict_processes_of(uid, grace_seconds=TEARDOWN_GRACE_SECONDS)
            finally:
                reservation.close()

    def _reserve(self) -> tuple[int, socket.socket]:
        deadline = time.monotonic() + RESERVE_WAIT_SECONDS
        while (reserved := self._reserve_free()) is None:
            if time.monotonic() > deadline:
                raise ExecutorError(f"all {len(self.uids)} sandbox uids are in use")
            time.sleep(0.01)
        return reserved

    def _reserve_free(self) -> tuple[int, socket.socket] | None:
        for uid in self.uids:
            reservation = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                reservation.bind(f"\0quire-sandbox-uid-{uid}")
            except OSError as exc:
                reservation.close()
                if exc.errno != errno.EADDRINUSE:
                    raise ExecutorError(f"could not reserve a sandbox uid: {exc}") from exc
                continue
            return uid, reservation
        return None


def evict_processes_of(uid: int, *, grace_seconds: float = 0.0) -> None:
    """Give a sandbox uid's processes ``grace_seconds`` to end, then SIGKILL them until none is left.

    Raises ExecutorError if some survive that too.
    """
    grace_ends = time.monotonic() + grace_seconds
    while processes_of_uid(uid) and time.monotonic() < grace_ends:
        time.sleep(0.01)
    deadline = time.monotonic() + EVICTION_SECONDS
    if pids := processes_of_uid(uid):
        logger.warning("killing leftover sandbox processes uid=%s pids=%s", uid, pids)
    while pids := processes_of_uid(uid):
        if time.monotonic() > deadline:
            raise ExecutorError(f"processes {pids} of sandbox uid {uid} survive SIGKILL")
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
