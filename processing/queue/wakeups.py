"""Wake-ups from PostgreSQL NOTIFY: one LISTEN connection per server process.

Three channels. The queue channel (a job became claimable) bumps a generation
counter: a waiting acquire records the generation before it tries to claim and
sleeps until it changes, so a notification between its try and its wait is
never lost. The job-ended channel (payload: the job id, sent by a trigger when
a job's terminal commit is inserted) wakes the requests watching that job; a
watch is registered before the job is read, for the same reason. The
cancellation channel (payload: the session id holding a running claim whose
cancellation was just requested, sent by ``job_cancel_by_operator``) wakes that
session's cancellation long-poll the same way.

If the listener is disconnected (a database restart), waits fall back to a
short timeout until it reconnects, and a reconnect wakes every waiter.
"""

import logging
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

import psycopg

from foundation.database.direct import direct_connection_params
from processing.kernel.notify import QUEUE_CHANNEL

logger = logging.getLogger(__name__)

JOB_ENDED_CHANNEL = "quire_job_ended"  # the trigger of migration 0004 notifies here
CANCELLATION_CHANNEL = "quire_cancellation_requested"
WATCHED_CHANNELS = (JOB_ENDED_CHANNEL, CANCELLATION_CHANNEL)  # their payload names what a watch waits for
FALLBACK_WAIT_SECONDS = 1.0


class Watch:
    """Woken by a notification naming its key (or a reconnect of the listener, after which what it watches must
    be read again)."""

    def __init__(self, wakeups: "Wakeups") -> None:
        self._wakeups = wakeups
        self.woken = False

    def wait(self, timeout: float) -> bool:
        """Sleep until woken or ``timeout`` seconds pass; returns whether it was woken."""
        with self._wakeups.condition:
            woken = self._wakeups.wait_locked(lambda: self.woken, timeout)
            self.woken = False
            return woken


class Wakeups:
    def __init__(self) -> None:
        self.condition = threading.Condition()
        self.connected = False
        # (pid, backend_start) of the listening connection's backend while connected: it lives exactly as long
        # as this process keeps the connection, so other processes can tell this one is alive (replay's holder).
        self.backend: tuple[int, object] | None = None
        self._generation = 0
        self._watches: dict[tuple[str, str], list[Watch]] = {}
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._stop = threading.Event()

    def generation(self) -> int:
        self._ensure_started()
        with self.condition:
            return self._generation

    def wait(self, *, since: int, timeout: float) -> None:
        """Sleep until a queue notification newer than ``since`` or ``timeout`` seconds pass."""
        with self.condition:
            self.wait_locked(lambda: self._generation != since, timeout)

    def wait_locked(self, predicate, timeout: float) -> bool:
        """Holding ``condition``: wait for ``predicate``; a disconnected listener wakes nobody, so wait less."""
        if not self.connected:
            timeout = min(timeout, FALLBACK_WAIT_SECONDS)
        return self.condition.wait_for(predicate, timeout=timeout)

    def job_watch(self, job_id) -> AbstractContextManager[Watch]:
        """Watch ``job_id`` for its end; register before reading the job, wait after."""
        return self._watch(JOB_ENDED_CHANNEL, job_id)

    def cancellation_watch(self, session_id) -> AbstractContextManager[Watch]:
        """Watch ``session_id`` for cancellations of its claims; register before reading them, wait after."""
        return self._watch(CANCELLATION_CHANNEL, session_id)

    def is_watched(self, key, channel: str = JOB_ENDED_CHANNEL) -> bool:
        with self.condition:
            return (channel, str(key)) in self._watches

    @contextmanager
    def _watch(self, channel: str, key) -> Iterator[Watch]:
        self._ensure_started()
        watch, watched = Watch(self), (channel, str(key))
        with self.condition:
            self._watches.setdefault(watched, []).append(watch)
        try:
            yield watch
        finally:
            with self.condition:
                watches = self._watches[watched]
                watches.remove(watch)
                if not watches:
                    del self._watches[watched]

    def listening(self, *, timeout: float) -> bool:
        """Whether this process's listener is connected, starting it if it has not been, waiting up to
        ``timeout`` for it to connect (a replica's health check: without it, waits only poll)."""
        self._ensure_started()
        with self.condition:
            return self.condition.wait_for(lambda: self.connected, timeout=timeout)

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
                params = self.listener_connection_params()
                self._thread = threading.Thread(target=self._listen_forever, args=(params,), daemon=True)
                self._thread.start()

    @staticmethod
    def listener_connection_params() -> dict:
        """Where the listener connects: PostgreSQL itself (``DATABASE_DIRECT_URL``, else Django's database)."""
        return direct_connection_params()

    def _notified(self, channel: str, payload: str) -> None:
        with self.condition:
            if channel in WATCHED_CHANNELS:
                for watch in self._watches.get((channel, payload), ()):
                    watch.woken = True
            else:
                self._generation += 1
            self.condition.notify_all()

    def _set_connected(self, connected: bool) -> None:
        with self.condition:
            self.connected = connected
            # Anyone waiting looks again after a (re)connect: notifications may have been missed.
            self._generation += 1
            for watches in self._watches.values():
                for watch in watches:
                    watch.woken = True
            self.condition.notify_all()

    def _listen_forever(self, params: dict) -> None:
        backoff = 0.2
        while not self._stop.is_set():
            try:
                with psycopg.connect(**params, autocommit=True) as conn:
                    conn.execute(f"LISTEN {QUEUE_CHANNEL}")
                    for channel in WATCHED_CHANNELS:
                        conn.execute(f"LISTEN {channel}")
                    self.backend = conn.execute(
                        "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
                    ).fetchone()
                    self._set_connected(True)
                    backoff = 0.2
                    while not self._stop.is_set():
                        for notice in conn.notifies(timeout=1.0):
                            self._notified(notice.channel, notice.payload)
            except psycopg.Error:
                logger.warning("notification listener disconnected; retrying", exc_info=True)
            self.backend = None
            self._set_connected(False)
            self._stop.wait(backoff)
            backoff = min(backoff * 2, 5.0)


wakeups = Wakeups()
