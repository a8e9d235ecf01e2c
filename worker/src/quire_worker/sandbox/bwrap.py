"""The production executor: bubblewrap namespaces, a uid of the job's own, rlimits, a bounded /tmp.

Layout inside the sandbox: the system directories a TeX toolchain needs, read-only; a fresh
/proc and a minimal /dev; a private tmpfs /tmp of ``Limits.tmp_bytes``; the job's readable
directories read-only and its writable directories read-write, each at its host path; nothing
else (no /home, no /root, no /etc/passwd, no agent files). Namespaces: mount, pid, network
(only a loopback of its own), ipc, uts and cgroup.

The profile itself, and why bwrap runs as root without a user namespace with ``setpriv`` switching
to the job's uid before ``prlimit`` applies the limits, is ``quire_sandbox``'s, shared with Core's
Office converter; this executor chooses what the job sees and which uid it gets, and proves the
sandbox was set up before it trusts the command's exit.
"""

import contextlib
import dataclasses
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

from quire_sandbox import Bind, Profile, bwrap_options, drop_privileges, hand_over
from quire_worker.contracts import CompletedRun, ExecutorError, Limits
from quire_worker.sandbox.rlimits import rlimit_prefix
from quire_worker.sandbox.supervision import resolve_program, spawn, supervise
from quire_worker.sandbox.uids import DEFAULT_SANDBOX_UIDS, SandboxUidPool

# Read-only system paths: binaries and libraries, the dynamic linker cache, the alternatives
# symlinks (bibtex, awk), Perl's configuration (latexmk, biber), TeX Live's configuration and
# generated formats, and fontconfig with its cache (so XeTeX does not rescan every font).
SYSTEM_PATHS = (
    "/usr",
    "/etc/alternatives",
    "/etc/fonts",
    "/etc/ld.so.cache",
    "/etc/papersize",
    "/etc/perl",
    "/etc/texmf",
    "/var/cache/fontconfig",
    "/var/lib/texmf",
)


class BwrapExecutor:
    name = "bwrap"
    is_sandbox = True

    def __init__(self, *, uids: range = DEFAULT_SANDBOX_UIDS, system_paths: tuple[str, ...] = SYSTEM_PATHS):
        self.uid_pool = SandboxUidPool(uids)
        self.system_paths = tuple(path for path in system_paths if os.path.exists(path))

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
        """Run ``argv`` in a fresh sandbox; ExecutorError when the sandbox cannot be set up."""
        argv = resolve_program(argv, env)
        profile = self._profile(cwd=cwd, writable=writable, readable=readable, limits=limits)
        _check_visible(argv[0], profile)
        with self.uid_pool.lease() as uid, _handed_to(uid, writable):
            prefix = [
                bwrap_program(),
                *bwrap_options(profile),
                *drop_privileges(uid, program=shutil.which("setpriv", path="/usr/bin:/bin") or "setpriv"),
                *rlimit_prefix(limits, bound_processes=True),
            ]
            run, started = _run_announcing_start(prefix, argv, env=env, limits=limits, cancel=cancel, watched=writable)
        if not started:
            stderr = run.stderr.decode(errors="replace").strip()
            raise ExecutorError(f"bubblewrap could not set up the sandbox: {stderr}")
        return _with_signal_status(run)

    def _profile(self, *, cwd: Path, writable: list[Path], readable: list[Path], limits: Limits) -> Profile:
        binds = [*(Bind(path) for path in readable), *(Bind(path, writable=True) for path in writable)]
        # The job's directories at their host paths, so the paths in its logs mean the same outside.
        return Profile(self.system_paths, tmp_bytes=limits.tmp_bytes, cwd=cwd, binds=tuple(binds), new_session=True)


def bwrap_program() -> str:
    program = shutil.which("bwrap")
    if program is None:
        raise ExecutorError("bubblewrap (bwrap) is not installed on this worker")
    return program


