"""Behind a transaction pooler nothing stays prepared on the pooled connections, so a prepared statement that
commits on its own runs on a connection to PostgreSQL itself that the process's small pool lends it
(foundation/database/prepared.py), while one inside a transaction stays on the transaction's connection and sees its
writes. Runs in the pooled test mode (scripts/pooled_tests.py)."""

import pytest
from django.conf import settings
from django.db import connections, transaction
from django.db.utils import OperationalError

from foundation.database.direct import DIRECT
from foundation.database.prepared import prepared_cursor
from foundation.http.errors import database_unreachable
from tests.factories import UserFactory
from tests.pooler import pgbouncer_console

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.TRANSACTION_POOLED, reason="runs in the pooled test mode: scripts/pooled_tests.py"),
]


def pooler_sessions() -> set[int]:
    """The server sessions PgBouncer keeps: their backends' process ids."""
    return {server["remote_pid"] for server in pgbouncer_console("SHOW SERVERS")}


def test_outside_a_transaction_a_prepared_statement_runs_prepared_on_postgresql_itself():
    with prepared_cursor() as cursor:
        (backend,) = cursor.execute("SELECT pg_backend_pid()").fetchone()
        prepared = [
            statement for (statement,) in cursor.execute("SELECT statement FROM pg_prepared_statements").fetchall()
        ]

    assert backend not in pooler_sessions()
    assert "SELECT pg_backend_pid()" in prepared


def test_inside_a_transaction_a_prepared_statement_runs_on_its_connection_and_sees_its_writes():
    with transaction.atomic():
        UserFactory(username="written-in-this-transaction")
        with prepared_cursor() as cursor:
            (backend,) = cursor.execute("SELECT pg_backend_pid()").fetchone()
            (seen,) = cursor.execute(
                "SELECT count(*) FROM auth_user WHERE username = %s", ["written-in-this-transaction"]
            ).fetchone()

        assert seen == 1
        assert backend in pooler_sessions()


def test_a_pool_that_lends_nothing_in_time_is_the_database_out_of_reach():
    direct = connections[DIRECT]
    direct.close_pool()
    pool = direct.pool
    pool.open(wait=True)
    held = [pool.getconn() for _ in range(pool.max_size)]
    pool.timeout = 0.2
    try:
        with pytest.raises(OperationalError) as refused, prepared_cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        for lent in held:
            pool.putconn(lent)
        direct.close_pool()

    assert database_unreachable(refused.value)  # the request answers 503 database_unavailable
