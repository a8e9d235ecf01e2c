"""The converter's sandbox: what a LibreOffice reading an uploaded document can reach.

The worker's sandbox profile (``quire_sandbox``, its own distribution: sandbox/), for a converter that lives
for many conversions: bubblewrap with mount, pid, network, ipc, uts and cgroup namespaces; the system directories
LibreOffice needs, read-only; a fresh ``/proc``, a minimal ``/dev`` and a bounded private ``/tmp``; the
bridge script alone at a path of its own and the slot's directory (its profile, the source, the PDF)
read-write; nothing else (no checkout, no ``var/``, no home, no ``/etc/passwd``). Inside, ``setpriv``
switches to the slot's own uid, drops every capability and sets no-new-privileges, and ``prlimit`` bounds
address space, CPU seconds (over the converter's lifetime: one that used them up is replaced), open files,
processes (per uid, so per slot) and file size.

Switching to another uid needs root; bubblewrap without a user namespace needs it too (inside one, the
converter could only be the server's own uid). A server that cannot build this sandbox refuses untrusted
conversions unless the operator sets ``OFFICE_ALLOW_UNSANDBOXED`` (foundation/env.py).
"""

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from quire_sandbox import Bind, Profile, Rlimits, bwrap_options, drop_privileges, hand_over, prlimit_options

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
    binds = [
        *([Bind(bridge, inside=Path(BRIDGE_INSIDE))] if bridge else []),
        *([] if directory == Path("/") else [Bind(directory, writable=True)]),
    ]
    # No --new-session: the server stops a slot by signalling its process group, which everything inside must
    # stay in (--die-with-parent covers the rest).
    profile = Profile(SYSTEM_PATHS, tmp_bytes=limits.tmp_bytes, cwd=directory, binds=tuple(binds))
    rlimits = Rlimits(
        address_space_bytes=limits.address_space_bytes,
        cpu_seconds=limits.cpu_seconds,
        file_bytes=limits.file_bytes,
        open_files=limits.open_files,
        processes=limits.processes,
    )
    return ["bwrap", *bwrap_options(profile), *drop_privileges(uid), "prlimit", *prlimit_options(rlimits)]


def directory_hand_over(directory: Path, uid: int) -> None:
    """Give the slot's directory (its profile included) to the slot's uid, and to nobody else; raises OSError."""
    hand_over(directory, uid, uid)
    directory.chmod(0o700)
