"""Start a command in its own session and watch it: wall clock, cancellation, output volume.

Both executors share this. The command leads a new session (so a new process group); every
stop signal goes to the whole group, because killing only the direct child (``latexmk``)
would leave the TeX engine it started running.
"""

import contextlib
import logging
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from quire_worker.contracts import CompletedRun, ExecutorError, Limits
from quire_worker.sandbox.proc import processes_in_group
from quire_worker.truncation import HeadTailBuffer

logger = logging.getLogger(__name__)

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
POLL_SECONDS = 0.05
WRITE_CHECK_SECONDS = 0.25
# A run is stopped only when its result is no longer wanted (cancelled, or past a bound), so SIGTERM's grace is
# for a tidy exit and nothing more; bwrap, latexmk and TeX all exit on SIGTERM at once (measured: ~1 ms for bwrap,
# ~15 ms for latexmk and TeX under the local executor), and a command that ignores it only delays the cancel.
TERM_GRACE_SECONDS = 0.5
# After the command exits, stragglers that escaped its group may keep the pipes open.
DRAIN_SECONDS = 1.0
READ_CHUNK_BYTES = 64 * 1024
GROUP_EXIT_SECONDS = 5.0
# Every file or directory costs at least a block and an inode, so a flood of empty files counts too.
MIN_ENTRY_BYTES = 4096


def resolve_program(argv: list[str], env: dict[str, str]) -> list[str]:
    """``argv`` with its program made absolute along ``env``'s PATH; ExecutorError if it is not installed."""
    program = shutil.which(argv[0], path=env.get("PATH", DEFAULT_PATH))
    if program is None:
        raise ExecutorError(f"{argv[0]} is not installed on this worker")
    return [program, *argv[1:]]


def spawn(argv: list[str], *, cwd: Path, env: dict[str, str], pass_fds: tuple[int, ...] = ()) -> subprocess.Popen:
    """Start ``argv`` leading a new session, with only ``env`` as its environment and no stdin."""
    try:
        return subprocess.Popen(  # noqa: S603 - argv is built by the executor, never by a shell
            argv,
            cwd=cwd,
            env={"PATH": DEFAULT_PATH, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=pass_fds,
        )
    except OSError as exc:
        raise ExecutorError(f"could not start {argv[0]}: {exc}") from exc


def supervise(
    process: subprocess.Popen, *, limits: Limits, cancel: threading.Event, watched: list[Path]
) -> CompletedRun:
    """Collect ``process``'s output until its group is gone, stopping it when a bound is crossed."""
    return _Supervision(process, limits=limits, cancel=cancel, watched=watched).run()


def disk_usage_bytes(roots: list[Path]) -> int:
    """Bytes held by everything under ``roots``, without following symbolic links."""
    total = 0
    pending = [str(root) for root in roots]
    while pending:
        try:
            entries = os.scandir(pending.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    stat = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += max(stat.st_blocks * 512, MIN_ENTRY_BYTES)
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return total


class _Supervision:
    def __init__(self, process: subprocess.Popen, *, limits: Limits, cancel: threading.Event, watched: list[Path]):
        self.process = process
        self.limits = limits
        self.cancel = cancel
        self.watched = watched
        self.stdout = HeadTailBuffer(limits.log_bytes)
        self.stderr = HeadTailBuffer(limits.log_bytes)
        self.deadline = time.monotonic() + limits.wall_seconds
        self.disk_baseline = disk_usage_bytes(watched)
        self.next_disk_check = 0.0
        self.stop_reason: str | None = None
        self.kill_at: float | None = None
        self.exited_at: float | None = None

    def run(self) -> CompletedRun:
        # A pidfd becomes readable when the command exits, so the loop wakes at once for that too.
        exit_notice = os.pidfd_open(self.process.pid)
        try:
            self._collect_until_gone(exit_notice)
        finally:
            os.close(exit_notice)
        # The leader is still a zombie here, so its group id cannot have been reused yet.
        self._signal_group(signal.SIGKILL)
        self._await_group_gone()
        self.process.stdout.close()
        self.process.stderr.close()
        self.process.wait()
        return CompletedRun(
            returncode=self.process.returncode,
            stdout=self.stdout.value(),
            stderr=self.stderr.value(),
            timed_out=self.stop_reason == "timeout",
            cancelled=self.stop_reason == "cancel",
            output_limit_exceeded=self.stop_reason == "output",
        )

    def _collect_until_gone(self, exit_notice: int) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ, self.stdout)
            selector.register(self.process.stderr, selectors.EVENT_READ, self.stderr)
            selector.register(exit_notice, selectors.EVENT_READ, None)
            while (selector.get_map() or self.exited_at is None) and not self._drain_expired():
                self._enforce_bounds()
                for key, _ in selector.select(POLL_SECONDS):
                    self._read(selector, key)
                self._notice_exit()

    def _read(self, selector: selectors.BaseSelector, key: selectors.SelectorKey) -> None:
        if key.data is None:  # the exit notice: it stays readable, so it has said all it can
            selector.unregister(key.fileobj)
            return
        chunk = os.read(key.fd, READ_CHUNK_BYTES)
        if chunk:
            key.data.append(chunk)
        else:
            selector.unregister(key.fileobj)

    def _enforce_bounds(self) -> None:
        now = time.monotonic()
        if self.stop_reason is None:
            reason = self._crossed_bound(now)
            if reason == "cancel":
                self._stop(reason, signal.SIGTERM, kill_at=now + TERM_GRACE_SECONDS)
            elif reason is not None:
                self._stop(reason, signal.SIGKILL, kill_at=None)
        if self.kill_at is not None and now >= self.kill_at:
            self._signal_group(signal.SIGKILL)
            self.kill_at = None

    def _crossed_bound(self, now: float) -> str | None:
        if self.cancel.is_set():
            return "cancel"
        if now >= self.deadline:
            return "timeout"
        if self.stdout.total_bytes + self.stderr.total_bytes > self.limits.output_bytes:
            return "output"
        if self.watched and now >= self.next_disk_check:
            self.next_disk_check = now + WRITE_CHECK_SECONDS
            if disk_usage_bytes(self.watched) - self.disk_baseline > self.limits.output_bytes:
                return "output"
        return None

    def _stop(self, reason: str, first_signal: signal.Signals, *, kill_at: float | None) -> None:
        logger.info("sandboxed command stopped reason=%s pid=%s", reason, self.process.pid)
        self.stop_reason = reason
        self.kill_at = kill_at
        self._signal_group(first_signal)

    def _notice_exit(self) -> None:
        if self.exited_at is not None:
            return
        # WNOWAIT leaves the leader unreaped: its pid keeps naming our group until the end.
        exited = os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if exited is not None:
            self.exited_at = time.monotonic()
            # Whatever the command left running in its group goes with it.
            self._signal_group(signal.SIGKILL)

    def _drain_expired(self) -> bool:
        return self.exited_at is not None and time.monotonic() > self.exited_at + DRAIN_SECONDS

    def _await_group_gone(self) -> None:
        """Return once every process of the group has died; SIGKILL takes effect asynchronously."""
        deadline = time.monotonic() + GROUP_EXIT_SECONDS
        while survivors := [pid for pid in processes_in_group(self.process.pid) if pid != self.process.pid]:
            if time.monotonic() > deadline:
                logger.warning("processes outlive their killed group pgid=%s pids=%s", self.process.pid, survivors)
                return
            time.sleep(0.01)

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)
