"""Who the sandboxed command is: a uid of its own, no groups, no capabilities, no way to gain privileges.

A uid per run because RLIMIT_NPROC, the only process bound that needs neither cgroups nor a user namespace,
is counted per real uid across the whole host: with a uid of its own the count is exactly the run's processes.
Switching uid needs root, which is why bwrap runs without a user namespace (``profile``).
"""

import os
from pathlib import Path


def drop_privileges(uid: int, *, program: str = "setpriv") -> list[str]:
    """setpriv's argv prefix that runs the rest as ``uid`` (and gid), with no groups and no capabilities."""
    return [
        program,
        *(f"--reuid={uid}", f"--regid={uid}", "--clear-groups"),
        *("--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"),
    ]


def hand_over(root: Path, uid: int, gid: int) -> None:
    """Make ``root`` and everything under it owned by ``uid``:``gid``; raises OSError.

    Never follows links, not even half-way: a sandbox that wrote under ``root`` may have planted one
    pointing anywhere on the host. fwalk holds each directory open, so swapping a directory for a link
    mid-walk cannot redirect it.
    """
    os.chown(root, uid, gid, follow_symlinks=False)  # the root itself is out of the sandbox's reach
    for _, dirnames, filenames, directory_fd in os.fwalk(root, follow_symlinks=False):
        for name in (*dirnames, *filenames):
            os.chown(name, uid, gid, dir_fd=directory_fd, follow_symlinks=False)