def _check_visible(program: str, profile: Profile) -> None:
    if not any(Path(program).is_relative_to(root) for root in profile.visible_roots()):
        raise ExecutorError(f"{program} is outside the sandbox's view of the system")


def _run_announcing_start(
    prefix: list[str],
    argv: list[str],
    *,
    env: dict[str, str],
    limits: Limits,
    cancel: threading.Event,
    watched: list[Path],
) -> tuple[CompletedRun, bool]:
    """Run ``prefix`` + ``argv`` and tell whether ``argv`` was reached.

    Between the two, a shell writes "started" to a pipe, closes it, and executes ``argv``. It
    runs after the uid switch and the limits, so the word means the sandbox is set up (bwrap's
    own status reports come before its set-up and cannot tell). ``argv`` never holds the pipe,
    so it cannot fake the word.
    """
    started_read, started_write = os.pipe()
    try:
        try:
            process = spawn(
                [*prefix, *_announce_start(started_write), *argv],
                cwd=Path("/"),
                env=env,
                pass_fds=(started_write,),
            )
        finally:
            os.close(started_write)
        run = supervise(process, limits=limits, cancel=cancel, watched=watched)
        # Non-blocking: bwrap's reaper inside the sandbox may still hold the write end.
        os.set_blocking(started_read, False)
        try:
            return run, os.read(started_read, len(b"started")) == b"started"
        except BlockingIOError:
            return run, False
    finally:
        os.close(started_read)


def _with_signal_status(run: CompletedRun) -> CompletedRun:
    """``run`` with a death by signal n reported as -n, as ``subprocess`` reports it for the local executor.

    bwrap waits for the command itself and exits with 128 + n when a signal killed it, so the
    signal (SIGXCPU, SIGXFSZ, SIGKILL) would otherwise read as an ordinary failing exit. A command
    exiting with 129-255 on its own reads as killed too: bwrap gives no way to tell them apart.
    """
    if run.returncode is not None and run.returncode > 128:
        return dataclasses.replace(run, returncode=-(run.returncode - 128))
    return run


def _announce_start(fd: int) -> list[str]:
    bash = shutil.which("bash", path="/usr/bin:/bin") or "bash"
    env = shutil.which("env", path="/usr/bin:/bin") or "env"
    # bash exports a SHLVL of its own even through exec; env drops it again, so the command's
    # environment is exactly the caller's.
    script = f'printf started >&"$1" && eval "exec $1>&-" && shift && exec {env} -u SHLVL -- "$@"'
    return [bash, "-c", script, "quire-sandbox", str(fd)]


@contextlib.contextmanager
def _handed_to(uid: int, roots: list[Path]) -> Iterator[None]:
    """Own ``roots`` by the sandbox uid for the run, then give them back to their owners."""
    owners = [(root, root.stat()) for root in roots]
    try:
        for root in roots:
            hand_over(root, uid, uid)
    except OSError as exc:
        raise ExecutorError(f"could not hand the job's directories to sandbox uid {uid}: {exc}") from exc
    try:
        yield
    finally:
        for root, stat in owners:
            hand_over(root, stat.st_uid, stat.st_gid)


def sandbox_self_check() -> str | None:
    """Why bubblewrap sandboxes cannot run on this host, in words for an operator; None when they can."""
    if os.geteuid() != 0:
        return (
            "the bubblewrap sandbox gives every job its own uid and so needs the agent to run as root; "
            "run it as root, or use the local executor for trusted development only"
        )
    try:
        run = BwrapExecutor().run(
            ["true"],
            cwd=Path("/"),
            writable=[],
            readable=[],
            env={},
            limits=Limits(),
            cancel=threading.Event(),
        )
    except ExecutorError as exc:
        return f"bubblewrap cannot create its namespaces on this host: {exc}"
    if run.returncode != 0:
        stderr = run.stderr.decode(errors="replace").strip()
        return f"a trivial command failed inside the bubblewrap sandbox (exit {run.returncode}): {stderr}"
    return None
