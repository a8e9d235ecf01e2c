"""The processes `make run` starts, each watched: one that dies is started again after a growing pause.

A process that ran for a while before it died starts again after ``BACKOFF_FIRST`` seconds; one that keeps
dying waits twice as long each time, up to ``BACKOFF_MAX``. A process that must not be restarted (the web
server: without it nothing else is reachable, so `make run` stops) is reported once instead.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

BACKOFF_FIRST, BACKOFF_MAX = 1.0, 30.0
STABLE_SECONDS = 60.0  # a process that ran this long is healthy again: its next death waits BACKOFF_FIRST


class Supervised:
    def __init__(self, name: str, command: list[str], *, restart: bool, cwd: Path, first: float = BACKOFF_FIRST):
        self.name, self.command, self.restart, self.cwd = name, command, restart, cwd
        self.first = first
        self.process: subprocess.Popen | None = None
        self.restarts = 0
        self._deaths_in_a_row = 0
        self._started_at = 0.0
        self._start_at = 0.0

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, cwd=self.cwd, start_new_session=True)
        self._started_at = time.monotonic()

    def check(self) -> str | None:
        """Start it again if its pause is over; a message when it died and is not to be restarted."""
        now = time.monotonic()
        if self.process is None:
            if now >= self._start_at:
                self.start()
                self.restarts += 1
            return None
        returncode = self.process.poll()
        if returncode is None:
            if now - self._started_at > STABLE_SECONDS:
                self._deaths_in_a_row = 0
            return None
        if not self.restart:
            return f"{self.name} exited with {returncode}."
        pause = min(BACKOFF_MAX, self.first * 2**self._deaths_in_a_row)
        self._deaths_in_a_row += 1
        print(f"{self.name} exited with {returncode}; starting it again in {pause:g} s.", file=sys.stderr, flush=True)
        self.process, self._start_at = None, now + pause
        return None

    def stop(self, timeout: float = 15) -> None:
        """SIGTERM to its process group, then SIGKILL if it has not ended within ``timeout`` seconds."""
        self.stop_begin()
        self.stop_end(time.monotonic() + timeout)

    def stop_begin(self) -> None:
        """SIGTERM to its process group (several can be stopping at once)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)

    def ended_by(self, deadline: float) -> bool:
        """Whether it has ended by ``deadline`` (a ``time.monotonic()``), waiting until then at most."""
        if self.process is None:
            return True
        try:
            self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return False
        return True

    def stop_end(self, deadline: float) -> None:
        """Wait for it until ``deadline`` (a ``time.monotonic()``), then SIGKILL its process group."""
        if self.process is None:
            return
        try:
            self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def stop_together(children: list[Supervised], *, seconds: float, second_signal_before: float) -> None:
    """Stop ``children`` at once: SIGTERM to all, a second SIGTERM ``second_signal_before`` seconds before the
    deadline to those still running (the worker agent's "stop now and give running claims back"), SIGKILL at
    the deadline to what is left."""
    deadline = time.monotonic() + seconds
    for child in children:
        child.stop_begin()
    for child in children:
        if not child.ended_by(deadline - second_signal_before):
            child.stop_begin()
    for child in children:
        child.stop_end(deadline)
