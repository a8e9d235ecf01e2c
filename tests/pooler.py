"""PgBouncer's admin console, as the pooled test mode's tests read it (scripts/pooled_tests.py)."""

import psycopg
from django.db import connection


def pgbouncer_console(command: str) -> list[dict]:
    """The rows of a console command (``SHOW POOLS``, ``SHOW SERVERS``) of the PgBouncer the tests' requests
    go through."""
    params = connection.get_connection_params()
    with (
        psycopg.connect(
            host=params["host"], port=params["port"], user=params["user"], dbname="pgbouncer", autocommit=True
        ) as console,
        console.cursor(row_factory=psycopg.rows.dict_row) as cursor,
    ):
        cursor.execute(command)
        return cursor.fetchall()
