"""bubblewrap's options: namespaces, a read-only view of the system, a bounded /tmp and the run's own binds.

bwrap runs as root without a user namespace (so not ``--unshare-all``, which would add one): inside a user
namespace the command could only be the caller's uid, and root is exempt from RLIMIT_NPROC. The uid switch
comes after, from ``identity.drop_privileges``.
"""

import os
from dataclasses import dataclass
from pathlib import Path

# Merged-/usr systems make these symbolic links into /usr; elsewhere they are directories.
TOP_LEVEL_PATHS = ("/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin")

# The network namespace is what cuts the network (a loopback of its own is all that is left).
_NAMESPACES = ("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try")


@dataclass(frozen=True)
class Bind:
    """A host path made visible inside, at ``inside`` (its own host path when None)."""

    source: Path
    writable: bool = False
    inside: Path | None = None


@dataclass(frozen=True)
class Profile:
    """What a sandboxed command sees: ``system_paths`` read-only (those that exist on this host), the top-level
    links or directories, a fresh /proc, a minimal /dev, a private /tmp of ``tmp_bytes`` and ``binds``."""

    system_paths: tuple[str, ...]
    tmp_bytes: int
    cwd: Path
    binds: tuple[Bind, ...] = ()
    # A session of its own keeps the command off the caller's terminal; a caller that starts the sandbox
    # leading a new session already has that.
    new_session: bool = False

    def visible_roots(self) -> list[Path]:
        """The paths under which a host path is visible inside: the system view's and the binds'."""
        system = [Path(path) for path in (*self.system_paths, *TOP_LEVEL_PATHS) if os.path.lexists(path)]
        return [*system, *(bind.inside or bind.source for bind in self.binds)]


def bwrap_options(profile: Profile) -> list[str]:
    """bwrap's options for ``profile``, ending with ``--``: the command follows."""
    return [
        *_NAMESPACES,
        # Whatever kills bwrap takes the sandbox with it.
        "--die-with-parent",
        *(["--new-session"] if profile.new_session else []),
        *_system_view(profile.system_paths),
        *("--perms", "1777", "--size", str(profile.tmp_bytes), "--tmpfs", "/tmp"),  # noqa: S108 - the sandbox's own
        *(option for bind in profile.binds for option in _bind(bind)),
        *("--chdir", str(profile.cwd), "--"),
    ]


def _system_view(system_paths: tuple[str, ...]) -> list[str]:
    options = []
    for path in TOP_LEVEL_PATHS:
        if os.path.islink(path):
            options += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            options += ["--ro-bind", path, path]
    for path in system_paths:
        if os.path.exists(path):
            options += [*_parent_dirs(Path(path)), "--ro-bind", path, path]
    return [*options, "--proc", "/proc", "--dev", "/dev"]


def _bind(bind: Bind) -> list[str]:
    inside = bind.inside or bind.source
    return [*_parent_dirs(inside), "--bind" if bind.writable else "--ro-bind", str(bind.source), str(inside)]


def _parent_dirs(path: Path) -> list[str]:
    """Options creating ``path``'s ancestors world-traversable; bwrap would make them 0700 for root."""
    options = []
    for parent in reversed(path.parents[:-1]):
        options += ["--perms", "0755", "--dir", str(parent)]
    return options
