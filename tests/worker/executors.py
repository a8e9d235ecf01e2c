"""A plain-subprocess executor for the processor tests (no sandbox: it says so in its name).

It keeps the promises the processors rely on: its own process group killed as a whole on
timeout or cancellation (SIGTERM, then SIGKILL), rlimits on CPU, address space, file size
and open files, bounded stdout/stderr capture, and a check that the writable directories
stay within the output limit. It cannot confine reads; the bubblewrap executor does.
"""

import contextlib
import os
import resource
import signal
import subprocess
import threading
import time
from pathlib import Path

from quire_worker.contracts import CompletedRun, Limits

KILL_GRACE_SECONDS = 2.0


class SubprocessTestExecutor:
    name = "test-subprocess"
    is_sandbox = False

    def __init__(self):
        self.last_argv: list[str] | None = None
        self.last_readable: list[Path] = []
        self.last_writable: list[Path] = []

    def run(self, argv, *, cwd, writable, readable, env, limits: Limits, cancel: threading.Event) -> CompletedRun:
        self.last_argv, self.last_readable, self.last_writable = list(argv), list(readable), list(writable)
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=lambda: _apply_rlimits(limits),
        )
        stdout, stderr = (
            _BoundedReader(process.stdout, limits.log_bytes),
            _BoundedReader(process.stderr, limits.log_bytes),
        )
        timed_out, cancelled = _wait(process, limits.wall_seconds, cancel)
        _kill_group(process)  # strays (e.g. LibreOffice helpers) die with the child
        stdout.join(), stderr.join()
        return CompletedRun(
            returncode=process.returncode,
            stdout=stdout.data,
            stderr=stderr.data,
            timed_out=timed_out,
            cancelled=cancelled,
            output_limit_exceeded=sum(_tree_bytes(Path(path)) for path in writable) > limits.output_bytes,
        )


def _apply_rlimits(limits: Limits) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.max_open_files, limits.max_open_files))


def _wait(process: subprocess.Popen, wall_seconds: float, cancel: threading.Event) -> tuple[bool, bool]:
    deadline = time.monotonic() + wall_seconds
    while True:
        try:
            process.wait(timeout=0.05)
            return False, False
        except subprocess.TimeoutExpired:
            pass
        if cancel.is_set():
            _stop_group(process)
            return False, True
        if time.monotonic() >= deadline:
            _stop_group(process)
            return True, False


def _stop_group(process: subprocess.Popen) -> None:
    _signal_group(process, signal.SIGTERM)
    try:
        process.wait(timeout=KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGKILL)
        process.wait()


def _kill_group(process: subprocess.Popen) -> None:
    _signal_group(process, signal.SIGKILL)
    process.wait()


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)


def _tree_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file() and not path.is_symlink())


class _BoundedReader:
    """Drains a pipe on its own thread, keeping at most ``limit`` bytes."""

    def __init__(self, pipe, limit: int):
        self.data = b""
        self._thread = threading.Thread(target=self._drain, args=(pipe, limit), daemon=True)
        self._thread.start()

    def _drain(self, pipe, limit: int) -> None:
        kept = bytearray()
        for chunk in iter(lambda: pipe.read(65536), b""):
            kept += chunk[: max(limit - len(kept), 0)]
        pipe.close()
        self.data = bytes(kept)

    def join(self) -> None:
        self._thread.join()
