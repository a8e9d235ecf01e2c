"""Pooled connections are checked on checkout only after sitting idle, not on every request.

psycopg's pool check (Django's with ``CONN_HEALTH_CHECKS``) is a round trip on every
checkout: one statement more for every request, a sixth of a worker-protocol request's
statements. A connection handed back moments ago is almost surely fine; one that sat idle
may have been cut by a database restart or an idle timeout. So only connections idle for
longer than ``CHECK_AFTER_IDLE_SECONDS`` are checked. A connection broken while briefly
idle fails its request, which answers 503 (the worker agent retries it) and psycopg discards
the connection when it comes back.
"""

import time
import weakref

from psycopg import Connection
from psycopg_pool import ConnectionPool

CHECK_AFTER_IDLE_SECONDS = 1.0

_returned_at: weakref.WeakKeyDictionary[Connection, float] = weakref.WeakKeyDictionary()


def note_returned(connection: Connection) -> None:
    """The pool's ``reset`` callback: when the connection came back."""
    _returned_at[connection] = time.monotonic()


def check_when_idle(connection: Connection) -> None:
    """The pool's ``check`` callback: psycopg's check, for a connection idle long enough to have gone stale."""
    returned = _returned_at.get(connection)
    if returned is None or time.monotonic() - returned > CHECK_AFTER_IDLE_SECONDS:
        ConnectionPool.check_connection(connection)
