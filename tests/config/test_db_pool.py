"""Pooled connections are checked on checkout only after sitting idle; a stale one is replaced, not handed out;
a returned connection goes back on the returning thread."""

import pytest
from django.db import connection
from psycopg_pool import ConnectionPool

from config import db_pool

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def checks(monkeypatch) -> list:
    """Every check round trip the pool makes."""
    made = []
    original = ConnectionPool.check_connection

    def counted(conn):
        made.append(conn)
        original(conn)

    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(counted))
    return made


@pytest.fixture
def pool():
    params = {k: v for k, v in connection.get_connection_params().items() if k not in ("cursor_factory", "context")}
    options = {**db_pool.pool_options(max_size=1), "min_size": 1}
    with ConnectionPool(kwargs={**params, "autocommit": True}, open=True, **options) as opened:
        yield opened


def test_a_connection_taken_moments_ago_is_reused_without_a_check(pool, checks):
    with pool.connection():
        pass
    checked_before = len(checks)

    with pool.connection() as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)

    assert len(checks) == checked_before


def test_a_connection_idle_past_the_threshold_is_checked(pool, checks, monkeypatch):
    with pool.connection():
        pass
    monkeypatch.setattr(db_pool, "CHECK_AFTER_IDLE_SECONDS", -1.0)  # every checkout is now "long ago"

    with pool.connection():
        pass

    assert len(checks) >= 1


def test_a_connection_cut_while_idle_is_replaced_rather_than_handed_out(pool, monkeypatch):
    with pool.connection() as conn:
        cut_pid = conn.info.backend_pid
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [cut_pid])
    monkeypatch.setattr(db_pool, "CHECK_AFTER_IDLE_SECONDS", -1.0)

    with pool.connection() as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert conn.info.backend_pid != cut_pid


def test_a_returned_connection_is_not_handed_to_the_pools_worker_thread(pool, monkeypatch):
    """With a ``reset`` callback the pool returns every connection through a task on its own thread."""
    tasks = []
    original = ConnectionPool.run_task

    def recorded(self, task):
        tasks.append(type(task).__name__)
        original(self, task)

    monkeypatch.setattr(ConnectionPool, "run_task", recorded)

    for _ in range(3):
        with pool.connection() as conn:
            conn.execute("SELECT 1")

    assert "ReturnConnection" not in tasks
