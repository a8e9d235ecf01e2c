"""Waking idle acquires when a job becomes claimable: one LISTEN connection per server process.

A background thread holds a dedicated connection listening on the queue
channel and bumps a generation counter on each notification; a waiting
acquire records the generation before it tries to claim and sleeps until it
changes, so a notification between its try and its wait is never lost. If the
listener is disconnected (a database restart), waits fall back to a short
timeout until it reconnects.
"""

import logging
import threading

import psycopg
from django.db import connections

from processing.submission import QUEUE_CHANNEL

logger = logging.getLogger(__name__)

FALLBACK_WAIT_SECONDS = 1.0


class QueueWakeups:
    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._generation = 0
        self._connected = False
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._stop = threading.Event()

    def generation(self) -> int:
        self._ensure_started()
        with self._condition:
            return self._generation

    def wait(self, *, since: int, timeout: float) -> None:
        """Sleep until a notification newer than ``since`` or ``timeout`` seconds pass."""
        with self._condition:
            if not self._connected:
                timeout = min(timeout, FALLBACK_WAIT_SECONDS)
            self._condition.wait_for(lambda: self._generation != since, timeout=timeout)

    def stop(self) -> None:
        """Close the listening connection (tests drop their database afterwards)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._thread = None
        self._stop.clear()

    def _ensure_started(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                params = {
                    key: value
                    for key, value in connections["default"].get_connection_params().items()
                    if key not in ("cursor_factory", "context")  # Django's cursor tuning is not needed here
                }
                self._thread = threading.Thread(target=self._listen_forever, args=(params,), daemon=True)
                self._thread.start()

    def _bump(self) -> None:
        with self._condition:
            self._generation += 1
            self._condition.notify_all()

    def _set_connected(self, connected: bool) -> None:
        with self._condition:
            self._connected = connected
            self._generation += 1  # anyone waiting re-checks the queue after a (re)connect
            self._condition.notify_all()

    def _listen_forever(self, params: dict) -> None:
        backoff = 0.2
        while not self._stop.is_set():
            try:
                with psycopg.connect(**params, autocommit=True) as conn:
                    conn.execute(f"LISTEN {QUEUE_CHANNEL}")
                    self._set_connected(True)
                    backoff = 0.2
                    while not self._stop.is_set():
                        for _ in conn.notifies(timeout=1.0):
                            self._bump()
            except psycopg.Error:
                logger.warning("queue listener disconnected; retrying", exc_info=True)
            self._set_connected(False)
            self._stop.wait(backoff)
            backoff = min(backoff * 2, 5.0)


wakeups = QueueWakeups()
