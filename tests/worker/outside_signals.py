"""Signals sent to a job's processes from outside the build, as the host's OOM killer or an operator would."""

import contextlib
import os
import threading
from pathlib import Path

from tests.waiting import wait_until

# The sandbox's wrappers (quire_worker/sandbox/bwrap.py: the uid switch, the limits, the shell that announces the
# start and the env it execs) run as the job's uid with the program in their arguments until they exec it: a
# signal sent then would stop the sandbox's start-up, not the program.
SANDBOX_WRAPPERS = frozenset({"setpriv", "prlimit", "bash", "env"})


def processes_of(uid: int, *, running: str) -> list[int]:
    """The pids of ``uid``'s processes with an argument naming ``running`` (a program's base name)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid or (entry / "comm").read_text().strip() in SANDBOX_WRAPPERS:
                continue
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # ended while we looked
            continue
        if any(os.path.basename(argument.decode(errors="replace")) == running for argument in arguments):
            found.append(int(entry.name))
    return found


@contextlib.contextmanager
def killed_from_outside(uid: int, *, once_running: str, kill: str | tuple[str, ...], signal_number: int):
    """Within the block, once ``once_running`` runs as ``uid``, send ``signal_number`` to its ``kill`` processes
    (one program's, or several programs' in the order given)."""
    sent = threading.Event()

    def signalled() -> bool:
        for name in (kill,) if isinstance(kill, str) else kill:
            for pid in processes_of(uid, running=name):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal_number)
                    sent.set()
        return sent.is_set()

    def send() -> None:
        wait_until(lambda: processes_of(uid, running=once_running), timeout=60)
        # Until one is signalled: a process seen a moment ago may have been a short-lived one of the same name.
        wait_until(signalled, timeout=60)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    yield
    sender.join(timeout=60)
    assert sent.is_set(), f"no {kill} process of uid {uid} was there to signal"
