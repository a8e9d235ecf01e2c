"""Running test steps at the same moment on real, separate database connections."""

import threading
import time

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


def nudged(first, second, round_number: int) -> tuple:
    """The two sides of a race for round ``round_number``: at the same moment, or one of them a little late,
    in turn, so that over the rounds each side gets its chance to win (a race test must see both outcomes)."""
    late = round_number % 3  # 0: together; 1: the first starts late; 2: the second does

    def after(target, delay):
        def run():
            time.sleep(delay)
            target()

        return run

    return (after(first, 0.03 if late == 1 else 0), after(second, 0.03 if late == 2 else 0))


def backend_waiting_on_lock(pid: int) -> bool:
    """Whether the database backend ``pid`` is blocked on a lock right now (PostgreSQL says so, no sleeping)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return bool(row) and row[0] == "Lock"


def a_backend_waiting_on_lock() -> bool:
    """Whether some backend of the test database is blocked on a lock right now. Behind a transaction pooler a
    connection's backend is not known in advance (each transaction may get another), so a test that must see
    its one waiter blocked asks this."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0
