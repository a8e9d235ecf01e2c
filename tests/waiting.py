"""Waiting for what another thread, process or server brings about: poll the condition, never sleep "long
enough"."""

import time


def wait_until(condition, *, timeout: float = 60.0, what: str = "condition", interval: float = 0.05):
    """Return ``condition()``'s first truthy result; fail the test if none comes within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if result := condition():
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)
