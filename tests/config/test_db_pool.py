"""Pooled connections are checked on checkout only after sitting idle; a stale one is replaced, not handed out."""

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
    with ConnectionPool(kwargs={**params, "autocommit": True}, min_size=1, max_size=1, open=True, timeout=10,
                        check=db_pool.check_when_idle, reset=db_pool.note_returned) as opened:  # fmt: skip
        yield opened


def test_a_connection_handed_back_moments_ago_is_reused_without_a_check(pool, checks):
    with pool.connection():
        pass
    checked_before = len(checks)

    with pool.connection() as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)

    assert len(checks) == checked_before


def test_a_connection_idle_past_the_threshold_is_checked(pool, checks, monkeypatch):
    with pool.connection():
        pass
    monkeypatch.setattr(db_pool, "CHECK_AFTER_IDLE_SECONDS", -1.0)  # every return is now "long ago"

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
