"""Running test steps at the same moment on real, separate database connections."""

import threading

import psycopg
from django.db import connection


def separate_connection(**kwargs) -> psycopg.Connection:
    """A psycopg connection of its own to the test database, outside Django's (``with`` closes it)."""
    params = {k: v for k, v in connection.get_connection_params().items() if k not in ("cursor_factory", "context")}
    return psycopg.connect(**params, **kwargs)


def run_together(*targets) -> list[BaseException]:
    """Start every target behind one barrier, each on its own thread (and connection); return their errors."""
    start = threading.Barrier(len(targets))
    errors: list[BaseException] = []

    def run(target):
        try:
            start.wait()
            target()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def backend_waiting_on_lock(pid: int) -> bool:
    """Whether the database backend ``pid`` is blocked on a lock right now (PostgreSQL says so, no sleeping)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return bool(row) and row[0] == "Lock"
