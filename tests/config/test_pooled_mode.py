"""In the pooled test mode (scripts/pooled_tests.py) the tests' requests really go through PgBouncer in
transaction mode: its console lists the test database's pool, and the listening connections do not use it."""

import pytest
from django.conf import settings
from django.db import connection

from foundation.database.direct import direct_connection_params
from tests.pooler import pgbouncer_console

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not settings.TRANSACTION_POOLED, reason="runs in the pooled test mode: scripts/pooled_tests.py"),
]


def test_requests_go_through_pgbouncer_in_transaction_mode_and_listeners_to_postgresql_itself():
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        database = cursor.fetchone()[0]

    pools = [pool for pool in pgbouncer_console("SHOW POOLS") if pool["database"] == database]

    assert [pool["pool_mode"] for pool in pools] == ["transaction"]
    assert direct_connection_params()["host"] != connection.get_connection_params()["host"]
