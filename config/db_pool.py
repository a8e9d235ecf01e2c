"""Pooled connections are checked on checkout only after sitting idle, not on every request.

psycopg's pool check (Django's with ``CONN_HEALTH_CHECKS``) is a round trip on every
checkout: one statement more for every request, a sixth of a worker-protocol request's
statements. A connection taken moments ago is almost surely fine; one that sat idle may
have been cut by a database restart or an idle timeout. So only connections whose last
checkout is more than ``CHECK_AFTER_IDLE_SECONDS`` ago are checked (that span holds the
last use as well as the idle time, so a connection is checked at least as often as by its
idle time alone). A connection broken while briefly idle fails its request, which answers
503 (the worker agent retries it) and psycopg discards the connection when it comes back.

The time is noted by the check itself, at checkout. Noting it when the connection comes
back would need the pool's ``reset`` callback, and with one the pool hands every returned
connection to a worker thread of its own: a thread crossing on every request.
"""

import time
import weakref

from psycopg import Connection
from psycopg_pool import ConnectionPool

CHECK_AFTER_IDLE_SECONDS = 1.0

_taken_at: weakref.WeakKeyDictionary[Connection, float] = weakref.WeakKeyDictionary()


def check_when_idle(connection: Connection) -> None:
    """The pool's ``check`` callback: psycopg's check, for a connection last taken long enough ago to have gone
    stale meanwhile."""
    now = time.monotonic()
    taken = _taken_at.get(connection)
    if taken is None or now - taken > CHECK_AFTER_IDLE_SECONDS:
        ConnectionPool.check_connection(connection)
    _taken_at[connection] = now


def pool_options(*, max_size: int) -> dict:
    """psycopg pool options for Django's ``OPTIONS["pool"]``: no ``reset`` callback (see above)."""
    return {"min_size": 2, "max_size": max_size, "timeout": 10, "check": check_when_idle}
