"""The converter's sandbox: what a LibreOffice reading an uploaded document can reach.

The TeX sandbox's profile (worker/src/quire_worker/sandbox/bwrap.py), for a converter that lives for many
conversions: bubblewrap with mount, pid, network, ipc, uts and cgroup namespaces; the system directories
LibreOffice needs, read-only; a fresh ``/proc``, a minimal ``/dev`` and a bounded private ``/tmp``; the
bridge script alone at a path of its own and the slot's directory (its profile, the source, the PDF)
read-write; nothing else (no checkout, no ``var/``, no home, no ``/etc/passwd``). Inside, ``setpriv``
switches to the slot's own uid, drops every capability and sets no-new-privileges, and ``prlimit`` bounds
address space, CPU seconds (over the converter's lifetime: one that used them up is replaced), open files,
processes (per uid, so per slot) and file size.

Switching to another uid needs root; bubblewrap without a user namespace needs it too (inside one, the
converter could only be the server's own uid). A server that cannot build this sandbox refuses untrusted
conversions unless the operator sets ``OFFICE_ALLOW_UNSANDBOXED`` (config/env.py).

Core never imports the worker's distribution, so the few lines that lay out the read-only system view are
written here again rather than shared.
"""

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

MiB = 1024 * 1024

# Read-only system paths: binaries and libraries (LibreOffice, python3-uno, fonts under /usr/share), the
# dynamic linker cache, the alternatives symlinks, fontconfig with its cache, LibreOffice's own /etc.
SYSTEM_PATHS = (
    "/usr",
    "/etc/alternatives",
    "/etc/fonts",
    "/etc/ld.so.cache",
    "/etc/libreoffice",
    "/var/cache/fontconfig",
)
# Merged-/usr systems make these symbolic links into /usr; elsewhere they are directories.
TOP_LEVEL_PATHS = ("/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin")
# The bridge script, alone: the checkout it comes from stays out of sight.
BRIDGE_INSIDE = "/opt/quire-office/uno_bridge.py"


@dataclass(frozen=True)
class SandboxLimits:
    address_space_bytes: int = 8192 * MiB  # LibreOffice maps ~2 GiB of address space at rest
    cpu_seconds: int = 900  # per converter lifetime
    open_files: int = 1024
    processes: int = 512  # threads count: LibreOffice runs dozens
    file_bytes: int = 512 * MiB
    tmp_bytes: int = 256 * MiB


def sandbox_unavailable_reason() -> str | None:
    """Why this server cannot build the converter's sandbox, or None when it can (probed with ``true``)."""
    if os.geteuid() != 0:
        return "the server does not run as root, so its converters cannot have a uid of their own"
    for program in ("bwrap", "setpriv", "prlimit"):
        if shutil.which(program) is None:
            return f"{program} is not installed"
    probe = [*sandbox_prefix(Path("/"), uid=_PROBE_UID, limits=SandboxLimits(), bridge=None), "true"]
    try:
        run = subprocess.run(probe, capture_output=True, timeout=10, check=False)  # noqa: S603  fixed arguments
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start: {exc}"
    if run.returncode != 0:
        return f"bubblewrap refused: {run.stderr.decode(errors='replace').strip()}"
    return None


_PROBE_UID = 65534


def sandbox_prefix(directory: Path, *, uid: int, limits: SandboxLimits, bridge: Path | None) -> list[str]:
    """The command prefix that runs the rest of an argv in the slot's sandbox, as ``uid``."""
    return [
        "bwrap",
        *("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"),
        "--die-with-parent",  # the server's SIGKILL of the slot's group takes everything inside with it
        *_system_view(),
        *("--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"),  # noqa: S108  its own
        *([*_parent_dirs(Path(BRIDGE_INSIDE)), "--ro-bind", str(bridge), BRIDGE_INSIDE] if bridge else []),
        *([] if directory == Path("/") else [*_parent_dirs(directory), "--bind", str(directory), str(directory)]),
        *("--chdir", str(directory), "--"),
        *("setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"),
        *("--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"),
        *("prlimit", f"--as={limits.address_space_bytes}", f"--cpu={limits.cpu_seconds}"),
        *(f"--nofile={limits.open_files}", f"--nproc={limits.processes}", f"--fsize={limits.file_bytes}", "--"),
    ]


def directory_hand_over(directory: Path, uid: int) -> None:
    """Give the slot's directory (its profile included) to the slot's uid, and to nobody else."""
    for root, directories, files in os.walk(directory):
        for name in (root, *(os.path.join(root, entry) for entry in (*directories, *files))):
            os.chown(name, uid, uid)
    directory.chmod(0o700)


def _system_view() -> list[str]:
    options = []
    for path in TOP_LEVEL_PATHS:
        if os.path.islink(path):
            options += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            options += ["--ro-bind", path, path]
    for path in SYSTEM_PATHS:
        if os.path.exists(path):
            options += [*_parent_dirs(Path(path)), "--ro-bind", path, path]
    return [*options, "--proc", "/proc", "--dev", "/dev"]


def _parent_dirs(path: Path) -> list[str]:
    """Options creating ``path``'s ancestors world-traversable; bwrap would make them 0700 for root."""
    options = []
    for parent in reversed(path.parents[:-1]):
        options += ["--perms", "0755", "--dir", str(parent)]
    return options
