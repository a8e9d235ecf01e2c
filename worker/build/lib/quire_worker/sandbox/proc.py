"""Finding a job's processes in /proc: by the uid it ran as, or by its process group.

Zombies are left out: they hold no resources but a pid, and one orphaned under an init
that does not reap stays a zombie for good.
"""

import os


def processes_of_uid(uid: int) -> list[int]:
    """Live processes whose real uid is ``uid``."""
    real_uid = f"\nUid:\t{uid}\t".encode()
    return [pid for pid, status in _each("status") if real_uid in status and b"\nState:\tZ" not in status]


def processes_in_group(pgid: int) -> list[int]:
    """Live processes in process group ``pgid``."""
    pids = []
    for pid, stat in _each("stat"):
        # "pid (command) state ppid pgrp ...": the command may hold spaces and parentheses.
        state, _, group = stat[stat.rindex(b")") + 2 :].split(b" ", 3)[:3]
        if int(group) == pgid and state != b"Z":
            pids.append(pid)
    return pids


def _each(name: str):
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/{name}", "rb") as file:
                yield int(entry), file.read()
        except OSError:
            continue  # gone meanwhile
