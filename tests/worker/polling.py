"""Waiting for a condition another thread or process brings about, without fixed sleeps."""

import time


def wait_until(condition, timeout: float = 30.0) -> None:
    """Return as soon as ``condition()`` holds; fail the test if it does not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)
